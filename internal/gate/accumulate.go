package gate

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"

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
	key           cellKey // its own copies of the strings
	total, scored int64
	withRelevant  int64                               // scored cases with relevant_ids
	measures      [metrics.NumCase]*metrics.Histogram // one per registered measure
	recent        [metrics.NumCase]valueCounts        // in front of measures (flush)
	extra         map[string]*metrics.Histogram
	// The cases with a cluster key, per measure (nil until one comes):
	// the groups' intervals are then computed over the clusters.
	clus      [metrics.NumCase]*metrics.ClusterTally
	extraClus map[string]*metrics.ClusterTally
}

// valueCounts counts the values of a measure in a cell in front of its
// metrics.Histogram: a small open-addressed table of (value, count), no map
// update per case. A measure of a cell takes few values (0 and 1; multiples
// of 1/|gold|; sums of a few discounts); past valueSlots·3/4 distinct values
// the table is flushed and the histogram counts the rest itself. Values are
// compared as floats (== merges 0 and -0 as the map does; the first seen is
// kept); a measure's values are never NaN.
type valueCounts struct {
	vals   [valueSlots]float64
	counts [valueSlots]int64
	used   int
	off    bool // too many distinct values: straight to the histogram
}

const valueSlots = 64

// add counts x, or reports false when the table is off (full).
func (v *valueCounts) add(x float64) bool {
	if v.off {
		return false
	}
	b := math.Float64bits(x)
	if x == 0 {
		b = 0 // -0 and 0 in one slot
	}
	for i := (b * 0x9e3779b97f4a7c15) >> 58; ; i = (i + 1) & (valueSlots - 1) {
		switch {
		case v.counts[i] == 0:
			if v.used >= valueSlots*3/4 {
				return false
			}
			v.vals[i], v.counts[i] = x, 1
			v.used++
			return true
		case v.vals[i] == x:
			v.counts[i]++
			return true
		}
	}
}

// flush moves the counts into h, in the order the values were first seen
// (so h keeps the representation of 0 it would have kept).
func (v *valueCounts) flush(h *metrics.Histogram) {
	if v.used == 0 {
		return
	}
	for i := range v.vals {
		if v.counts[i] > 0 {
			h.AddN(v.vals[i], v.counts[i])
		}
	}
	*v = valueCounts{off: v.off}
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

	seen      idLog
	cells     map[cellKey]*cell
	cellCache [16]struct { // indexed by 4 bits of a hash (cell)
		key cellKey // the map's own copies
		c   *cell
	}

	total, scored, precomputed int64

	problems      []Problem
	problemsTotal int64
	missed        []*CaseResult
	missedTotal   int64

	unknownEntries, unknownCases int64
	unknownExamples              []string

	unknownKeys     map[string]int64
	unknownKeysMore int64

	// missedFull is set once the missed list holds its MaxMissed cases:
	// read by the scorers (WantsMissed) while Add runs.
	missedFull atomic.Bool
}

// WantsMissed reports whether a missed case added after now may still be
// kept in the missed list with its query, gold and top k (false once the list
// is full: Add takes results in file order, so no later case is kept). Safe
// for concurrent use with Add: a scorer calls it as Scorer.KeepMissed.
func (a *Accumulator) WantsMissed() bool { return !a.missedFull.Load() }

// NewAccumulator returns an empty Accumulator.
func NewAccumulator() *Accumulator {
	return &Accumulator{cells: make(map[cellKey]*cell)}
}

// idHash is a 64-bit hash of a case id, wyhash's construction for short keys:
// the id's bytes in two words (overlapping loads: every byte is in one, so two
// ids of one length differ in a or in b), 16 bytes at a time before that, and
// 128-bit multiplications folded (mum) to mix them with the length. Two ids
// not chosen to collide do so with probability about n²/2^65 (≈ 3·10⁻⁸ for a
// million cases), the price of not keeping ids. A word at a time, not a byte
// (FNV-1a before: a chain of dependent multiplications per byte, about 3% of
// check's CPU on ids of 11 bytes).
func idHash(s string) uint64 {
	n := len(s)
	h := uint64(n) ^ idK2
	for len(s) > 16 {
		h = mum(input.LE64(s, 0)^idK0, input.LE64(s, 8)^h^idK1)
		s = s[16:]
	}
	var a, b uint64
	switch m := len(s); {
	case m >= 8:
		a, b = input.LE64(s, 0), input.LE64(s, m-8)
	case m >= 4:
		a, b = uint64(input.LE32(s, 0)), uint64(input.LE32(s, m-4))
	case m > 0:
		a = uint64(s[0])<<16 | uint64(s[m>>1])<<8 | uint64(s[m-1])
	}
	return mum(mum(a^idK0, b^h^idK1), uint64(n)^idK1)
}

// idHash's keys (wyhash's secret).
const (
	idK0 = 0xa0761d6478bd642f
	idK1 = 0xe7037ed1a0b428db
	idK2 = 0x8ebc6af09c88c6e3
)

// mum is the 128-bit product of a and b, its halves folded.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// Add records one case result. It keeps a copy, never r itself, and copies of
// the strings it keeps (of problems, missed cases, groups, unknown keys and
// ids): they may view a buffer the reader reuses (casefile.MapOptions). A case id seen
// before is an input error, which Add may report or not: call Duplicate once
// the stream ends (however it ends) for the error of the earliest duplicate.
func (a *Accumulator) Add(r *CaseResult) error {
	line, err := caseLine(r.File, r.Line)
	if err != nil {
		return err
	}
	h := r.idHash
	if !r.hashed {
		h = idHash(r.ID)
	}
	if err := a.seen.add(h, line, r.ID, r.File); err != nil {
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

	c := a.cell(r.Type, r.Locale)
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
		if ok && !c.recent[i].add(r.Scores[i]) {
			if !c.recent[i].off {
				c.recent[i].flush(c.measures[i])
				c.recent[i].off = true
			}
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
	if r.Cluster != "" {
		c.addClustered(r)
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
			if len(a.missed) == maxM {
				a.missedFull.Store(true)
			}
		}
	}
	return nil
}

// addClustered tallies the scores of a case with a cluster key (the tallies
// keep their own copies of the key).
func (c *cell) addClustered(r *CaseResult) {
	for i, ok := range r.Has {
		if ok {
			if c.clus[i] == nil {
				c.clus[i] = metrics.NewClusterTally()
			}
			c.clus[i].Add(r.Cluster, r.Scores[i])
		}
	}
	for k, v := range r.Extra {
		if c.extraClus == nil {
			c.extraClus = map[string]*metrics.ClusterTally{}
		}
		t := c.extraClus[k]
		if t == nil {
			t = metrics.NewClusterTally()
			c.extraClus[strings.Clone(k)] = t
		}
		t.Add(r.Cluster, v)
	}
}

// cell returns the cell of (typ, locale), made on first use. A run has a
// handful of cells: a small table keyed by a few of the strings' bytes sits
// in front of the map (no hash of both strings per case).
func (a *Accumulator) cell(typ, locale string) *cell {
	var h uint32 = uint32(len(typ))<<24 ^ uint32(len(locale))<<28 //nolint:gosec // G115: only mixed
	if typ != "" {
		h ^= uint32(typ[0])<<16 ^ uint32(typ[len(typ)-1])<<8
	}
	if locale != "" {
		h ^= uint32(locale[0])<<4 ^ uint32(locale[len(locale)-1])
	}
	h = h * 0x9e3779b1 >> 28
	e := &a.cellCache[h]
	if e.c != nil && e.key.typ == typ && e.key.locale == locale {
		return e.c
	}
	c := a.cells[cellKey{typ, locale}]
	if c == nil {
		c = newCell()
		c.key = cellKey{strings.Clone(typ), strings.Clone(locale)} // not the reader's views
		a.cells[c.key] = c
	}
	e.key, e.c = c.key, c
	return c
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
