package compare

// The one decision of a comparison: the recommendation and what follows from
// it (which strategies stay in the running, whether they use the reranker,
// the simplest of them), and how each common scenario bears on it. The domain
// decides; the renderers write the words, so the headline, the card, the text
// and Markdown summaries and the JSON say the same thing.

// Verdict is the kind of decision (also its JSON "verdict").
type Verdict string

// The verdicts.
const (
	// VerdictOnly: one strategy, nothing to choose.
	VerdictOnly Verdict = "only-strategy"
	// VerdictWinner: the best strategy is significantly above every other on
	// the primary measure (its runner-up included).
	VerdictWinner Verdict = "winner"
	// VerdictLevel: no clear winner: the best and the strategies not
	// significantly below it (Contenders) are level on the primary measure.
	VerdictLevel Verdict = "level"
)

// RerankerChoice is what the decision says of the reranker (JSON "reranker").
type RerankerChoice string

// The reranker choices.
const (
	// RerankerUnknown: no contender's name says whether it reranks.
	RerankerUnknown RerankerChoice = ""
	// RerankerUse: every contender reranks and a non-reranked strategy is
	// among the runs: enable the reranker.
	RerankerUse RerankerChoice = "use"
	// RerankerSkip: no contender reranks, and a reranked strategy is among the
	// runs (below them): leave the reranker off.
	RerankerSkip RerankerChoice = "skip"
	// RerankerEither: the contenders include strategies with and without it.
	RerankerEither RerankerChoice = "either"
)

// Bearing is how a scenario bears on the decision (JSON "bearing").
type Bearing string

// The bearings.
const (
	// BearingDecides: the scenario compares two contenders: it is the
	// decision's own comparison (with no clear winner, why they are level).
	BearingDecides Bearing = "decides"
	// BearingSupports: the scenario's first strategy is a contender and its
	// other is not: it agrees with the decision.
	BearingSupports Bearing = "supports"
	// BearingOutranked: neither strategy of the scenario is a contender (both
	// significantly below the best): its action does not change the decision.
	BearingOutranked Bearing = "outranked"
	// BearingQualifies: a scenario about the whole comparison (wide
	// intervals, every strategy low): a caveat on the decision.
	BearingQualifies Bearing = "qualifies"
)

// Decision is the comparison's one decision.
type Decision struct {
	Verdict Verdict
	// Best is the strategy with the best mean primary measure (as the
	// recommendation ranks them: human-corrected with human labels).
	Best string
	// Contenders are the strategies the decision keeps, best first: the
	// winner alone; with no clear winner the best and every strategy whose
	// paired test against it (Holm-adjusted as the recommendation's) is not
	// significant.
	Contenders []string
	// Reranker is what the contenders say of the reranker (names judged).
	Reranker RerankerChoice
	// Simplest is the contender with the fewest parts (one index before a
	// hybrid's two and a fusion; no reranker before one; ties: the better
	// mean): the one to take when they are level.
	Simplest string
	// BelowFloors are the floors of the gate (GateOptions.Floors) that the
	// strategy the decision takes (Taken) fails, decided as the floor gates
	// are: switching to it alone would not pass them. None without floors.
	BelowFloors []BelowFloor
}

// BelowFloor is a floor the decision's strategy falls below: its measure,
// the floor, the strategy's mean and the n behind it.
type BelowFloor struct {
	Measure          string
	Threshold, Value float64
	N                int64
}

// Taken is the strategy the decision takes: the best, or with no clear
// winner the simplest of the contenders.
func (d Decision) Taken() string {
	if d.Verdict == VerdictLevel {
		return d.Simplest
	}
	return d.Best
}

// IsContender reports whether the strategy is one the decision keeps.
func (d Decision) IsContender(name string) bool {
	for _, c := range d.Contenders {
		if c == name {
			return true
		}
	}
	return false
}

// parts counts a strategy's parts by its name: a hybrid has two retrievers and
// a fusion (3), any other one (1); a reranker adds one.
func parts(name string) int {
	n := 1
	if hasToken(name, hybridWords...) {
		n = 3
	}
	if isRerank(name) {
		n++
	}
	return n
}

// decide sets the decision from the recommendation's ranking and tests.
func (r *Result) decide() {
	rk := r.decisionRanked()
	if len(rk) == 0 {
		return
	}
	best := r.Strategies[rk[0]].Name
	d := Decision{Verdict: VerdictOnly, Best: best, Contenders: []string{best}, Simplest: best}
	switch {
	case len(rk) == 1:
	case r.Recommended != NoClearWinner:
		d.Verdict = VerdictWinner
	default:
		d.Verdict = VerdictLevel
		for _, j := range rk[1:] {
			t := r.decisionTest(rk[0], j, r.primary)
			if !(t.Significant && t.Delta > 0) {
				d.Contenders = append(d.Contenders, r.Strategies[j].Name)
			}
		}
		for _, c := range d.Contenders[1:] {
			if parts(c) < parts(d.Simplest) {
				d.Simplest = c
			}
		}
	}
	if len(rk) > 1 {
		d.Reranker = r.rerankerChoice(d.Contenders)
	}
	r.Decision = d
}

// rerankerChoice is what the contenders say of the reranker: use it when all
// rerank and some strategy of the runs does not, skip it when none does and
// some strategy of the runs does, either when they differ.
func (r *Result) rerankerChoice(contenders []string) RerankerChoice {
	with, without := 0, 0
	for _, c := range contenders {
		if isRerank(c) {
			with++
		} else {
			without++
		}
	}
	anyWith, anyWithout := false, false
	for i := range r.Strategies {
		if isRerank(r.Strategies[i].Name) {
			anyWith = true
		} else {
			anyWithout = true
		}
	}
	switch {
	case !anyWith: // no run reranks: nothing to say
		return RerankerUnknown
	case with > 0 && without > 0:
		return RerankerEither
	case without == 0 && anyWithout:
		return RerankerUse
	case with == 0:
		return RerankerSkip
	}
	return RerankerUnknown // every run reranks
}

// bear sets each scenario's bearing on the decision.
func (r *Result) bear() {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		switch {
		case s.Code == WideIntervalsScenario || s.Code == AllLow:
			s.Bearing = BearingQualifies
		case r.Decision.IsContender(s.A) && r.Decision.IsContender(s.B):
			s.Bearing = BearingDecides
		case r.Decision.IsContender(s.A),
			s.Code == DenseMatchesHybrid && r.Decision.IsContender(s.B): // level with a contender
			s.Bearing = BearingSupports
		default:
			s.Bearing = BearingOutranked
		}
	}
}
