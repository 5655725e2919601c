package calibrate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The rater panel (ADR-0028). Under the lock's `raters: panel` every human label
// names its rater, a case may have several raters, and the owner may adjudicate a
// case the panel disagrees on. The judge is compared with one human label per
// case: the adjudication where there is one, else the median of the panel's
// bins (the lower of the two middle bins when a panel of even size splits), so
// every case counts once whatever the panel's size. Beside the judge's kappa the
// report gives the panel's own agreement, Krippendorff's alpha over the lock's
// bins with the lock's kappa weights as its disagreement (so both are on the
// same scale), because a judge cannot be held to more agreement than the humans
// reach with one another.

// PanelDimension is the rater panel of one dimension.
type PanelDimension struct {
	Raters []string // the distinct rater ids of the panel labels (not adjudications), sorted
	Cases  int      // cases with at least one panel label
	// Units is alpha's n: the cases with at least two panel labels; Values the
	// panel labels on them.
	Units  int64
	Values int64
	// Alpha is Krippendorff's alpha of the panel (NaN when undefined: no case with
	// two labels, or every label in one bin).
	Alpha float64
	// CI95 is alpha's BCa bootstrap interval over cases (metrics.AlphaCI95Context),
	// NaN when undefined or disabled; CIMethod "" then.
	CI95         [2]float64
	CIMethod     string
	CIUnreliable bool
	// Disagreed counts the cases whose panel labels are not all in one bin;
	// Unadjudicated lists those without an adjudication (the median stands).
	Disagreed     int
	Unadjudicated []string
	Adjudications []Adjudication // by case id
	// AlphaBelowMinKappa: the panel agrees less than the lock's min_kappa asks of
	// the judge.
	AlphaBelowMinKappa bool
}

// Adjudication is the owner's label on a case the panel disagrees on.
type Adjudication struct {
	CaseID    string
	Rater     string
	Bin       int
	PanelBins []int // the panel's bins on the case, ascending
	Median    int   // the bin the panel's median would have given
	File      string
	Line      int
}

// panel is the rater panel of every dimension, and the one human label per case
// the judge is compared with.
type panel struct {
	dims      map[string]*PanelDimension
	consensus []labelfile.Label
	// constructs and mismatches are the human side's construct check over every
	// panel label (the consensus labels carry the lock's construct).
	constructs map[string][]string
	mismatch   map[string][]Violation
}

// panelGroup is the human labels of one (dimension, case).
type panelGroup struct {
	labels []*labelfile.Label // panel labels, in file order
	adj    *labelfile.Label
}

// firstError keeps the input error of the smallest line.
type firstError struct{ err *input.Error }

func (f *firstError) add(l *labelfile.Label, format string, args ...any) {
	if f.err == nil || l.Line < f.err.Line {
		f.err = input.Errorf(l.File, l.Line, format, args...)
	}
}

// buildPanel checks the human labels against the lock's rater framing and, under
// `raters: panel`, reduces them to one label per case. Under `raters: single` it
// returns nil after the checks: no adjudication, one label per (case, dimension).
// A broken rule is an *input.Error naming the label (exit 2): the rules are
// decidable from the labels file alone, like a duplicate label, and a report that
// silently dropped or applied the offending label would measure something else.
func buildPanel(ctx context.Context, in Input) (*panel, error) {
	lock := in.Lock
	var fe firstError
	single := lock.Raters != labelfile.RatersPanel
	if single {
		// The common case, kept linear and without a map: no adjudication, and
		// with at most one rater id in the file a second label of a case is a
		// duplicate, which the reader refuses (Evaluate keeps the last).
		// Read from the records, without a Label value per label.
		raters := 0
		first := ""
		for i := range in.Human.Len() {
			if in.Human.Adjudication(i) {
				l := in.Human.Label(i)
				fe.add(&l, "an adjudication needs a rater panel: the lock's raters is %q, so each case has one human label and nothing to adjudicate", lock.Raters)
			}
			if r := in.Human.Rater(i); raters == 0 || raters == 1 && r != first {
				raters++
				first = r
			}
		}
		if fe.err != nil {
			return nil, fe.err
		}
		if raters <= 1 {
			return nil, nil
		}
	}
	// A panel's labels as Label values: the groups point into them.
	hs := in.Human.All()
	groups := map[[2]string]*panelGroup{}
	var keys [][2]string
	for i := range hs {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		l := &hs[i]
		if _, ok := lock.Dimensions[l.Dimension]; !ok {
			continue
		}
		if l.Adjudication && single {
			fe.add(l, "an adjudication needs a rater panel: the lock's raters is %q, so each case has one human label and nothing to adjudicate", lock.Raters)
			continue
		}
		if !single && l.Rater == "" {
			fe.add(l, "the lock's raters is %q: every human label names its rater (%q)", labelfile.RatersPanel, labelfile.RaterKey)
			continue
		}
		if owner := lock.Owner; owner != "" {
			// The owner saw the judge's scores: never a panel rater (outside the
			// carried-over dimensions, whose labels are the base's), and the
			// only one who adjudicates.
			switch {
			case l.Adjudication && l.Rater != owner:
				fe.add(l, "an adjudication by rater %q of case %q, dimension %q: the lock's owner is %q, who alone adjudicates",
					l.Rater, l.CaseID, l.Dimension, owner)
				continue
			case !l.Adjudication && l.Rater == owner && !lock.Dimensions[l.Dimension].CarriedOver:
				fe.add(l, "a panel label by the owner %q on case %q, dimension %q: the owner saw the judge's scores, and the panel never did, so the owner's labels are not panel labels (the owner adjudicates, with \"adjudication\": true, where the panel disagrees)",
					owner, l.CaseID, l.Dimension)
				continue
			}
		}
		k := [2]string{l.Dimension, l.CaseID}
		g := groups[k]
		if g == nil {
			g = &panelGroup{}
			groups[k] = g
			keys = append(keys, k)
		}
		switch {
		case l.Adjudication && g.adj != nil:
			fe.add(l, "a second adjudication of case %q, dimension %q (rater %q; the first, by rater %q, is on line %d): a case has one adjudication",
				l.CaseID, l.Dimension, l.Rater, g.adj.Rater, g.adj.Line)
		case l.Adjudication:
			g.adj = l
		case single && len(g.labels) > 0 && g.labels[0].Rater != l.Rater:
			fe.add(l, "a second human label for case %q, dimension %q (rater %q; the first, rater %q, is on line %d): the lock's raters is %q, one label per case; a panel needs \"raters\": %q in the lock",
				l.CaseID, l.Dimension, l.Rater, g.labels[0].Rater, g.labels[0].Line, labelfile.RatersSingle, labelfile.RatersPanel)
		case single && len(g.labels) > 0:
			// The same rater twice: a duplicate the reader refuses; the last counts.
		default:
			g.labels = append(g.labels, l)
		}
	}
	// An adjudication stands only where the panel disagrees.
	for _, k := range keys {
		g := groups[k]
		if g.adj == nil {
			continue
		}
		bins := groupBins(g)
		if len(bins) < 2 || bins[0] == bins[len(bins)-1] {
			what := fmt.Sprintf("the panel agrees (bins %s)", binList(bins))
			switch len(bins) {
			case 0:
				what = "no panel label"
			case 1:
				what = fmt.Sprintf("a single panel label (bin %d)", bins[0])
			}
			fe.add(g.adj, "adjudication of case %q, dimension %q where the panel does not disagree (%s): the owner adjudicates only cases the panel raters disagree on",
				g.adj.CaseID, g.adj.Dimension, what)
		} else if !slices.Contains(bins, g.adj.Bin) {
			// Between the panel's labels, never beside them: a bin no rater
			// gave is the owner relabelling the case.
			fe.add(g.adj, "adjudication of case %q, dimension %q to bin %d, which no panel rater gave (panel bins %s): the owner adjudicates between the panel's labels; a bin outside them relabels the case",
				g.adj.CaseID, g.adj.Dimension, g.adj.Bin, binList(bins))
		}
	}
	if fe.err != nil {
		return nil, fe.err
	}
	if single {
		return nil, nil
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	k := lock.NumBins()
	w := metrics.KappaWeights(k, lock.KappaWeighting)
	p := &panel{dims: map[string]*PanelDimension{}, constructs: map[string][]string{}, mismatch: map[string][]Violation{}}
	units := map[string]*metrics.AlphaUnits{}
	raters := map[string]map[string]bool{}
	seenC := map[string]map[string]bool{}
	for _, name := range lock.DimensionNames() {
		p.dims[name] = &PanelDimension{Raters: []string{}}
		units[name] = metrics.NewAlphaUnits(k)
		raters[name], seenC[name] = map[string]bool{}, map[string]bool{}
	}
	p.consensus = make([]labelfile.Label, 0, len(keys))
	for _, key := range keys {
		g := groups[key]
		name := key[0]
		pd := p.dims[name]
		construct := lock.Dimensions[name].Construct
		all := g.labels
		if g.adj != nil {
			all = append(slices.Clip(all), g.adj)
		}
		latest := all[0]
		for _, l := range g.labels {
			raters[name][l.Rater] = true
		}
		for _, l := range all {
			seenC[name][l.Construct] = true
			if l.Construct != construct {
				p.mismatch[name] = append(p.mismatch[name], Violation{CaseID: l.CaseID, Kind: ConstructMismatch, File: l.File, Line: l.Line,
					Side: l.Side, Construct: l.Construct, Want: construct})
			}
			if l.At.After(latest.At) {
				latest = l // the consensus is as old as its newest label
			}
		}
		bins := groupBins(g)
		vals := make([]int, 0, len(g.labels))
		for _, l := range g.labels {
			vals = append(vals, l.Bin)
		}
		if units[name].Add(vals) {
			pd.Values += int64(len(vals))
		}
		median := -1
		if len(bins) > 0 {
			pd.Cases++
			median = bins[(len(bins)-1)/2]
			if bins[0] != bins[len(bins)-1] {
				pd.Disagreed++
			}
		}
		bin := median
		if g.adj != nil {
			bin = g.adj.Bin
			pd.Adjudications = append(pd.Adjudications, Adjudication{CaseID: g.adj.CaseID, Rater: g.adj.Rater, Bin: g.adj.Bin,
				PanelBins: bins, Median: median, File: g.adj.File, Line: g.adj.Line})
		} else if len(bins) > 0 && bins[0] != bins[len(bins)-1] {
			pd.Unadjudicated = append(pd.Unadjudicated, key[1])
		}
		c := *latest
		c.Bin, c.HasBin, c.Score, c.HasScore, c.Construct, c.Adjudication = bin, true, 0, false, construct, false
		p.consensus = append(p.consensus, c)
	}
	for _, name := range lock.DimensionNames() {
		pd := p.dims[name]
		for r := range raters[name] {
			pd.Raters = append(pd.Raters, r)
		}
		slices.Sort(pd.Raters)
		cs := []string{}
		for c := range seenC[name] {
			cs = append(cs, c)
		}
		slices.Sort(cs)
		p.constructs[name] = cs
		slices.SortStableFunc(p.mismatch[name], func(a, b Violation) int { return cmp.Compare(a.CaseID, b.CaseID) })
		u := units[name]
		pd.Units = u.Units()
		pd.Alpha = u.Alpha(w)
		pd.CI95 = [2]float64{math.NaN(), math.NaN()}
		if in.Resamples > 0 && !math.IsNaN(pd.Alpha) {
			iv, err := metrics.AlphaCI95Context(ctx, u, w, in.Resamples, in.Seed)
			if err != nil {
				return nil, err
			}
			pd.CI95, pd.CIMethod, pd.CIUnreliable = iv.CI(), iv.Method, iv.Unreliable
		}
		pd.AlphaBelowMinKappa = !math.IsNaN(pd.Alpha) && pd.Alpha < lock.MinKappa
	}
	return p, nil
}

// groupBins is the panel's bins of a case, ascending.
func groupBins(g *panelGroup) []int {
	bins := make([]int, len(g.labels))
	for i, l := range g.labels {
		bins[i] = l.Bin
	}
	slices.Sort(bins)
	return bins
}

func binList(bins []int) string {
	s := ""
	for i, b := range bins {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(b)
	}
	return s
}

// humanConstructs is the human side's construct check of dimension name over
// every panel label: the distinct constructs, and the mismatches appended to vs.
func (p *panel) humanConstructs(name string, vs []Violation) ([]string, []Violation) {
	return p.constructs[name], append(vs, p.mismatch[name]...)
}
