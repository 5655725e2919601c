package baseline

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// record is the compact form of one baseline case that the join keeps: 56 bytes,
// whatever the length of its id, query, gold or top-k (its detail, what a
// report lists of it, stays in the temporary file, read back only for the
// cases a report lists: Baseline.detail), and the 64-bit hashes of its top k
// identities in the tops arena (8 bytes each, at most maxTopDepth), which the
// rank-biased overlap compares. Its line in the baseline file and its
// detail's offset are kept per run of records (Baseline.lineOf, detailAt).
type record struct {
	id, gold uint64
	scores   [metrics.NumCase]float64
	size     uint32 // bytes of its detail in the temporary file
	rank1    uint32 // rank + 1; 0: no rank (see ranked and rank)
	topAt    uint32 // index of the first top hash in tops
	topN     uint16 // number of top hashes (at most maxTopDepth)
	has      uint8  // bit i: scores[i] is present
	hasTop   bool   // the top k is known (topN may be 0: nothing retrieved)
}

func (r *record) hasScore(i int) bool { return r.has&(1<<i) != 0 }
func (r *record) scored() bool        { return r.has != 0 }
func (r *record) ranked() bool        { return r.rank1 != 0 }

// rank is metrics.FirstGoldRank of a ranked case (0 when not ranked).
func (r *record) rank() int { return max(int(r.rank1)-1, 0) }

// setRank sets the rank (0 ≤ n ≤ math.MaxInt32).
func (r *record) setRank(n int) { r.rank1 = uint32(n) + 1 } //nolint:gosec // G115: the callers check the range

// Baseline is a loaded baseline: its header, the compact records in file order
// and an open-addressing hash table from id hash to record. Memory: 56 bytes per
// case for the record plus 16 bytes per table slot (at most 3/4 full), about 85 bytes
// per baseline case, and the top-k hashes; the ids, gold and top-k lists are copied
// to one temporary file (detail; about 35% of the decompressed baseline) and read
// back only for the listed cases. Close removes the file.
type Baseline struct {
	Source   *Source // File, Format, Header, SchemaRead (no longer readable)
	recs     records
	tops     topArena
	slots    []slot   // the hash table: 1<<bits slots
	slotMaps [][]byte // its mapping (at most one)
	bits     uint
	// seq: record i is the case at line line0+i of the cases file (find).
	seq     bool
	line0   int
	touched uint64 // the sum of the slots touch loaded (kept, so the loads are)
	tmp     *os.File
	// detOffs[j] is the offset of record j*detStride's detail in tmp: the
	// details follow each other in record order; detEnd is the end of the last.
	detOffs []int64
	detEnd  int64
	// lineMarks: the records' lines in the baseline file, one mark where a
	// record's line is not the previous one's plus one (lineOf).
	lineMarks []lineMark
	lastLine  int
	Skipped   int64 // lines with no registered score and no gold (nothing to compare)
}

// records is a list of records in fixed chunks of recChunk, so that it grows
// without the doubling copies of one slice (peak memory stays 56 bytes a case).
type records struct {
	chunks [][]record
	n      int
	maps   [][]byte // the chunks' mappings (mapArena)
}

const recChunk = 1 << 17 // 7 MiB

// The sizes of a record and a slot in bytes (TestArenaSizes checks them).
const (
	recordBytes = 56
	slotBytes   = 16
)

// newArena returns n zeroed values of T (no pointers; elem bytes each), mapped outside the heap
// where it can be (mapArena; the mapping is appended to maps), else on it.
func newArena[T any](n, elem int, maps *[][]byte) []T {
	if s, mem, ok := mapArena[T](n, elem); ok {
		*maps = append(*maps, mem)
		return s
	}
	return make([]T, n)
}

func unmapAll(maps *[][]byte) {
	for _, m := range *maps {
		unmapArena(m)
	}
	*maps = nil
}

// topArena holds the records' top-k hashes in fixed chunks of topChunk; a
// record's hashes never straddle two chunks.
type topArena struct {
	chunks [][]uint64
	n      int      // index of the next free entry
	maps   [][]byte // the chunks' mappings
}

const (
	topChunk = 1 << 20 // 8 MiB
	// maxTopDepth bounds the top-k hashes kept per case: deeper ranks weigh
	// nothing in RBO (0.9^1024 < 1e-46), and the join compares both runs' lists
	// cut to the same depth.
	maxTopDepth = 1024
)

// add appends hs (len ≤ maxTopDepth) and returns its index.
func (a *topArena) add(hs []uint64) (uint32, error) {
	if a.n/topChunk >= len(a.chunks) || a.n%topChunk+len(hs) > topChunk {
		if len(a.chunks) > 0 {
			a.n = len(a.chunks) * topChunk // the rest of the last chunk stays unused
		}
		a.chunks = append(a.chunks, newArena[uint64](topChunk, 8, &a.maps))
	}
	if int64(a.n) > math.MaxUint32-topChunk {
		return 0, errTooManyTops
	}
	at := a.n
	copy(a.chunks[at/topChunk][at%topChunk:], hs)
	a.n += len(hs)
	return uint32(at), nil //nolint:gosec // G115: bounded just above
}

var errTooManyTops = errors.New("more top-k identities than the baseline's 32-bit index holds")

// top returns the top-k hashes of r.
func (b *Baseline) top(r *record) []uint64 {
	if r.topN == 0 {
		return nil
	}
	c := b.tops.chunks[r.topAt/topChunk]
	at, end := r.topAt%topChunk, r.topAt%topChunk+uint32(r.topN)
	return c[at:end:end]
}

func (rs *records) add(r record) {
	if rs.n%recChunk == 0 {
		rs.chunks = append(rs.chunks, newArena[record](recChunk, recordBytes, &rs.maps)[:0])
	}
	last := &rs.chunks[len(rs.chunks)-1]
	*last = append(*last, r)
	rs.n++
}

func (rs *records) at(i int) *record { return &rs.chunks[i/recChunk][i%recChunk] }

// Close removes the temporary file and releases the records and the table
// (nothing may read them afterwards).
func (b *Baseline) Close() error {
	if b == nil {
		return nil
	}
	unmapAll(&b.recs.maps)
	unmapAll(&b.tops.maps)
	unmapAll(&b.slotMaps)
	b.recs, b.tops, b.slots, b.bits, b.seq = records{}, topArena{}, nil, 0, false
	b.detOffs, b.lineMarks = nil, nil
	if b.tmp == nil {
		return nil
	}
	err := b.tmp.Close()
	b.tmp = nil
	return err
}

// CreatedAt is the header's created_at, zero when absent (Open refuses one
// that is not RFC 3339).
func (b *Baseline) CreatedAt() time.Time {
	if b.Source.Header == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, b.Source.Header.CreatedAt)
	if err != nil {
		return time.Time{}
	}
	return t
}

// slot is one entry of the hash table: key and record index side by side,
// so a probe costs one cache line, not two.
type slot struct {
	key uint64 // the id hash; 0: empty
	idx int32
}

// maxPresizeBits bounds the table a header's case count may reserve before
// any case is read (a forged count reserves at most 2^23 slots, 128 MiB of
// address space that stays untouched, and so unresident, until filled).
const maxPresizeBits = 23

// presize sizes the table for n cases (the header's count) so the load
// inserts without growing.
func (b *Baseline) presize(n int64) {
	if n <= 0 || b.bits != 0 {
		return
	}
	bits := uint(12)
	for bits < maxPresizeBits && 3<<bits < 4*n { // at most 3/4 full
		bits++
	}
	b.bits = bits
	b.slots = newArena[slot](1<<bits, slotBytes, &b.slotMaps)
}

// insert adds id -> idx, or returns the index already stored for id.
func (b *Baseline) insert(id uint64, idx int32) (int32, bool) {
	if 4*(b.recs.n+1) > 3*len(b.slots) {
		b.grow()
	}
	mask := uint64(1)<<b.bits - 1 // len(b.slots) is 1<<b.bits
	for i := (id * 0x9e3779b97f4a7c15) >> (64 - b.bits); ; i = (i + 1) & mask {
		switch sl := &b.slots[i]; sl.key {
		case 0:
			*sl = slot{id, idx}
			return 0, false
		case id:
			return sl.idx, true
		}
	}
}

func (b *Baseline) grow() {
	old := b.slots
	if b.bits == 0 {
		b.bits = 12
	} else {
		b.bits++
	}
	oldMaps := b.slotMaps
	b.slotMaps = nil
	b.slots = newArena[slot](1<<b.bits, slotBytes, &b.slotMaps)
	defer unmapAll(&oldMaps)      // after the copy below
	mask := uint64(1)<<b.bits - 1 // len(b.slots) is 1<<b.bits
	for _, o := range old {
		if o.key == 0 {
			continue
		}
		for i := (o.key * 0x9e3779b97f4a7c15) >> (64 - b.bits); ; i = (i + 1) & mask {
			if b.slots[i].key == 0 {
				b.slots[i] = o
				break
			}
		}
	}
}

// lookup returns the index of the record of id hash, or -1. Safe for concurrent
// use once Load has returned.
func (b *Baseline) lookup(id uint64) int {
	if len(b.slots) == 0 {
		return -1
	}
	mask := uint64(1)<<b.bits - 1 // len(b.slots) is 1<<b.bits
	for i := (id * 0x9e3779b97f4a7c15) >> (64 - b.bits); ; i = (i + 1) & mask {
		switch sl := &b.slots[i]; sl.key {
		case 0:
			return -1
		case id:
			return int(sl.idx)
		}
	}
}

// find is lookup for a case of this run at line caseLine of its cases file
// (0: unknown). A baseline written from the same cases file holds record i
// at case line line0+i (seq): that record is tried first, a sequential read
// instead of a random probe of the table. Ids are unique in the baseline, so
// a record whose id hash matches is the one lookup would return.
func (b *Baseline) find(id uint64, caseLine int) int {
	if b.seq && caseLine > 0 {
		if g := caseLine - b.line0; g >= 0 && g < b.recs.n && b.recs.at(g).id == id {
			return g
		}
	}
	return b.lookup(id)
}

// follow updates seq with the case line of record idx (-1: unknown).
func (b *Baseline) follow(idx, caseLine int) {
	switch {
	case idx == 0:
		b.seq, b.line0 = caseLine > 0, caseLine
	case b.seq && caseLine != b.line0+idx:
		b.seq = false
	}
}

// detail is what the reports list of record i: its id, gold set and top k
// (HasTop), read back from the temporary file, and its scores and rank from
// the record. Line, Locale, Type and Query are not kept (zero).
func (b *Baseline) detail(i int) (CaseLine, error) {
	r := b.recs.at(i)
	buf := make([]byte, r.size)
	if _, err := b.tmp.ReadAt(buf, b.detailAt(i)); err != nil {
		return CaseLine{}, fmt.Errorf("baseline: temporary file: %w", err)
	}
	var p fastjson.Parser
	var c CaseLine
	if err := ParseCaseLine(&p, buf, b.Source.File, b.lineOf(i), &c); err != nil {
		return CaseLine{}, err
	}
	return CaseLine{ID: c.ID, Gold: c.Gold, Top: c.Top, HasTop: c.HasTop, Scores: r.scores, Has: r.hasArray(),
		Ranked: r.ranked(), Rank: r.rank()}, nil
}

// detStride is the number of records per entry of detOffs.
const detStride = 64

// addPlace records where record idx (the next) lies: its detail of size
// bytes follows the previous one's in the temporary file; line is its line
// in the baseline file.
func (b *Baseline) addPlace(idx int, size uint32, line int) {
	if idx%detStride == 0 {
		b.detOffs = append(b.detOffs, b.detEnd)
	}
	b.detEnd += int64(size)
	if idx == 0 || line != b.lastLine+1 {
		b.lineMarks = append(b.lineMarks, lineMark{idx, line})
	}
	b.lastLine = line
}

// detailAt is the offset of record i's detail in the temporary file.
func (b *Baseline) detailAt(i int) int64 {
	off := b.detOffs[i/detStride]
	for j := i - i%detStride; j < i; j++ {
		off += int64(b.recs.at(j).size)
	}
	return off
}

// lineMark: record idx is at line in the baseline file, and each following
// record at the next line, up to the next mark.
type lineMark struct{ idx, line int }

// lineOf is record i's line in the baseline file.
func (b *Baseline) lineOf(i int) int {
	k := sort.Search(len(b.lineMarks), func(k int) bool { return b.lineMarks[k].idx > i }) - 1
	if k < 0 {
		return 0
	}
	return b.lineMarks[k].line + i - b.lineMarks[k].idx
}

// hasArray is has as CaseLine.Has.
func (r *record) hasArray() [metrics.NumCase]bool {
	var h [metrics.NumCase]bool
	for m := range h {
		h[m] = r.hasScore(m)
	}
	return h
}
