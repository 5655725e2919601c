package gate

import (
	"math/bits"
	"runtime"
	"sort"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// Duplicate returns the input error of the earliest case, in file order, whose
// id (its 64-bit hash, see idHash) an earlier case added had: "duplicate case
// id %q (first at line N)" at the later case's line, or nil. Call it once the
// stream ends, whichever way: a duplicate before a later error (a malformed
// line) is the error a streaming check meets first.
func (a *Accumulator) Duplicate() error { return a.seen.duplicate() }

// idLog finds duplicate case ids off the per-case path. A per-case insert into
// a hash table of all ids costs a cache (and TLB) miss per case on the one
// goroutine that aggregates in file order; instead add appends the id's hash
// and line to a log (sequential writes) and search finds the duplicates at the
// end: the log partitioned by hash, each partition searched in a small table
// that stays in cache, on all cores.
//
// To name the duplicate's id, the log keeps the ids of the cases since its last
// search (the window). Once the window outgrows its budget, add searches the
// log: a duplicate found then is reported at once (it is the earliest: every
// later case comes after), else the window's ids are dropped, as no duplicate
// lies among them. So memory stays 12 bytes a case plus a bounded window.
type idLog struct {
	chunks [][]idSlot // per case, in case order, idChunk per chunk
	n      int
	file   string // the cases file, for the error

	winFirst int      // the index of the window's first case
	winBytes int      // the bytes of the window's ids
	ids      [][]byte // the window's ids, back to back in blocks of idBlock bytes (or one long id)
	idsFirst []int    // the index of the first case of each block of ids
}

// idSlot is a hash in two halves, its line, and the end of its id in its
// block of ids (16 bytes, no padding).
type idSlot struct{ lo, hi, line, end uint32 }

func (s idSlot) hash() uint64 { return uint64(s.hi)<<32 | uint64(s.lo) }

const (
	idChunk = 1 << 16
	idBlock = 1 << 20
	// minWindow is the window's budget in id bytes; the budget grows to 8
	// bytes a case, so that the searches cost O(1) per case amortised.
	minWindow = 16 << 20
)

// add logs one case; the error is a duplicate found when the window is
// searched (see idLog).
func (l *idLog) add(h uint64, line uint32, id, file string) error {
	if l.n%idChunk == 0 {
		l.chunks = append(l.chunks, make([]idSlot, 0, idChunk))
	}
	if len(l.ids) == 0 || cap(l.ids[len(l.ids)-1])-len(l.ids[len(l.ids)-1]) < len(id) {
		l.ids = append(l.ids, make([]byte, 0, max(idBlock, len(id))))
		l.idsFirst = append(l.idsFirst, l.n)
	}
	b := &l.ids[len(l.ids)-1]
	*b = append(*b, id...)
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, idSlot{uint32(h), uint32(h >> 32), line, uint32(len(*b))}) //nolint:gosec // G115: a block is at most max(idBlock, MaxLine) bytes
	l.n++
	l.file = file
	if l.winBytes += len(id); l.winBytes > minWindow && l.winBytes > 8*l.n {
		if err := l.duplicate(); err != nil {
			return err
		}
		l.winFirst, l.winBytes = l.n, 0
		l.ids, l.idsFirst = l.ids[:0], l.idsFirst[:0]
	}
	return nil
}

// at is the log entry of case i.
func (l *idLog) at(i int) idSlot { return l.chunks[i/idChunk][i%idChunk] }

// id is the id of case i, which is in the window.
func (l *idLog) id(i int) string {
	k := sort.SearchInts(l.idsFirst, i+1) - 1 // the last block that starts at or before i
	start := uint32(0)
	if l.idsFirst[k] < i {
		start = l.at(i - 1).end
	}
	return string(l.ids[k][start:l.at(i).end])
}

// duplicate searches the log (see Accumulator.Duplicate).
func (l *idLog) duplicate() error {
	later, first, ok := l.search()
	if !ok {
		return nil
	}
	// later is in the window: no earlier search found it.
	return input.Errorf(l.file, int(l.at(int(later)).line), "duplicate case id %q (first at line %d)", l.id(int(later)), l.at(int(first)).line)
}

// search returns the index of the first case whose hash an earlier case has,
// and the index of the first case with that hash.
func (l *idLog) search() (later, first uint32, ok bool) {
	if l.n < 2 {
		return 0, 0, false
	}
	// Partitions of about 4,096 entries by the hash's top bits, each entry
	// with its case index in place of its line: a stable scatter keeps each
	// partition in case order.
	pbits := max(0, bits.Len(uint(l.n>>12)))
	shift := 64 - pbits
	part := func(s idSlot) int {
		if pbits == 0 {
			return 0
		}
		return int(s.hash() >> shift) //nolint:gosec // G115: the top pbits bits, pbits < 64: below 1<<pbits
	}
	starts := make([]int, 1<<pbits+1)
	for _, c := range l.chunks {
		for _, s := range c {
			starts[part(s)+1]++
		}
	}
	for p := 1; p < len(starts); p++ {
		starts[p] += starts[p-1]
	}
	next := append([]int(nil), starts[:len(starts)-1]...)
	all := make([]idSlot, l.n)
	for ci, c := range l.chunks {
		for i, s := range c {
			p := part(s)
			s.line = uint32(ci*idChunk + i) // fewer cases than lines, which fit a uint32
			all[next[p]] = s
			next[p]++
		}
	}

	// Each worker searches every workers-th partition; the earliest duplicate
	// of all partitions wins.
	workers := min(runtime.GOMAXPROCS(0), 1<<pbits)
	type found struct {
		later, first uint32
		ok           bool
	}
	res := make([]found, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var table []uint32
			best := &res[w]
			for p := w; p < 1<<pbits; p += workers {
				later, first, ok := searchPartition(all[starts[p]:starts[p+1]], &table)
				if ok && (!best.ok || later < best.later) {
					*best = found{later, first, true}
				}
			}
		})
	}
	wg.Wait()
	for _, f := range res {
		if f.ok && (!ok || f.later < later) {
			later, first, ok = f.later, f.first, true
		}
	}
	return later, first, ok
}

// searchPartition returns the first entry of part (in case order) whose hash an
// earlier entry has, and that earlier entry's, by their case indexes (in the
// line field); *table is scratch space.
func searchPartition(part []idSlot, table *[]uint32) (later, first uint32, ok bool) {
	size := 1 << bits.Len(uint(2*len(part)))
	if cap(*table) < size {
		*table = make([]uint32, size)
	}
	t := (*table)[:size]
	clear(t)
	mask := uint64(size - 1) //nolint:gosec // G115: size is a positive power of two
	for j, s := range part {
		h := s.hash()
		for i := (h * 0x9e3779b97f4a7c15) >> 32 & mask; ; i = (i + 1) & mask {
			k := t[i] // index+1 of the entry in the slot; 0: empty
			if k == 0 {
				t[i] = uint32(j + 1) // a partition has fewer than 2^32 entries
				break
			}
			if e := part[k-1]; e.lo == s.lo && e.hi == s.hi {
				return s.line, e.line, true
			}
		}
	}
	return 0, 0, false
}
