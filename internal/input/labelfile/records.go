package labelfile

import (
	"math"
	"strings"
	"time"
	"unsafe"
)

// Labels are the labels of one file, kept compact: a pointer-free record per
// label (48 bytes: the collector never scans them), the case ids in shared
// slabs, the dimension, construct and rater names and the timestamps'
// locations interned. Label(i) is the label as a Label value.
//
// Another field of a label is added to the record (an interned string as a
// code like dim, a number as itself) and to Label and add; a label whose
// values do not fit the record (more than 65,534 distinct names or locations,
// a line number over 2³²−1, another file or side) is kept whole in spill.
type Labels struct {
	File  string
	Side  LabelSide
	recs  []record
	slabs [][]byte // case ids; a slab is never written again where ids were handed out
	cur   []byte   // the slab being filled
	names []string // dimension and construct names by code
	codes map[string]uint16
	locs  []*time.Location // timestamp locations by code
	spill map[int]Label    // labels that do not fit a record
	// increasing is Increasing's answer once known: 1 yes, 2 no.
	increasing uint8
	last       [3]struct { // the last name looked up per field (dimension, construct, rater)
		s    string
		code uint16
		set  bool
	}
}

// record is one label without pointers.
type record struct {
	id    uint64  // slab index << 32 | offset of the case id
	n     uint32  // case id length
	line  uint32  // 1-based line
	sec   int64   // At: Unix seconds
	nsec  int32   // At: nanoseconds
	loc   uint16  // At: location code (low bits), adjBit: Adjudication
	dim   uint16  // dimension name code; spillCode: the label is in spill
	score float64 // NaN: no score
	bin   int32   // -1: no bin
	cons  uint16  // construct name code
	rater uint16  // 0: no rater; else the rater's name code + 1
}

const (
	spillCode = math.MaxUint16
	idSlab    = 1 << 20
	// adjBit is the Adjudication flag, kept in loc's top bit (locCode hands
	// out at most 64 codes).
	adjBit = 1 << 15
)

// newLabels returns an empty Labels for n labels of file and side.
func newLabels(file string, side LabelSide, n int) *Labels {
	return &Labels{File: file, Side: side, recs: make([]record, 0, n), codes: map[string]uint16{}}
}

// FromLabels keeps ls (in order) as Labels, as ReadLabels would have read them.
func FromLabels(ls []Label) *Labels {
	out := &Labels{codes: map[string]uint16{}}
	if len(ls) > 0 {
		out.File, out.Side = ls[0].File, ls[0].Side
	}
	out.recs = make([]record, 0, len(ls))
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
	return len(ls.recs)
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
	i := len(ls.recs)
	r := record{line: uint32(l.Line), sec: l.At.Unix(), nsec: int32(l.At.Nanosecond()), score: math.NaN(), bin: -1} //nolint:gosec // line checked below; Nanosecond is in [0, 1e9)
	if l.HasScore {
		r.score = l.Score
	}
	if l.HasBin {
		r.bin = int32(l.Bin) //nolint:gosec // bins are at most 1<<20 (readers) or a lock's bin
	}
	dim, okD := ls.code(0, l.Dimension)
	cons, okC := ls.code(1, l.Construct)
	loc, okL := ls.locCode(l.At.Location())
	okR := true
	if l.Rater != "" {
		var rc uint16
		rc, okR = ls.code(2, l.Rater)
		r.rater = rc + 1 // codes are below spillCode: at most MaxUint16
	}
	if l.Adjudication {
		loc |= adjBit
	}
	if !okD || !okC || !okL || !okR || l.Line < 0 || int64(l.Line) > math.MaxUint32 || l.File != ls.File || l.Side != ls.Side ||
		l.HasBin && (l.Bin < 0 || int64(l.Bin) > math.MaxInt32) || l.HasScore && math.IsNaN(l.Score) {
		if ls.spill == nil {
			ls.spill = map[int]Label{}
		}
		c := *l
		c.CaseID = strings.Clone(l.CaseID)
		ls.spill[i] = c
		ls.recs = append(ls.recs, record{dim: spillCode})
		return
	}
	r.dim, r.cons, r.loc = dim, cons, loc
	r.id, r.n = ls.storeID(l.CaseID)
	ls.recs = append(ls.recs, r)
}

// storeID copies id into the slabs and returns where it is.
func (ls *Labels) storeID(id string) (uint64, uint32) {
	if id == "" {
		return 0, 0
	}
	if len(id) > cap(ls.cur)-len(ls.cur) {
		ls.cur = make([]byte, 0, max(idSlab, len(id)))
		ls.slabs = append(ls.slabs, ls.cur)
	}
	off := len(ls.cur)
	ls.cur = append(ls.cur, id...)
	ls.slabs[len(ls.slabs)-1] = ls.cur
	return uint64(len(ls.slabs)-1)<<32 | uint64(off), uint32(len(id)) //nolint:gosec // ids are under 16 MiB (the line cap)
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
func (ls *Labels) locCode(loc *time.Location) (uint16, bool) {
	for i, l := range ls.locs {
		if l == loc || sameFixedZone(l, loc) {
			return uint16(i), true
		}
	}
	if len(ls.locs) >= 64 {
		return 0, false // more distinct zones than a label file has: kept whole
	}
	ls.locs = append(ls.locs, loc)
	return uint16(len(ls.locs) - 1), true //nolint:gosec // at most 64
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

// CaseID is label i's case id (a view of the slab: no copy).
func (ls *Labels) CaseID(i int) string {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].CaseID
	}
	if r.n == 0 {
		return ""
	}
	s := ls.slabs[r.id>>32]
	return unsafe.String(unsafe.SliceData(s[r.id&math.MaxUint32:]), r.n) //nolint:gosec // G103: the slab's bytes are never written again
}

// Dimension is label i's dimension.
func (ls *Labels) Dimension(i int) string {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].Dimension
	}
	return ls.names[r.dim]
}

// Construct is label i's construct.
func (ls *Labels) Construct(i int) string {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].Construct
	}
	return ls.names[r.cons]
}

// Bin is label i's bin (Label.Bin).
func (ls *Labels) Bin(i int) int {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].Bin
	}
	return int(max(r.bin, 0))
}

// At is label i's timestamp (Label.At).
func (ls *Labels) At(i int) time.Time {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].At
	}
	return time.Unix(r.sec, int64(r.nsec)).In(ls.locs[r.loc&^adjBit])
}

// Rater is label i's rater ("" when it names none).
func (ls *Labels) Rater(i int) string {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].Rater
	}
	if r.rater == 0 {
		return ""
	}
	return ls.names[r.rater-1]
}

// Adjudication is label i's Adjudication flag.
func (ls *Labels) Adjudication(i int) bool {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i].Adjudication
	}
	return r.loc&adjBit != 0
}

// Label is label i.
func (ls *Labels) Label(i int) Label {
	r := &ls.recs[i]
	if r.dim == spillCode {
		return ls.spill[i]
	}
	l := Label{File: ls.File, Line: int(r.line), Side: ls.Side, CaseID: ls.CaseID(i), Dimension: ls.names[r.dim],
		Construct: ls.names[r.cons], At: time.Unix(r.sec, int64(r.nsec)).In(ls.locs[r.loc&^adjBit]), Rater: ls.Rater(i),
		Adjudication: r.loc&adjBit != 0}
	if !math.IsNaN(r.score) {
		l.Score, l.HasScore = r.score, true
	}
	if r.bin >= 0 {
		l.Bin, l.HasBin = int(r.bin), true
	}
	return l
}
