package outcome

// Code names why a gate has its status. A gate carries its reason as data
// (Gate.Why: codes with numbers and names); the words are written by the
// report layer (internal/report/gatetable.Reason), so every report and the
// JSON "reason" say the same thing and a domain package writes no prose.
type Code string

// The reason codes, with the Clause fields each one uses.
const (
	// NoSuchGroup: a floor's group is not in the data; Names: the groups there are.
	NoSuchGroup Code = "no_such_group"
	// NoGoldScored: no gold-carrying case was scored (Name: the group, "" for
	// the whole run); Allowed: --allow-empty turned the gate off.
	NoGoldScored Code = "no_gold_scored"
	// NoScore: no gold-carrying case (in group Name, "" for the whole run) has
	// a score of measure Measure.
	NoScore Code = "no_score"
	// NoEvaluatedQueries: compare evaluated no query.
	NoEvaluatedQueries Code = "no_evaluated_queries"
	// NoQueryValue: no evaluated query has a value of Measure.
	NoQueryValue Code = "no_query_value"
	// BelowFloor: Name's mean Value is below the floor Threshold.
	BelowFloor Code = "below_floor"
	// CannotDetect: n = N cannot detect any difference from the floor at
	// Power and Alpha, on the side of the observed mean (Below: under the
	// floor); Distance is the distance to the floor.
	CannotDetect Code = "cannot_detect"
	// TooFewToEstimate: n = N is too small to estimate the detectable difference.
	TooFewToEstimate Code = "too_few_to_estimate"
	// NoSpread: n = N values all equal Value: no detectable difference.
	NoSpread Code = "no_spread"
	// Detects: n = N detects differences of ±Detectable at Power and Alpha;
	// Distance is the distance to the floor; Only: Distance < Detectable.
	Detects Code = "detects"
	// IndicativeOnly: a per-locale gate (locale groups are indicative only).
	IndicativeOnly Code = "indicative_only"
	// Unresolved: N gold ids do not resolve to a card of the knowledge base.
	Unresolved Code = "unresolved"
	// NoBaseline: no baseline to compare with; Name is why as a code
	// (baseline.NotInActions, or the artifact lookup's reason) and Text the
	// lookup's message about GitHub's answer or the artifact, shown as given.
	NoBaseline Code = "no_baseline"
	// NothingPairs: no case pairs with the baseline (Text: its file); N
	// baseline cases, M only in this run, Value of them with changed gold.
	NothingPairs Code = "nothing_pairs"
	// NoPairedValue: no paired case has the measure in both runs.
	NoPairedValue Code = "no_paired_value"
	// DropNotSignificant: the mean dropped Value (more than Threshold) but the
	// paired test Test does not reject (p = P).
	DropNotSignificant Code = "drop_not_significant"
	// Dropped: the overall mean (Name: a group's, "" for overall) dropped
	// Value, from Base to Current, more than the Threshold tolerated; the paired
	// test Test has p = P.
	Dropped Code = "dropped"
	// DetectsDrop: a regression gate's N paired cases (in M clusters when the
	// statistics are over clusters, else M = 0) detect a drop of
	// Detectable (NaN: none) at Power and Alpha; Threshold is the tolerance;
	// Only: Detectable > Threshold (a drop between them passes as not significant
	// under --regression-test significant).
	DetectsDrop Code = "detects_drop"
	// DropNoSpread: a regression gate's N paired cases (in M clusters when
	// the statistics are over clusters, else M = 0) have differences that do
	// not vary (every one, or every cluster's mean, Value): the drop they can
	// detect cannot be estimated; Threshold is the tolerance.
	DropNoSpread Code = "drop_no_spread"
	// IndicativeLocaleTest: a per-locale regression gate (a locale's n is small
	// and its paired test is corrected only within the per-group regression
	// gates set, not for every locale).
	IndicativeLocaleTest Code = "indicative_locale_test"
	// NoTopK: no case of the group (Name, "" for overall) that both runs hold
	// carries its top k in both runs (N held, M of them without a top k in one
	// run): the churn cannot be measured.
	NoTopK Code = "no_top_k"
	// RBOBelow: the mean rank-biased overlap Value of group Name's N cases
	// (Name "" for overall) is below the floor Threshold.
	RBOBelow Code = "rbo_below"
	// ChurnAbove: the share Value of group Name's N cases whose top k changed
	// as a set (M of them) is above the Threshold allowed.
	ChurnAbove Code = "churn_above"
	// IndicativeChurn: a per-locale churn gate (--min-rbo, --max-churn on a
	// locale:TAG group): locale groups are indicative only, and a churn gate
	// is a threshold, not a test.
	IndicativeChurn Code = "indicative_churn"
	// Interval95: the 95% interval [Lo, Hi] (method Test) of a gate's figure
	// (Measure) over N cases or queries (in M clusters when they come in
	// families; 0: not clustered); Only: the Threshold lies inside it.
	Interval95 Code = "interval_95"
	// ANNRecallBelow: the vector index's mean recall against exact search,
	// Value over N queries, is below the floor Threshold; the store was asked
	// for M entries and the exact lists held Span[0] to Span[1] (fewer than M
	// where fewer records match a query): the recall is at that depth.
	ANNRecallBelow Code = "ann_recall_below"
	// NoANNQuery: the exact check checked no query (N run, M of those sampled
	// without an exact neighbour: no record of their locale).
	NoANNQuery Code = "no_ann_query"
	// HolmGroupGates: the gate is one of the N (≥ 2) per-group regression
	// gates of the run (--max-drop MEASURE@GROUP), whose paired tests are one
	// family, Holm-adjusted together: P is its test's unadjusted p, Value the
	// adjusted p the gate was decided by.
	HolmGroupGates Code = "holm_group_gates"
	// NoOtherStrategy: compare has one strategy: nothing can beat it.
	NoOtherStrategy Code = "no_other_strategy"
	// Beaten: strategies significantly better on Measure (Tests).
	Beaten Code = "beaten"
	// NotBeaten: no strategy is significantly better on Measure; Tests holds
	// the closest one.
	NotBeaten Code = "not_beaten"
	// Violations: a calibrate dimension's construct or anchoring check (Name:
	// its status) has N violations.
	Violations Code = "violations"
	// NotGated: the dimension is reported, not gated.
	NotGated Code = "not_gated"
	// BelowMinN: n = N pairs is below the lock's min_n M.
	BelowMinN Code = "below_min_n"
	// KappaUndefined: weighted kappa is undefined (no evidence of agreement).
	KappaUndefined Code = "kappa_undefined"
	// KappaBelow: weighted kappa is below min_kappa.
	KappaBelow Code = "kappa_below"
	// TooManyUnpaired: more unpaired labels than --max-unpaired Text allows.
	TooManyUnpaired Code = "too_many_unpaired"
	// LockChanged: the lock changed since the ref Text.
	LockChanged Code = "lock_changed"
	// LabelsChanged: a carried-over dimension's human labels differ from those
	// at the ref Text in N cases; Name is "no-base-file" or "base-invalid" when
	// the ref has no valid labels file to compare with.
	LabelsChanged Code = "labels_changed"
	// NotBlind: N of the M paired human labels are not provably committed before
	// the judge scores they are compared with; Names: the raters concerned
	// ("" for labels without a rater id).
	NotBlind Code = "not_blind"
	// The findings of a failed git anchoring check (calibrate.GitAnchoring.
	// Findings, which are the gate's reason). Name is a side, "human" (the
	// human labels) or "judge" (the judge scores); commits are full hashes.
	//
	// AnchorNoCommit: the Name side's file Text has no commit.
	AnchorNoCommit Code = "anchor_no_commit"
	// AnchorUncommitted: the Name side's file Text has uncommitted changes.
	AnchorUncommitted Code = "anchor_uncommitted"
	// AnchorSameCommit: both files were last changed in the commit Text.
	AnchorSameCommit Code = "anchor_same_commit"
	// AnchorNotAncestor: the human labels' last commit Names[0] is not an
	// ancestor of the judge scores' last commit Names[1].
	AnchorNotAncestor Code = "anchor_not_ancestor"
	// AnchorShallow: the repository is a shallow clone whose boundary is the
	// commit Text (the files look last changed there).
	AnchorShallow Code = "anchor_shallow"
)

// Codes are every Code, in the order they are declared: gatetable's test words
// each one (and outcome's test checks that the list is complete).
var Codes = []Code{
	NoSuchGroup, NoGoldScored, NoScore, NoEvaluatedQueries, NoQueryValue, BelowFloor,
	CannotDetect, TooFewToEstimate, NoSpread, Detects, IndicativeOnly, Unresolved,
	NoBaseline, NothingPairs, NoPairedValue, DropNotSignificant, Dropped, DetectsDrop, DropNoSpread,
	IndicativeLocaleTest, HolmGroupGates, NoTopK, RBOBelow, ChurnAbove, IndicativeChurn, Interval95, ANNRecallBelow, NoANNQuery, NoOtherStrategy, Beaten, NotBeaten, Violations, NotGated,
	BelowMinN, KappaUndefined, KappaBelow, TooManyUnpaired, LockChanged, LabelsChanged,
	NotBlind, AnchorNoCommit, AnchorUncommitted, AnchorSameCommit, AnchorNotAncestor,
	AnchorShallow,
}

// Clause is one reason of a gate: a code and its parameters (see each code
// for the fields it uses).
type Clause struct {
	Code Code
	// Counts.
	N, M int64
	// Numbers: a mean and its floor or tolerance, a drop's two sides, a
	// detectable difference, the distance to a floor, a test's p, an
	// interval's bounds.
	Value, Threshold, Base, Current, Detectable, Distance, P float64
	Lo, Hi                                                   float64
	// Span is a range of counts: the exact check's shortest and longest
	// exact list (ANNRecallBelow).
	Span [2]int64
	// Power and Alpha of a detectable difference.
	Power, Alpha         float64
	Below, Only, Allowed bool
	// Unreliable marks an interval (Interval95) whose method covers less
	// than 95% at its n in simulation, as the reports mark it.
	Unreliable bool
	// Names: a group label, a measure key, a test name.
	Name, Measure, Test string
	Names               []string
	// Text is text from outside the domain's decision, shown as given: a
	// baseline source's message, a --max-unpaired spec, a git ref.
	Text string
	// Tests are paired tests of compare (not_beaten).
	Tests []PairedTest
}

// PairedTest is one paired test a reason cites: Strategy's mean minus the
// other's, its interval and its Holm-adjusted p.
type PairedTest struct {
	Strategy      string
	Delta, Lo, Hi float64
	PHolm         float64
	Unreliable    bool // the interval is marked unreliable, as the paired table marks it
}
