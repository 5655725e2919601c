package checkreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// SuggestRule is the rule of the suggested floors, as every output states it.
const SuggestRule = "the lower bound of the group's 95% interval (Wilson with continuity correction for 0/1 values, else hall-t below 30 cases, BCa from 30, hall-t from 10,000), rounded down to 0.01; " +
	"a group whose interval's coverage is not trusted at its n (the † mark: below 20 cases) gets none"

// floorExpr is a suggested floor as --floor takes it: MEASURE=F on overall,
// MEASURE@GROUP=F otherwise (GROUP quoted when its name needs it:
// floor.QuoteGroup), F on the 0.01 grid. It is printable and holds no "##[",
// so it is pasted back as printed.
func floorExpr(s floor.Spec) string {
	v := format.Fixed(s.Value, 2)
	if s.Group == outcome.GroupOverall {
		return s.Measure + "=" + v
	}
	return s.Measure + "@" + floor.QuoteGroup(s.Group) + "=" + v
}

// refusedText says why a group gets no floor.
func refusedText(s floor.Suggestion) string {
	switch s.Refused {
	case floor.RefusedEmpty:
		return "no floor: n = 0, nothing was scored"
	case floor.RefusedUnreliable:
		if s.Clusters > 0 { // the interval is over the clusters: they are too few
			return fmt.Sprintf("no floor: n = %d in %s: too few clusters for the %s interval's coverage (at least %d)", s.N, format.Count(s.Clusters, "cluster", "clusters"), methodName(s.Method), metrics.ReliableMinNFor(s.Method))
		}
		return fmt.Sprintf("no floor: n = %d is too few for the %s interval's coverage (at least %d)", s.N, methodName(s.Method), metrics.ReliableMinNFor(s.Method))
	case floor.RefusedZero:
		return "no floor: the lower bound rounds down to 0"
	case floor.RefusedLong:
		return fmt.Sprintf("no floor: the group's name is too long for a floor expression (at most %d bytes)", floor.MaxExpr)
	}
	return "no floor"
}

// SuggestedFloorsText writes the floors suggested from a run scored at k
// (gate.Result.SuggestFloors): the rule, one row per measure and group (n, mean
// and interval, the floor or why there is none, and what n detects around it),
// then the floors as ready-to-paste --floor flags and as the `floors` Action
// input. Deterministic: the rows are in the suggestions' order.
func SuggestedFloorsText(w io.Writer, ss []floor.Suggestion, k int) error {
	var b strings.Builder
	p := func(f string, args ...any) { fmt.Fprintf(&b, f, args...) }
	san := format.SanitizeText
	label := func(key string) string {
		if i := metrics.CaseIndex(key); i >= 0 {
			return metrics.CaseMeasures[i].LabelAt(k)
		}
		return key
	}
	p("\nsuggested floors from this run (k = %d): %s\n", k, SuggestRule)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "group\tmeasure\tn\tmean [95% CI]\tfloor\twhat n can detect\n")
	var ok []floor.Spec
	for _, s := range ss {
		ci := format.Num(s.Mean) + " " + format.Interval(s.CI95)
		if s.N == 0 {
			ci = format.Missing
		}
		fl, note := format.Missing, refusedText(s)
		if s.Refused == "" {
			fl, note = format.Fixed(s.Spec.Value, 2), gatetable.Reason([]outcome.Clause{s.Why})
			ok = append(ok, s.Spec)
		}
		if s.Indicative {
			note += "; per-locale: indicative only"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", san(s.Spec.Group), label(s.Spec.Measure), s.N, ci, fl, note)
	}
	tw.Flush()
	if len(ok) == 0 {
		p("\nno group supports a floor.\n")
	} else {
		p("\nas flags:\n")
		for i, s := range ok {
			cont := " \\"
			if i == len(ok)-1 {
				cont = ""
			}
			p("  --floor %s%s\n", shellWord(floorExpr(s)), cont)
		}
		p("\nas the floors Action input:\n  floors: |\n")
		for _, s := range ok {
			p("    %s\n", floorExpr(s))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shellWord quotes s for a POSIX shell when it holds anything but
// A-Z a-z 0-9 and _ @ : . = - + (a type or locale name with a space).
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@:.=-+", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// methodName is an interval method as the reports name it.
func methodName(m string) string {
	switch m {
	case metrics.MethodWilson, metrics.MethodBoundedWilson:
		return "Wilson"
	case metrics.MethodBCa:
		return "BCa"
	case metrics.MethodHallT:
		return "hall-t"
	case metrics.MethodHallTBetting:
		return "hall-t-betting"
	}
	return m
}
