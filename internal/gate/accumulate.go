package gate

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Default bounds of the lists a Result keeps; everything beyond is counted.
const (
	DefaultMaxProblems = 10000
	DefaultMaxMissed   = 200
	maxUnknownExamples = 5
	// maxUnknownKeys bounds the distinct unknown key names counted; the cases
	// with other unknown keys are counted together.
	maxUnknownKeys = 100
)

// KeyCount is a top-level case key the cases format does not know and the
// number of cases that carry it. Key "" counts the cases with other unknown
// keys beyond the first maxUnknownKeys names.
type KeyCount struct {
	Key   string
	Cases int64
}

type cellKey struct{ typ, locale string }

// cell accumulates the cases of one (type, locale) pair; the groups are merged
// from cells at the end, so each case costs one histogram update per metric.
type cell struct {
	total, scored int64
	withRelevant  int64                               // scored cases with relevant_ids
	measures      [metrics.NumCase]*metrics.Histogram // one per registered measure
	extra         map[string]*metrics.Histogram
}

func newCell() *cell {
	c := &cell{}
	for i := range c.measures {
		c.measures[i] = metrics.NewHistogram()
	}
	return c
}

// Accumulator takes case results in file order (from one goroutine) and keeps
// only bounded state: a 64-bit hash and the line of each case id for duplicate
// detection (idlog.go),
// histograms of the scores, and bounded lists of problems and missed cases.
type Accumulator struct {
	MaxProblems int // 0: DefaultMaxProblems
	MaxMissed   int // 0: DefaultMaxMissed

	seen  idLog
	cells map[cellKey]*cell

	total, scored, precomputed int64

	problems      []Problem
	problemsTotal int64
	missed        []*CaseResult
	missedTotal   int64

	unknownEntries, unknownCases int64
	unknownExamples              []string

	unknownKeys     map[string]int64
	unknownKeysMore int64
}

// NewAccumulator returns an empty Accumulator.
func NewAccumulator() *Accumulator {
	return &Accumulator{cells: make(map[cellKey]*cell)}
}

// idHash is FNV-1a 64 of a case id. Two distinct ids collide with probability
// about n²/2^65 (≈ 3·10⁻⁸ for a million cases), the price of not keeping ids.
func idHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Add records one case result. It keeps a copy, never r itself, and copies of
// the strings it keeps (of problems, missed cases, groups, unknown keys and
// ids): they may view a buffer the reader reuses (casefile.MapOptions). A case id seen
// before is an input error, which Add may report or not: call Duplicate once
// the stream ends (however it ends) for the error of the earliest duplicate.
func (a *Accumulator) Add(r *CaseResult) error {
	// The id set keeps 32-bit line numbers (12 bytes a case): a line beyond is an
	// input error, never a wrong "first at line" in a later message.
	line := r.Line
	if line < 0 || line > math.MaxUint32 {
		return input.Errorf(r.File, r.Line, "more than %d lines: split the cases file", uint32(math.MaxUint32))
	}
	if err := a.seen.add(idHash(r.ID), uint32(line), r.ID, r.File); err != nil {
		return err
	}
	a.total++

	maxP := a.MaxProblems
	if maxP <= 0 {
		maxP = DefaultMaxProblems
	}
	for _, p := range r.Problems {
		a.problemsTotal++
		if len(a.problems) < maxP {
			p.CaseID, p.GoldID = strings.Clone(p.CaseID), strings.Clone(p.GoldID)
			a.problems = append(a.problems, p)
		}
	}
	if r.UnknownRetrieved > 0 {
		a.unknownCases++
		a.unknownEntries += int64(r.UnknownRetrieved)
		if len(a.unknownExamples) < maxUnknownExamples && !slices.Contains(a.unknownExamples, r.FirstUnknown) {
			a.unknownExamples = append(a.unknownExamples, strings.Clone(r.FirstUnknown))
		}
	}
	if r.Precomputed {
		a.precomputed++
	}
	more := false
	for _, k := range r.UnknownKeys {
		if _, ok := a.unknownKeys[k]; !ok && len(a.unknownKeys) >= maxUnknownKeys {
			more = true
			continue
		}
		if a.unknownKeys == nil {
			a.unknownKeys = map[string]int64{}
		}
		if _, ok := a.unknownKeys[k]; !ok {
			k = strings.Clone(k) // the map keeps it: not the reader's block
		}
		a.unknownKeys[k]++
	}
	if more {
		a.unknownKeysMore++
	}

	key := cellKey{r.Type, r.Locale}
	c := a.cells[key]
	if c == nil {
		c = newCell()
		a.cells[cellKey{strings.Clone(r.Type), strings.Clone(r.Locale)}] = c
	}
	c.total++
	if !r.Scored {
		return nil
	}
	a.scored++
	c.scored++
	if r.WithRelevant {
		c.withRelevant++
	}
	for i, ok := range r.Has {
		if ok {
			c.measures[i].Add(r.Scores[i])
		}
	}
	for k, v := range r.Extra {
		if c.extra == nil {
			c.extra = make(map[string]*metrics.Histogram)
		}
		h := c.extra[k]
		if h == nil {
			h = metrics.NewHistogram()
			c.extra[k] = h
		}
		h.Add(v)
	}
	if r.Missed() {
		a.missedTotal++
		maxM := a.MaxMissed
		if maxM <= 0 {
			maxM = DefaultMaxMissed
		}
		if len(a.missed) < maxM {
			kept := *r
			kept.Out, kept.Problems, kept.Extra = nil, nil, nil
			// The strings may view the reader's reused block
			// (casefile.MapOptions.StringsInLine): keep copies.
			kept.ID, kept.Locale, kept.Type = strings.Clone(kept.ID), strings.Clone(kept.Locale), strings.Clone(kept.Type)
			kept.Query, kept.FirstUnknown = strings.Clone(kept.Query), strings.Clone(kept.FirstUnknown)
			kept.Gold, kept.TopK = input.CloneStrings(kept.Gold), input.CloneStrings(kept.TopK)
			kept.UnknownKeys = input.CloneStrings(kept.UnknownKeys)
			a.missed = append(a.missed, &kept)
		}
	}
	return nil
}

// unknownKeyCounts returns the unknown keys by number of cases, then name; the
// cases with keys beyond the counted names last, under "".
func (a *Accumulator) unknownKeyCounts() []KeyCount {
	out := make([]KeyCount, 0, len(a.unknownKeys)+1)
	for k, n := range a.unknownKeys {
		out = append(out, KeyCount{k, n})
	}
	slices.SortFunc(out, func(x, y KeyCount) int {
		if c := cmp.Compare(y.Cases, x.Cases); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	if a.unknownKeysMore > 0 {
		out = append(out, KeyCount{"", a.unknownKeysMore})
	}
	return out
}
