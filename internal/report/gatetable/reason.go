package gatetable

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Reason writes a gate's reason (outcome.Gate.Why) as the sentence every
// report shows and the JSON "reason" holds: its clauses joined by "; ".
func Reason(why []outcome.Clause) string {
	parts := make([]string, 0, len(why))
	for _, c := range why {
		parts = append(parts, clause(c))
	}
	return strings.Join(parts, "; ")
}

// LocaleIndicative qualifies every per-locale figure and gate that is no
// paired test: the locale deltas, a per-locale floor, a per-locale churn gate
// and the churn's figures by locale (checkreport.IndicativeOnly is it).
const LocaleIndicative = "indicative only, not significance-tested"

// IndicativeOnly is the clause of every per-locale floor.
const IndicativeOnly = "per-locale floor: " + LocaleIndicative

// IndicativeChurn is the clause of every per-locale churn gate (--min-rbo,
// --max-churn): a threshold on what the locale's cases did, as a floor is.
const IndicativeChurn = "per-locale churn gate: " + LocaleIndicative

// IndicativeLocaleRegression is the clause of every per-locale regression gate.
const IndicativeLocaleRegression = "per-locale regression gate: indicative only (a locale's n is small, and its paired test is corrected only for the other per-group regression gates set, not for every locale)"

// ANNRecallAt names the exact check's figure by the depth it is measured at:
// "recall@50" when every exact list held the asked entries, else the depth of
// the lists (the shortest to the longest), the depth asked beside it:
// "recall@12–14 (50 asked; the store holds fewer records a query can match)".
// A query's recall over a list shorter than the depth asked is recall at that
// length, not at the depth. measured {0, 0} (no query checked) is the asked.
func ANNRecallAt(asked int64, measured [2]int64) string {
	lo, hi := measured[0], measured[1]
	if hi == 0 || (lo == asked && hi == asked) {
		return fmt.Sprintf("recall@%d", asked)
	}
	at := strconv.FormatInt(lo, 10)
	if hi != lo {
		at += "–" + strconv.FormatInt(hi, 10)
	}
	return fmt.Sprintf("recall@%s (%d asked; the store holds fewer records a query can match)", at, asked)
}

func clause(c outcome.Clause) string {
	power := func() string {
		return fmt.Sprintf("at %s%% power (α = %s)", format.Full(100*c.Power), format.Full(c.Alpha))
	}
	switch c.Code {
	case outcome.NoSuchGroup:
		return "no such group in the data (groups: " + strings.Join(c.Names, ", ") + ")"
	case outcome.NoGoldScored:
		switch {
		case c.Name != "":
			return "n = 0: no gold-carrying cases were scored in " + c.Name
		case c.Allowed:
			return "no gold-carrying cases were scored (allowed by --allow-empty)"
		}
		return "no gold-carrying cases were scored"
	case outcome.NoScore:
		if c.Name != "" {
			return fmt.Sprintf("no gold-carrying case in %s has a %s score", c.Name, c.Measure)
		}
		return fmt.Sprintf("no gold-carrying case has a %s score", c.Measure)
	case outcome.NoEvaluatedQueries:
		return "no evaluated queries"
	case outcome.NoQueryValue:
		return "no evaluated query has a value of " + c.Measure
	case outcome.BelowFloor:
		v, t := format.Distinct(c.Value, c.Threshold)
		return fmt.Sprintf("%s mean %s is below the floor %s", c.Name, v, t)
	case outcome.CannotDetect:
		dir := "above"
		if c.Below {
			dir = "below"
		}
		return fmt.Sprintf("n = %d cannot detect any difference %s the floor %s; the distance to the floor is %s",
			c.N, dir, power(), format.Num(c.Distance))
	case outcome.TooFewToEstimate:
		return fmt.Sprintf("n = %d is too small to estimate the difference it can detect", c.N)
	case outcome.NoSpread:
		return fmt.Sprintf("n = %d has no spread (every value is %s): the difference it can detect cannot be estimated", c.N, format.Num(c.Value))
	case outcome.Detects:
		verb := "detects"
		if c.Only {
			verb = "can only detect"
		}
		return fmt.Sprintf("n = %d %s differences of ±%s %s; the distance to the floor is %s", c.N, verb, format.Num(c.Detectable), power(), format.Num(c.Distance))
	case outcome.IndicativeOnly:
		return IndicativeOnly
	case outcome.Unresolved:
		return fmt.Sprintf("%d gold id(s) do not resolve to a card of the knowledge base", c.N)
	case outcome.NoBaseline:
		return "no baseline: " + NoBaseline(c.Name, c.Text)
	case outcome.NothingPairs:
		return fmt.Sprintf("nothing pairs with the baseline %s (%d baseline cases; %d only in this run, %d with changed gold): the drop cannot be measured",
			format.SanitizeText(c.Text), c.N, c.M, int64(c.Value))
	case outcome.NoPairedValue:
		return "no paired case has this measure in both runs: the drop cannot be measured"
	case outcome.DropNotSignificant:
		return fmt.Sprintf("dropped %s (more than %s) but the paired test does not reject (%s p = %s)",
			format.Num(c.Value), format.Num(c.Threshold), c.Test, format.P(c.P))
	case outcome.Dropped:
		group := "overall"
		if c.Name != "" {
			group = c.Name
		}
		return fmt.Sprintf("%s mean dropped %s (from %s to %s), more than the %s tolerated; %s p = %s",
			group, format.Num(c.Value), format.Num(c.Base), format.Num(c.Current), format.Num(c.Threshold), c.Test, format.P(c.P))
	case outcome.DetectsDrop:
		cases := fmt.Sprintf("n = %d paired cases", c.N)
		if c.M > 0 {
			cases += " in " + format.Count(c.M, "cluster", "clusters")
		}
		if math.IsNaN(c.Detectable) {
			return fmt.Sprintf("%s cannot detect any drop %s; the tolerance is %s", cases, power(), format.Num(c.Threshold))
		}
		verb := "detect"
		if c.Only {
			verb = "can only detect"
		}
		return fmt.Sprintf("%s %s drops of %s %s; the tolerance is %s", cases, verb, format.Num(c.Detectable), power(), format.Num(c.Threshold))
	case outcome.DropNoSpread:
		if c.M > 0 {
			return fmt.Sprintf("the clusters' mean differences do not vary (every one is %s): the drop that n = %d paired cases in %s can detect cannot be estimated; the tolerance is %s",
				format.Signed(c.Value), c.N, format.Count(c.M, "cluster", "clusters"), format.Num(c.Threshold))
		}
		return fmt.Sprintf("the paired differences do not vary (every one is %s): the drop that n = %d paired cases can detect cannot be estimated; the tolerance is %s",
			format.Signed(c.Value), c.N, format.Num(c.Threshold))
	case outcome.IndicativeLocaleTest:
		return IndicativeLocaleRegression
	case outcome.NoTopK:
		in := ""
		if c.Name != "" {
			in = " of " + c.Name
		}
		return fmt.Sprintf("no case%s that both runs hold carries its top k in both runs (%d held, %d without a top k in one run): the churn cannot be measured", in, c.N, c.M)
	case outcome.RBOBelow:
		v, t := format.Distinct(c.Value, c.Threshold)
		return fmt.Sprintf("%s mean RBO %s over %d cases is below the floor %s", groupName(c.Name), v, c.N, t)
	case outcome.ChurnAbove:
		v, t := format.Distinct(c.Value, c.Threshold)
		return fmt.Sprintf("%s: the top k of %d of %d cases changed as a set, a share of %s, more than the %s allowed", groupName(c.Name), c.M, c.N, v, t)
	case outcome.IndicativeChurn:
		return IndicativeChurn
	case outcome.Interval95:
		iv := format.Interval([2]float64{c.Lo, c.Hi}) + format.MarkIf(c.Unreliable)
		s := fmt.Sprintf("95%% interval %s (%s, n = %d)", iv, c.Test, c.N)
		if c.M > 0 {
			s = fmt.Sprintf("95%% interval %s (%s over %s of cases in families, n = %d)", iv, c.Test, format.Count(c.M, "cluster", "clusters"), c.N)
		}
		if c.Only {
			s += fmt.Sprintf(": the threshold %s lies inside it, so this n cannot tell the figure from the threshold", format.Num(c.Threshold))
		}
		return s
	case outcome.ANNRecallBelow:
		v, t := format.Distinct(c.Value, c.Threshold)
		return fmt.Sprintf("the index's %s against exact search, %s over %d queries, is below the floor %s", ANNRecallAt(c.M, c.Span), v, c.N, t)
	case outcome.NoANNQuery:
		return fmt.Sprintf("the exact check checked no query (%d run, %d sampled without an exact neighbour: no record of their locale)", c.N, c.M)
	case outcome.HolmGroupGates:
		return fmt.Sprintf("the p is Holm-adjusted over the %d per-group regression gates of this run (unadjusted p = %s)", c.N, format.P(c.P))
	case outcome.NoOtherStrategy:
		return "no other strategy to compare with"
	case outcome.Beaten:
		tests := make([]string, len(c.Tests))
		for i, t := range c.Tests {
			tests[i] = pairedTest(t)
		}
		return "significantly better on " + c.Measure + ": " + strings.Join(tests, "; ")
	case outcome.NotBeaten:
		closest := ""
		if len(c.Tests) > 0 {
			closest = pairedTest(c.Tests[0])
		}
		return fmt.Sprintf("no strategy is significantly better on %s (closest: %s)", c.Measure, closest)
	case outcome.Violations:
		return fmt.Sprintf("%s: %d violation(s)", c.Name, c.N)
	case outcome.NotGated:
		return "not gated"
	case outcome.BelowMinN:
		return fmt.Sprintf("n = %d is below min_n %d", c.N, c.M)
	case outcome.KappaUndefined:
		return "weighted kappa is undefined: no evidence of agreement"
	case outcome.KappaBelow:
		return "weighted kappa is below min_kappa"
	case outcome.TooManyUnpaired:
		return "more unpaired labels than --max-unpaired " + c.Text + " allows"
	case outcome.LockChanged:
		return "the lock changed since " + c.Text
	case outcome.LabelsChanged:
		switch c.Name {
		case "no-base-file":
			return "the human labels file does not exist at " + c.Text + ", so the carried-over labels cannot be shown unchanged"
		case "base-invalid":
			return "the human labels file at " + c.Text + " is not a valid labels file, so the carried-over labels cannot be shown unchanged"
		}
		return fmt.Sprintf("the labels of %d case(s) changed since %s; a carried-over dimension keeps its labels", c.N, c.Text)
	case outcome.NotBlind:
		return fmt.Sprintf("%d of %d paired human label(s) are not provably committed before the judge scores they are compared with (raters: %s)",
			c.N, c.M, strings.Join(raterNames(c.Names), ", "))
	case outcome.AnchorNoCommit:
		return fmt.Sprintf("the %s file %s has no commit", anchorSide(c.Name), c.Text)
	case outcome.AnchorUncommitted:
		return fmt.Sprintf("the %s file %s has uncommitted changes", anchorSide(c.Name), c.Text)
	case outcome.AnchorSameCommit:
		return fmt.Sprintf("the human labels and the judge scores were last changed in the same commit %s: the labels are not provably older", shortCommit(c.Text))
	case outcome.AnchorNotAncestor:
		return fmt.Sprintf("the commit that last changed the human labels (%s) is not an ancestor of the one that last changed the judge scores (%s)", shortCommit(c.Names[0]), shortCommit(c.Names[1]))
	case outcome.AnchorShallow:
		return fmt.Sprintf("the repository is a shallow clone and %s is its boundary: the history before it was not fetched, so the files look last changed there (actions/checkout with fetch-depth: 0 fetches it)", shortCommit(c.Text))
	}
	return string(c.Code)
}

// groupName is a clause's group: "overall" for "".
func groupName(name string) string {
	if name == "" {
		return outcome.GroupOverall
	}
	return name
}

// raterNames are rater ids as a reason shows them: "(no rater id)" for "".
func raterNames(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if id == "" {
			out[i] = "(no rater id)"
		}
	}
	return out
}

// pairedTest is one paired test as a reason cites it, its interval said to be
// the 95% one: "B +0.120, 95% CI [+0.050, +0.190], Holm p = 0.0030".
func pairedTest(t outcome.PairedTest) string {
	return fmt.Sprintf("%s %s, 95%% CI %s%s, Holm p = %s", t.Strategy, format.Signed(t.Delta), format.SignedInterval([2]float64{t.Lo, t.Hi}), format.MarkIf(t.Unreliable), format.P(t.PHolm))
}

// anchorSide names a side of the git anchoring check.
func anchorSide(side string) string {
	if side == "human" {
		return "human labels"
	}
	return "judge scores"
}

// shortCommit is a commit as a reason shows it: its first 12 digits.
func shortCommit(c string) string { return format.CommitPrefix(c, 12) }

// NoBaseline is why there is no baseline (baseline.Unavailability's code and
// detail) as the reports and the warning say it.
func NoBaseline(code, detail string) string {
	if code == "not_in_actions" { // baseline.NotInActions
		return "--baseline auto looks the baseline up in GitHub Actions; this is not an Actions run"
	}
	return fmt.Sprintf("%s (%s)", detail, code)
}

// unreliable reports whether a clause of why cites an interval marked
// unreliable (its reason then carries format.UnreliableMark).
func unreliable(why []outcome.Clause) bool {
	for _, c := range why {
		if c.Unreliable {
			return true
		}
		for _, t := range c.Tests {
			if t.Unreliable {
				return true
			}
		}
	}
	return false
}
