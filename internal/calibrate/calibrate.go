// Package calibrate measures the agreement between human labels and an LLM judge,
// per dimension, under the frozen constants of a lock, and guards it against the ways
// agreement can be gamed: construct validity, label anchoring and frozen constants.
package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Dimension statuses of the contract beyond outcome.Pass and outcome.Fail.
const (
	StatusConstructMismatch  outcome.Status = "construct-mismatch"
	StatusAnchoringViolation outcome.Status = "anchoring-violation"
)

// MeasureWeightedKappa names the statistic the kappa gates compare with min_kappa.
const MeasureWeightedKappa = "weighted_kappa"

// Input is everything Evaluate needs: the lock and both label files, already read
// with that lock (so every label has its bin).
type Input struct {
	Lock      *labelfile.Lock
	Human     *labelfile.Labels
	Judge     *labelfile.Labels
	Resamples int    // bootstrap resamples; 0 disables the CI
	Seed      uint64 // metrics.DefaultSeed for reproducible reports
	// MaxUnpaired, when not nil, caps the unpaired labels of each gated dimension
	// (--max-unpaired): above it the gate fails.
	MaxUnpaired *UnpairedLimit

	panel *panel // set by Evaluate under the lock's raters: panel
}

// UnpairedLimit is the opt-in cap on the unpaired labels of a gated dimension: a
// count, or a percentage of the dimension's labelled cases (paired + unpaired).
// Without it, anyone could raise kappa by dropping the judge scores (or human
// labels) of the cases that disagree: they would only be listed as unpaired.
type UnpairedLimit struct {
	Spec    string  // as given: "3" or "5%"
	Count   int     // the count, when not Percent
	Value   float64 // the percentage, when Percent
	Percent bool
}

// ParseUnpairedLimit reads N (a count ≥ 0) or P% (0 ≤ P ≤ 100).
func ParseUnpairedLimit(s string) (*UnpairedLimit, error) {
	spec := strings.TrimSpace(s)
	num, pct := strings.CutSuffix(spec, "%")
	if pct {
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
			return nil, fmt.Errorf("want a count N or a percentage P%% (0-100%%), got %q", s)
		}
		return &UnpairedLimit{Spec: spec, Value: v, Percent: true}, nil
	}
	v, err := strconv.Atoi(spec)
	if err != nil || v < 0 {
		return nil, fmt.Errorf("want a count N or a percentage P%% (0-100%%), got %q", s)
	}
	return &UnpairedLimit{Spec: spec, Count: v}, nil
}

// Allowed is the number of unpaired labels allowed among total labelled cases:
// the count, or ⌊P/100 · total⌋.
func (l *UnpairedLimit) Allowed(total int) int {
	if !l.Percent {
		return l.Count
	}
	return int(math.Floor(l.Value*float64(total)/100 + 1e-9))
}

// ViolationKind names the guard a label breaks.
type ViolationKind string

const (
	// ConstructMismatch: the label (of Side) declares Construct, not the
	// lock's Want.
	ConstructMismatch ViolationKind = "construct_mismatch"
	// NotEarlier: the human label's LabeledAt is not earlier than the judge's
	// JudgedAt (at JudgeFile:JudgeLine): the label may have seen the score.
	NotEarlier ViolationKind = "not_earlier"
)

// Violation is one case that breaks a guard, as data: the renderers write
// the sentence.
type Violation struct {
	CaseID string
	Kind   ViolationKind
	File   string // the offending label's file and line
	Line   int
	// ConstructMismatch.
	Side            labelfile.LabelSide
	Construct, Want string
	// NotEarlier.
	LabeledAt, JudgedAt time.Time
	JudgeFile           string
	JudgeLine           int
}

// Disagreement is a paired case whose human and judge bins differ.
type Disagreement struct {
	CaseID   string
	HumanBin int
	JudgeBin int
}

// Dimension is the calibration result of one lock dimension.
type Dimension struct {
	Name      string
	Construct string // the lock's construct
	Gated     bool
	N         int // paired cases
	Status    outcome.Status
	// Valid is false under construct-mismatch: the numbers below are then not a
	// measurement of agreement on the lock's construct and are not reported as one.
	Valid bool
	// Agreement, Kappa and WeightedKappa are NaN when undefined (n = 0, or both
	// sides used one and the same bin so chance agreement is 1).
	Agreement     float64
	Kappa         float64
	WeightedKappa float64
	CI95          [2]float64 // of WeightedKappa; NaN when undefined or disabled
	// CIMethod is how CI95 was computed (metrics.KappaCIMethod, or
	// metrics.MethodWilsonDisagreement when no pair disagrees); "" without a CI.
	CIMethod string
	// Unreliable reports that CI95's method covers less than 0.95 at this n in
	// simulation (metrics.UnreliableFor: BCa below 30 pairs, the Wilson
	// interval of the disagreement below 50), as check's and compare's
	// intervals do, or that the confusion's margins are too sparse for any
	// (a side used one bin only, or a bin fewer than
	// metrics.KappaMinBinLabels times); false without a CI.
	Unreliable bool
	// MinN is the lock's min_n; BelowMinN reports N < MinN, which fails a gated dimension.
	MinN       int
	BelowMinN  bool
	Confusion  [][]int // [human bin][judge bin]
	JudgeAbove []Disagreement
	HumanAbove []Disagreement
	HumanOnly  []string // case ids labelled by humans but not scored by the judge
	JudgeOnly  []string // case ids scored by the judge but not labelled by humans
	// UnpairedAllowed is the number of unpaired labels --max-unpaired allows in this
	// dimension, -1 without a limit (or for an ungated dimension); UnpairedOver
	// reports that a gated dimension has more, which fails the gate.
	UnpairedAllowed int
	UnpairedOver    bool
	// HumanConstructs and JudgeConstructs are the distinct constructs each side declared.
	HumanConstructs []string
	JudgeConstructs []string
	// ConstructsAssigned: neither side declared a construct (a --human-sheet
	// and its --judge-qrels carry none), so both were read as the lock's and
	// the construct guard had nothing to check; HumanConstructs and
	// JudgeConstructs are then empty.
	ConstructsAssigned bool
	Violations         []Violation // construct mismatches first, then anchoring, each by case id
	Notes              []Note      // why the numbers or the status are what they are (notes.go)
	// Panel is the rater panel under the lock's raters: panel (panel.go), nil
	// under raters: single.
	Panel *PanelDimension
	// CarriedOver is the lock's carried_over flag (carried.go).
	CarriedOver bool
}

// Result is the whole calibration.
type Result struct {
	Lock       *labelfile.Lock
	Dimensions []*Dimension // sorted by name
	// MaxUnpaired is the --max-unpaired limit, nil without it.
	MaxUnpaired *UnpairedLimit
	LockCheck   *LockCheck // nil when --lock-base was not given
	GitAnchor   *GitAnchoring
	// CarriedOver is the carried-over dimensions' check (--lock-base and a lock
	// with carried_over dimensions), Blind the blind-relabelling check
	// (--git-anchoring); nil when not made.
	CarriedOver *CarriedOverCheck
	Blind       *BlindCheck
	// Gates are computed by Finish: kappa:NAME per dimension, unpaired:NAME per
	// gated dimension under --max-unpaired, lock and git-anchoring when checked.
	Gates outcome.Gates
}

// Verdict is the verdict of the gates.
func (r *Result) Verdict() outcome.Status { return r.Gates.Verdict() }

// Failed returns the names of the failed gates, in order.
func (r *Result) Failed() []string { return r.Gates.Failed() }

// Evaluate pairs labels with judge scores by (case_id, dimension) and computes every
// dimension of the lock. It does no I/O. Call Finish after attaching the lock and
// git checks to compute the verdict. It ends with ctx.Err() soon after ctx ends.
//
// Pairing is a sort-merge on case ids (pairing.go), linear on labels already in
// case-id order, with each side sorted on its own core otherwise; the dimensions
// are then evaluated in parallel. Of several labels of one side for one (case_id,
// dimension) the last counts (the readers refuse them).
func Evaluate(ctx context.Context, in Input) (*Result, error) {
	res := &Result{Lock: in.Lock, MaxUnpaired: in.MaxUnpaired}
	pn, err := buildPanel(ctx, in)
	if err != nil {
		return nil, err
	}
	if pn != nil {
		// The judge is compared with one label per case: the panel's consensus.
		in.panel, in.Human = pn, labelfile.FromLabels(pn.consensus)
	}
	names := in.Lock.DimensionNames()
	dimIndex := make(map[string]int, len(names))
	for i, name := range names {
		dimIndex[name] = i
	}
	p, err := pair(ctx, in.Human, in.Judge, dimIndex)
	if err != nil {
		return nil, err
	}
	k := in.Lock.NumBins()
	w := metrics.KappaWeights(k, in.Lock.KappaWeighting)
	res.Dimensions = make([]*Dimension, len(names))
	err = parallel(ctx, len(names), func(x int) error {
		d, err := evaluateDimension(ctx, in, names[x], p, x, k, w)
		res.Dimensions[x] = d
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// evaluateDimension computes dimension x (name) from both sides' sorted keys.
func evaluateDimension(ctx context.Context, in Input, name string, p *pairing, x, k int, w [][]float64) (*Dimension, error) {
	ld := in.Lock.Dimensions[name]
	d := &Dimension{Name: name, Construct: ld.Construct, Gated: ld.Gated, Valid: true, UnpairedAllowed: -1}
	hs, js, off := p.human.dim(x), p.judge.dim(x), p.off[x]
	hs.positional, js.positional = p.positional, p.positional
	byCase := func(v *Violation) string { return v.CaseID }

	// Construct validity, on every label of the dimension, paired or not.
	var mismatch []Violation
	if in.panel != nil {
		d.HumanConstructs, mismatch = in.panel.humanConstructs(name, mismatch)
		d.Panel = in.panel.dims[name]
	} else {
		d.HumanConstructs, mismatch = constructs(p.human, hs, ld.Construct, mismatch)
		if p.positional && !p.sorted {
			sortByCase(mismatch, byCase)
		}
	}
	d.CarriedOver = ld.CarriedOver
	human := len(mismatch)
	d.JudgeConstructs, mismatch = constructs(p.judge, js, ld.Construct, mismatch)
	if p.positional && !p.sorted {
		sortByCase(mismatch[human:], byCase)
	}

	// Pairing: both sides in case-id order, merged. The confusion matrix
	// (metrics.ConfusionMatrix) is counted as the pairs are found.
	d.Confusion = make([][]int, k)
	for i := range d.Confusion {
		d.Confusion[i] = make([]int, k)
	}
	var anchoring []Violation
	var judgeAbove, humanAbove [][2]int32 // human and judge label indices
	a, b := 0, 0
	for steps := 0; a < hs.len() || b < js.len(); steps++ {
		if steps&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return d, err
			}
		}
		c := 0
		switch {
		case a == hs.len():
			c = 1
		case b == js.len():
			c = -1
		default:
			c = compareAt(hs, js, a, b, off)
		}
		if c < 0 {
			d.HumanOnly = append(d.HumanOnly, in.Human.CaseID(int(hs.at(a).i)))
			a++
			continue
		}
		if c > 0 {
			d.JudgeOnly = append(d.JudgeOnly, in.Judge.CaseID(int(js.at(b).i)))
			b++
			continue
		}
		hk, jk := hs.at(a), js.at(b)
		a, b = a+1, b+1
		d.N++
		d.Confusion[hk.bin][jk.bin]++
		if !labelfile.Before(in.Human, int(hk.i), in.Judge, int(jk.i)) {
			h, j := in.Human.Label(int(hk.i)), in.Judge.Label(int(jk.i))
			anchoring = append(anchoring, Violation{CaseID: h.CaseID, Kind: NotEarlier, File: h.File, Line: h.Line,
				LabeledAt: h.At, JudgedAt: j.At, JudgeFile: j.File, JudgeLine: j.Line})
		}
		// The disagreements as the pair's label indices (8 bytes, not the
		// Disagreement's 32, while the lists grow by doubling), made into
		// Disagreements once their number is known.
		switch {
		case jk.bin > hk.bin:
			judgeAbove = append(judgeAbove, [2]int32{hk.i, jk.i})
		case hk.bin > jk.bin:
			humanAbove = append(humanAbove, [2]int32{hk.i, jk.i})
		}
	}
	if p.positional && !p.sorted {
		// Walked in shortlex order: the lists in case-id order, as the
		// merge gives them (no label is unpaired).
		sortByCase(anchoring, byCase)
		byPair := func(x *[2]int32) string { return in.Human.CaseID(int(x[0])) }
		sortByCase(judgeAbove, byPair)
		sortByCase(humanAbove, byPair)
	}
	d.JudgeAbove = disagreements(p, judgeAbove)
	d.HumanAbove = disagreements(p, humanAbove)
	d.Agreement = metrics.Agreement(d.Confusion)
	d.Kappa = metrics.CohenKappa(d.Confusion)
	d.WeightedKappa = metrics.WeightedKappa(d.Confusion, w)
	d.CI95 = [2]float64{math.NaN(), math.NaN()}
	if !math.IsNaN(d.WeightedKappa) && in.Resamples > 0 {
		// The K×K counts are all the statistic depends on: resampled as a
		// multinomial, O(K² × resamples) whatever n is.
		iv, err := metrics.KappaCI95Context(ctx, d.Confusion, w, in.Resamples, in.Seed, metrics.KappaCIMethod)
		if err != nil {
			return d, err
		}
		d.CI95, d.CIMethod, d.Unreliable = iv.CI(), iv.Method, iv.Unreliable
	}
	d.MinN, d.BelowMinN = in.Lock.MinN, d.N < in.Lock.MinN
	d.Violations = append(mismatch, anchoring...)

	switch {
	case d.N == 0:
		d.Notes = append(d.Notes, Note{Code: NoteNoPairs})
	case math.IsNaN(d.Kappa):
		d.Notes = append(d.Notes, Note{Code: NoteKappaUndefined})
	}
	unpaired := len(d.HumanOnly) + len(d.JudgeOnly)
	if unpaired > 0 {
		d.Notes = append(d.Notes, Note{Code: NoteUnpaired, Human: len(d.HumanOnly), Judge: len(d.JudgeOnly)})
	}
	if in.MaxUnpaired != nil && d.Gated {
		d.UnpairedAllowed = in.MaxUnpaired.Allowed(d.N + unpaired)
		if unpaired > d.UnpairedAllowed {
			d.UnpairedOver = true
			d.Notes = append(d.Notes, Note{Code: NoteTooManyUnpaired, N: unpaired, Spec: in.MaxUnpaired.Spec,
				Limit: d.UnpairedAllowed, Of: d.N + unpaired})
		}
	}
	switch {
	case len(mismatch) > 0:
		d.Status, d.Valid = StatusConstructMismatch, false
		d.Notes = append(d.Notes, Note{Code: NoteConstructMismatch, Construct: ld.Construct,
			HumanConstructs: d.HumanConstructs, JudgeConstructs: d.JudgeConstructs})
	case len(anchoring) > 0:
		d.Status = StatusAnchoringViolation
	case d.BelowMinN && d.Gated:
		// Too few pairs to gate on: two agreeing pairs give kappa 1.
		d.Status = outcome.Fail
	case math.IsNaN(d.WeightedKappa):
		// Undefined kappa is no evidence of agreement: a gated dimension fails.
		d.Status = outcome.Fail
	case d.WeightedKappa >= in.Lock.MinKappa:
		d.Status = outcome.Pass
	default:
		d.Status = outcome.Fail
	}
	if d.BelowMinN {
		d.Notes = append(d.Notes, Note{Code: NoteBelowMinN, N: d.N, Limit: d.MinN, DefaultMinN: !in.Lock.MinNSet, Gated: d.Gated})
	}
	if d.Status == outcome.Fail && d.WeightedKappa < in.Lock.MinKappa {
		d.Notes = append(d.Notes, Note{Code: NoteKappaBelow, Value: d.WeightedKappa, Threshold: in.Lock.MinKappa, Gated: d.Gated})
	}
	if d.Status == outcome.Fail && math.IsNaN(d.WeightedKappa) && d.Gated {
		d.Notes = append(d.Notes, Note{Code: NoteUndefinedFails})
	}
	return d, nil
}

// disagreements are the Disagreements of the pairs of human and judge label
// indices, in their order; nil for none.
func disagreements(p *pairing, pairs [][2]int32) []Disagreement {
	if len(pairs) == 0 {
		return nil
	}
	out := make([]Disagreement, len(pairs))
	for k, x := range pairs {
		h, j := int(x[0]), int(x[1])
		out[k] = Disagreement{p.human.ls.CaseID(h), int(p.human.bin(h)), int(p.judge.bin(j))}
	}
	return out
}

// constructs returns the distinct constructs the labels of keys (sorted by case
// id) declare, sorted, and appends a violation, in case-id order, for every label
// whose construct is not want.
func constructs(s *side, keys dimLabels, want string, vs []Violation) ([]string, []Violation) {
	seen := make([]bool, len(s.constructs))
	wantCode := slices.Index(s.constructs, want)
	var codes constructCodes
	for k := range keys.len() {
		key := keys.at(k)
		code := codes.of(s, int(key.i))
		seen[code] = true
		if code != wantCode {
			l := s.ls.Label(int(key.i))
			vs = append(vs, Violation{CaseID: l.CaseID, Kind: ConstructMismatch, File: l.File, Line: l.Line, Side: l.Side, Construct: l.Construct, Want: want})
		}
	}
	out := []string{}
	for c, ok := range seen {
		if ok {
			out = append(out, s.constructs[c])
		}
	}
	sort.Strings(out)
	return out, vs
}

// Finish computes the gates: a gated dimension that is not pass fails, any
// dimension with a violation fails (gated or not: violations are integrity
// problems), a gated dimension with more unpaired labels than --max-unpaired
// allows fails, a changed lock fails, a failed git anchoring check fails. An
// ungated dimension without violations is off.
func (r *Result) Finish() {
	r.Gates = nil
	for _, d := range r.Dimensions {
		g := outcome.New("kappa:"+d.Name, outcome.Off)
		g.Group, g.Measure, g.N = d.Name, MeasureWeightedKappa, int64(d.N)
		g.Threshold = r.Lock.MinKappa
		if d.Valid {
			g.Value = d.WeightedKappa
		}
		switch {
		case len(d.Violations) > 0:
			g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.Violations, Name: string(d.Status), N: int64(len(d.Violations))}}
		case !d.Gated:
			g.Why = []outcome.Clause{{Code: outcome.NotGated}}
		case d.Status == outcome.Pass:
			g.Status = outcome.Pass
		case d.BelowMinN:
			g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.BelowMinN, N: int64(d.N), M: int64(d.MinN)}}
		case math.IsNaN(d.WeightedKappa):
			g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.KappaUndefined}}
		default:
			g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.KappaBelow}}
		}
		r.Gates = append(r.Gates, g)
	}
	if r.MaxUnpaired != nil {
		for _, d := range r.Dimensions {
			if !d.Gated {
				continue
			}
			unpaired := len(d.HumanOnly) + len(d.JudgeOnly)
			g := outcome.New("unpaired:"+d.Name, outcome.Pass)
			g.Group, g.Measure, g.Value, g.Threshold, g.N = d.Name, outcome.MeasureUnpairedLabels, float64(unpaired), float64(d.UnpairedAllowed), int64(d.N+unpaired)
			if d.UnpairedOver {
				g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.TooManyUnpaired, Text: r.MaxUnpaired.Spec}}
			}
			r.Gates = append(r.Gates, g)
		}
	}
	if lc := r.LockCheck; lc != nil {
		g := outcome.New("lock", outcome.Pass)
		if len(lc.Changed) > 0 {
			g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.LockChanged, Text: lc.Base}}
		}
		r.Gates = append(r.Gates, g)
	}
	if ga := r.GitAnchor; ga != nil {
		g := outcome.New("git-anchoring", outcome.Pass)
		if !ga.OK {
			g.Status, g.Why = outcome.Fail, ga.Findings
		}
		r.Gates = append(r.Gates, g)
	}
	r.panelGates()
}
