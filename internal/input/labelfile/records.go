package labelfile

import (
	"math"
	"strings"
	"time"
	"unsafe"
)

// Labels are the labels of one file, kept compact: a column per field, each
// pointer-free (the collector never scans them), and a field whose value is
// the same for every label so far (a file's single construct, timestamp or
// location; no rater) takes no memory per label until a label differs. The
// case ids are copied into shared slabs; the dimension, construct and rater
// names and the timestamps' locations are interned; a score is a code into
// the file's distinct scores (a float64 per label once there are more than
// 65,535 of them); the line is the label's index plus an offset that changes
// only at blank lines. A label of the 1M-pair benchmark takes 16 bytes
// (BENCHMARKS.md). Label(i) is the label as a Label value.
//
// Another field of a label is another column (an interned string as a code
// like names, a number as itself) added to Label and add; a label whose
// values do not fit (more than 65,534 distinct names, more than 64 locations,
// a bin over 65,534, another file or side) is kept whole in spill.
type Labels struct {
	File string
	Side LabelSide
	hint int // the expected number of labels: a column's capacity

	ids     []uint64       // every label's case id: slab << 44 | offset << 24 | length
	dimCons column[uint32] // dimension code << 16 | construct code; spillCode << 16: in spill
	bins    column[uint16] // bin + 1; 0: no bin
	scores  column[uint16] // code into scoreVals (NaN: no score)
	scoreF  []float64      // every score once the codes are used up (NaN: no score)
	sec     column[int64]  // At: Unix seconds
	nsec    column[int32]  // At: nanoseconds
	loc     column[uint8]  // At: location code
	rater   column[uint32] // rater name code + 1 (0: no rater) | adjBit: Adjudication
	lines   []lineRun      // where line − index changes (none: line = index + 1)
	// lineCol is every label's line once the runs would take more memory
	// (lines out of order, many blank lines); bigLines those over 2³²−1.
	lineCol  []uint32
	bigLines map[int]int
	spill    map[int]Label    // labels that do not fit the columns
	locs     []*time.Location // timestamp locations by code

	scoreVals  []float64
	scoreCodes map[uint64]uint16
	lastScore  struct {
		bits uint64
		code uint16
		set  bool
	}

	slabs [][]byte // case ids; a slab is never written again where ids were handed out
	cur   []byte   // the slab being filled
	names []string
	codes map[string]uint16
	// increasing is Increasing's answer once known: 1 yes, 2 no.
	increasing uint8
	last       [3]struct { // the last name looked up per field (dimension, construct, rater)
		s    string
		code uint16
		set  bool
	}
}

// column is one field of every label: one value while every label has the
// same, a slice from the first label that differs.
type column[T comparable] struct {
	v     []T
	first T
	set   bool
}

// put sets the value of label i, the next label (i = labels so far).
func (c *column[T]) put(i int, x T, hint int) {
	switch {
	case c.v != nil:
		c.v = append(c.v, x)
	case !c.set:
		c.first, c.set = x, true
	case x != c.first:
		c.v = make([]T, i, max(hint, i+1))
		for k := range c.v {
			c.v[k] = c.first
		}
		c.v = append(c.v, x)
	}
}

// keep gives label i the value every label has so far (for a spilled label).
func (c *column[T]) keep(i int, hint int) { c.put(i, c.first, hint) }

func (c *column[T]) get(i int) T {
	if c.v == nil {
		return c.first
	}
	return c.v[i]
}

// lineRun: from label index from on, line = index + 1 + delta.
type lineRun struct {
	from, delta int
}

const (
	spillCode = math.MaxUint16
	idSlab    = 1 << 20
	// adjBit is the Adjudication flag in the rater column.
	adjBit = 1 << 31
	// Case id references: slab index, offset in the slab, length.
	idLenBits = 24
	idOffBits = 20
	maxSlabs  = 1 << (64 - idLenBits - idOffBits)
)

// newLabels returns an empty Labels for n labels of file and side.
func newLabels(file string, side LabelSide, n int) *Labels {
	return &Labels{File: file, Side: side, hint: n, ids: make([]uint64, 0, n), codes: map[string]uint16{}}
}

// FromLabels keeps ls (in order) as Labels, as ReadLabels would have read them.
func FromLabels(ls []Label) *Labels {
	out := newLabels("", HumanSide, len(ls))
	if len(ls) > 0 {
		out.File, out.Side = ls[0].File, ls[0].Side
	}
	for i := range ls {
		out.add(&ls[i])
	}
	out.Increasing() // known before the labels are shared
	return out
}

// Len is the number of labels.
func (ls *Labels) Len() int {
	if ls == nil {
		return 0
	}
	return len(ls.ids)
}

// All returns every label as a Label value, in order.
func (ls *Labels) All() []Label {
	if ls == nil {
		return nil
	}
	out := make([]Label, ls.Len())
	for i := range out {
		out[i] = ls.Label(i)
	}
	return out
}

// add appends l. l.CaseID may be a view of memory that changes after the
// call (it is copied); its other strings are kept as they are.
func (ls *Labels) add(l *Label) {
	i := len(ls.ids)
	dim, okD := ls.code(0, l.Dimension)
	cons, okC := ls.code(1, l.Construct)
	loc, okL := ls.locCode(l.At.Location())
	var rater uint32
	okR := true
	if l.Rater != "" {
		var rc uint16
		rc, okR = ls.code(2, l.Rater)
		rater = uint32(rc) + 1
	}
	if l.Adjudication {
		rater |= adjBit
	}
	if !okD || !okC || !okL || !okR || l.File != ls.File || l.Side != ls.Side ||
		l.HasBin && (l.Bin < 0 || l.Bin >= math.MaxUint16) || l.HasScore && math.IsNaN(l.Score) ||
		len(l.CaseID) >= 1<<idLenBits || len(l.CaseID) > cap(ls.cur)-len(ls.cur) && len(ls.slabs) >= maxSlabs {
		ls.addSpill(i, l)
		return
	}
	h := ls.hint
	ls.ids = append(ls.ids, ls.storeID(l.CaseID))
	ls.dimCons.put(i, uint32(dim)<<16|uint32(cons), h)
	var bin uint16
	if l.HasBin {
		bin = uint16(l.Bin) + 1 //nolint:gosec // below MaxUint16, checked above
	}
	ls.bins.put(i, bin, h)
	score := math.NaN()
	if l.HasScore {
		score = l.Score
	}
	ls.putScore(i, score)
	ls.sec.put(i, l.At.Unix(), h)
	ls.nsec.put(i, int32(l.At.Nanosecond()), h) //nolint:gosec // in [0, 1e9)
	ls.loc.put(i, loc, h)
	ls.rater.put(i, rater, h)
	ls.putLine(i, l.Line)
}

// addSpill keeps l whole as label i.
func (ls *Labels) addSpill(i int, l *Label) {
	if ls.spill == nil {
		ls.spill = map[int]Label{}
	}
	c := *l
	c.CaseID = strings.Clone(l.CaseID)
	ls.spill[i] = c
	h := ls.hint
	ls.ids = append(ls.ids, 0)
	ls.dimCons.put(i, spillCode<<16, h)
	ls.bins.keep(i, h)
	if ls.scoreF != nil {
		ls.scoreF = append(ls.scoreF, math.NaN())
	} else {
		ls.scores.keep(i, h)
	}
	ls.sec.keep(i, h)
	ls.nsec.keep(i, h)
	ls.loc.keep(i, h)
	ls.rater.keep(i, h)
	if ls.lineCol != nil {
		ls.lineCol = append(ls.lineCol, 0) // its line is in spill
	}
}

// putLine records label i's line.
func (ls *Labels) putLine(i, line int) {
	if ls.lineCol == nil {
		d := line - i - 1
		n := len(ls.lines)
		if n == 0 && d == 0 || n > 0 && ls.lines[n-1].delta == d {
			return
		}
		if n < 16+i/8 {
			ls.lines = append(ls.lines, lineRun{i, d})
			return
		}
		// A run every few labels: a column of lines (4 bytes a label) from here.
		col := make([]uint32, i, max(ls.hint, i+1))
		for k := range i {
			l := ls.line(k) // a spilled label's is not read
			if l < 0 || int64(l) > math.MaxUint32 {
				ls.putBigLine(k, l)
			}
			col[k] = uint32(l) //nolint:gosec // the ones that do not fit are in bigLines
		}
		ls.lineCol, ls.lines = col, nil
	}
	if line < 0 || int64(line) > math.MaxUint32 {
		ls.putBigLine(i, line)
	}
	ls.lineCol = append(ls.lineCol, uint32(line)) //nolint:gosec // the ones that do not fit are in bigLines
}

func (ls *Labels) putBigLine(i, line int) {
	if ls.bigLines == nil {
		ls.bigLines = map[int]int{}
	}
	ls.bigLines[i] = line
}

// line is label i's line (not spilled).
func (ls *Labels) line(i int) int {
	if ls.lineCol != nil {
		if l, ok := ls.bigLines[i]; ok {
			return l
		}
		return int(ls.lineCol[i])
	}
	lo, hi := 0, len(ls.lines) // the first run after i
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ls.lines[m].from <= i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return i + 1
	}
	return i + 1 + ls.lines[lo-1].delta
}

// putScore records label i's score (NaN: none).
func (ls *Labels) putScore(i int, s float64) {
	if ls.scoreF != nil {
		ls.scoreF = append(ls.scoreF, s)
		return
	}
	bits := math.Float64bits(s)
	c := &ls.lastScore
	if !c.set || c.bits != bits {
		code, ok := ls.scoreCodes[bits]
		if !ok {
			if len(ls.scoreVals) >= math.MaxUint16 {
				// The codes are used up: every score as itself from here on.
				ls.scoreF = make([]float64, i, max(ls.hint, i+1))
				for k := range i {
					ls.scoreF[k] = ls.scoreVals[ls.scores.get(k)]
				}
				ls.scores, ls.scoreVals, ls.scoreCodes = column[uint16]{}, nil, nil
				ls.scoreF = append(ls.scoreF, s)
				return
			}
			if ls.scoreCodes == nil {
				ls.scoreCodes = map[uint64]uint16{}
			}
			code = uint16(len(ls.scoreVals)) //nolint:gosec // below MaxUint16, checked above
			ls.scoreCodes[bits] = code
			ls.scoreVals = append(ls.scoreVals, s)
		}
		c.bits, c.code, c.set = bits, code, true
	}
	ls.scores.put(i, c.code, ls.hint)
}

// score is label i's score (NaN: none; not spilled).
func (ls *Labels) score(i int) float64 {
	if ls.scoreF != nil {
		return ls.scoreF[i]
	}
	return ls.scoreVals[ls.scores.get(i)]
}

// storeID copies id into the slabs and returns where it is.
func (ls *Labels) storeID(id string) uint64 {
	if id == "" {
		return 0
	}
	if len(id) > cap(ls.cur)-len(ls.cur) {
		ls.cur = make([]byte, 0, max(idSlab, len(id)))
		ls.slabs = append(ls.slabs, ls.cur)
	}
	off := len(ls.cur) // below idSlab: a longer id has a slab of its own
	ls.cur = append(ls.cur, id...)
	ls.slabs[len(ls.slabs)-1] = ls.cur
	return uint64(len(ls.slabs)-1)<<(idLenBits+idOffBits) | uint64(off)<<idLenBits | uint64(len(id)) //nolint:gosec // bounds checked by add
}

// code is the code of name (field 0: dimension, 1: construct, 2: rater); ok
// is false when the codes are used up.
func (ls *Labels) code(field int, name string) (uint16, bool) {
	if c := &ls.last[field]; c.set && c.s == name {
		return c.code, true
	}
	code, ok := ls.codes[name]
	if !ok {
		if len(ls.names) >= spillCode {
			return 0, false
		}
		code = uint16(len(ls.names)) //nolint:gosec // below spillCode, checked above
		ls.codes[name] = code
		ls.names = append(ls.names, name)
	}
	ls.last[field].s, ls.last[field].code, ls.last[field].set = ls.names[code], code, true
	return code, true
}

// locCode is the code of a timestamp's location: the same *time.Location, or
// a fixed zone of the same name and offset (time.Parse makes one per
// timestamp with an offset), share one.
func (ls *Labels) locCode(loc *time.Location) (uint8, bool) {
	for i, l := range ls.locs {
		if l == loc || sameFixedZone(l, loc) {
			return uint8(i), true
		}
	}
	if len(ls.locs) >= 64 {
		return 0, false // more distinct zones than a label file has: kept whole
	}
	ls.locs = append(ls.locs, loc)
	return uint8(len(ls.locs) - 1), true //nolint:gosec // at most 64
}

// sameFixedZone reports whether a and b are both fixed zones (not UTC, not
// Local) of the same name and offset at every instant.
func sameFixedZone(a, b *time.Location) bool {
	if a == time.UTC || b == time.UTC || a == time.Local || b == time.Local || a.String() != b.String() {
		return false
	}
	// A fixed zone has one offset: the same at two far-apart instants.
	t0, t1 := time.Unix(0, 0), time.Unix(1<<33, 0)
	na, oa := t0.In(a).Zone()
	nb, ob := t0.In(b).Zone()
	na1, oa1 := t1.In(a).Zone()
	nb1, ob1 := t1.In(b).Zone()
	return na == nb && oa == ob && na1 == nb1 && oa1 == ob1 && oa == oa1 && na == na1
}

// spilled reports whether label i is kept whole in spill.
func (ls *Labels) spilled(i int) bool {
	return ls.dimCons.get(i)>>16 == spillCode
}

// CaseID is label i's case id (a view of the slab: no copy).
func (ls *Labels) CaseID(i int) string {
	ref := ls.ids[i]
	n := ref & (1<<idLenBits - 1)
	if n == 0 {
		if ls.spilled(i) {
			return ls.spill[i].CaseID
		}
		return ""
	}
	s := ls.slabs[ref>>(idLenBits+idOffBits)]
	off := ref >> idLenBits & (1<<idOffBits - 1)
	return unsafe.String(unsafe.SliceData(s[off:]), n) //nolint:gosec // G103: the slab's bytes are never written again
}

// Dimension is label i's dimension.
func (ls *Labels) Dimension(i int) string {
	c := ls.dimCons.get(i)
	if c>>16 == spillCode {
		return ls.spill[i].Dimension
	}
	return ls.names[c>>16]
}

// Construct is label i's construct.
func (ls *Labels) Construct(i int) string {
	c := ls.dimCons.get(i)
	if c>>16 == spillCode {
		return ls.spill[i].Construct
	}
	return ls.names[c&0xffff]
}

// Bin is label i's bin (Label.Bin).
func (ls *Labels) Bin(i int) int {
	if ls.spilled(i) {
		return ls.spill[i].Bin
	}
	return int(max(ls.bins.get(i), 1)) - 1
}

// At is label i's timestamp (Label.At).
func (ls *Labels) At(i int) time.Time {
	if ls.spilled(i) {
		return ls.spill[i].At
	}
	return time.Unix(ls.sec.get(i), int64(ls.nsec.get(i))).In(ls.locs[ls.loc.get(i)])
}

// Rater is label i's rater ("" when it names none).
func (ls *Labels) Rater(i int) string {
	if ls.spilled(i) {
		return ls.spill[i].Rater
	}
	r := ls.rater.get(i) &^ adjBit
	if r == 0 {
		return ""
	}
	return ls.names[r-1]
}

// Adjudication is label i's Adjudication flag.
func (ls *Labels) Adjudication(i int) bool {
	if ls.spilled(i) {
		return ls.spill[i].Adjudication
	}
	return ls.rater.get(i)&adjBit != 0
}

// Label is label i.
func (ls *Labels) Label(i int) Label {
	c := ls.dimCons.get(i)
	if c>>16 == spillCode {
		return ls.spill[i]
	}
	l := Label{File: ls.File, Line: ls.line(i), Side: ls.Side, CaseID: ls.CaseID(i), Dimension: ls.names[c>>16],
		Construct: ls.names[c&0xffff], At: ls.At(i), Rater: ls.Rater(i), Adjudication: ls.Adjudication(i)}
	if s := ls.score(i); !math.IsNaN(s) {
		l.Score, l.HasScore = s, true
	}
	if b := ls.bins.get(i); b > 0 {
		l.Bin, l.HasBin = int(b)-1, true
	}
	return l
}

// Before reports whether label i of a was made before label j of b
// (a.At(i).Before(b.At(j)), without making either time.Time).
func Before(a *Labels, i int, b *Labels, j int) bool {
	if a.spilled(i) || b.spilled(j) {
		return a.At(i).Before(b.At(j))
	}
	as, bs := a.sec.get(i), b.sec.get(j)
	return as < bs || as == bs && a.nsec.get(i) < b.nsec.get(j)
}
