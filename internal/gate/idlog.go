package gate

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// Duplicate returns the input error of the earliest case, in file order, whose
// id (its 64-bit hash, see idHash) an earlier case added had: "duplicate case
// id %q (first at line N)" at the later case's line, or nil. Call it once the
// stream ends, whichever way: a duplicate before a later error (a malformed
// line) is the error a streaming check meets first. It may be called again
// after more cases.
func (a *Accumulator) Duplicate() error { return a.seen.duplicate() }

// idLog finds duplicate case ids off the per-case path, in memory that does
// not grow with the number of cases beyond a bound. A per-case insert into a
// hash table of all ids costs a cache (and TLB) miss per case on the one
// goroutine that aggregates in file order, and a table's memory; instead add
// appends each case's (id hash, line) to one of idParts partitions by the
// hash's top bits (the partitions' open tails stay in cache: the writes are
// sequential in each), and duplicate searches each partition on its own, in a
// small table, on all cores. A partition is in case order, so the first entry
// whose hash came before in it is the partition's earliest duplicate; the
// earliest of all partitions is the file's.
//
// 12 bytes a case: the hash and the line (lines only grow, so the earliest
// line is the earliest case). Past idMemChunks full chunks of entries, more
// chunks go to a temporary file (idSpill) instead of memory, and so do the
// case ids themselves past idMemBytes of them (idStore, a file of its own):
// they are read back only to search, and to name the id of a duplicate. The
// ids' records are written by the scorers' workers where the store keeps
// them (IDWriter), so add links them without touching them.
type idLog struct {
	parts [idParts]idPart
	n     int
	file  string // the cases file, for the error
	ids   idStore
	spill idSpill
	// mu guards the arena and the free pages: the scorers' workers take
	// pages of id records (IDWriter) while Add takes chunks.
	mu        sync.Mutex
	arena     *idArena // full chunks and pages of ids (idarena.go)
	freePages []*idPage
	pages     int // taken from the arena

	memChunks int // full chunks kept in memory
	// Sizes (0: the defaults idChunkN, idMemChunks, idMemBytes; tests set
	// them small).
	chunkN, maxMemChunks, maxIDBytes int
}

// idPart is one partition: full chunks of idChunkN entries (in memory or in
// the spill file), then its tail, which grows by doubling up to idChunkN.
type idPart struct {
	h    []uint64 // the tail's hashes
	line []uint32 // and lines
	full []idChunk
	n    int // entries in all
}

// idChunk is a full chunk of a partition: in memory, or at off in the spill
// file (h == nil): n hashes, then n lines.
type idChunk struct {
	h    []uint64
	line []uint32
	off  int64
	n    int
}

const (
	idPartBits = 8
	idParts    = 1 << idPartBits
	idChunkN   = 4096
	idChunkB   = idChunkN * 12 // bytes of a chunk
	// idMemChunks bounds the entries kept in memory: 128 MiB, about 11
	// million cases; more cases spill.
	idMemChunks = 128 << 20 / idChunkB
	// idBlock bounds a block of the id store's spill file read back at
	// once; idMemBytes bounds the records kept in memory.
	idBlock    = 1 << 20
	idMemBytes = 16 << 20
	// idEvery is the distance in cases between the id store's checkpoints.
	idEvery = 1024
)

// add logs one case. Its error is a failed write of the spill file.
func (l *idLog) add(h uint64, line uint32, id, file string) error {
	return l.addRec(h, line, id, file, nil, nil)
}

// addRec logs one case whose id's record a worker wrote (rec in page p; nil:
// add writes it).
func (l *idLog) addRec(h uint64, line uint32, id, file string, rec []byte, page *idPage) error {
	p := &l.parts[h>>(64-idPartBits)]
	if len(p.h) == cap(p.h) {
		if err := l.grow(p); err != nil {
			return err
		}
	}
	p.h = append(p.h, h)
	p.line = append(p.line, line)
	p.n++
	if err := l.ids.add(l, rec, page, id, line); err != nil {
		return err
	}
	l.n++
	l.file = file
	return nil
}

// grow makes room in p's full tail: a tail below idChunkN/4 doubles, a larger
// one becomes a whole chunk, a full one a full chunk, kept in memory or
// written to the spill file.
func (l *idLog) grow(p *idPart) error {
	chunkN := cmp.Or(l.chunkN, idChunkN)
	if c := cap(p.h); c < chunkN {
		// Small tails on the heap; past a quarter of a chunk, a tail of a
		// whole chunk in the arena. A part that holds that many ids will
		// likely fill its chunk (a quarter is 262,144 cases on average over
		// the idParts parts): doubling on to it was, on 1M cases, 9 MB of
		// fresh heap for tails copied once and dropped (their page faults
		// and copies 3% of check's CPU).
		nc := min(max(16, 2*c), chunkN)
		if nc >= chunkN/4 {
			nc = chunkN
		}
		var h []uint64
		var line []uint32
		if nc == chunkN {
			h, line = l.chunk(chunkN)
		} else {
			h, line = make([]uint64, 0, nc), make([]uint32, 0, nc)
		}
		p.h, p.line = append(h, p.h...), append(line, p.line...)
		return nil
	}
	n := len(p.h)
	if l.memChunks < cmp.Or(l.maxMemChunks, idMemChunks) {
		p.full = append(p.full, idChunk{h: p.h, line: p.line, n: n})
		l.memChunks++
		p.h, p.line = l.chunk(chunkN)
		return nil
	}
	off, err := l.spill.write(u64Bytes(p.h), u32Bytes(p.line))
	if err != nil {
		return err
	}
	p.full = append(p.full, idChunk{off: off, n: n})
	p.h, p.line = p.h[:0], p.line[:0] // reused
	return nil
}

// chunk returns an empty chunk of n entries in the arena.
func (l *idLog) chunk(n int) ([]uint64, []uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.arena == nil {
		l.arena = &idArena{}
	}
	return l.arena.chunk(l, n)
}

// alloc returns n bytes of the arena; l.mu is held.
func (l *idLog) alloc(n int) []byte {
	if l.arena == nil {
		l.arena = &idArena{}
	}
	return l.arena.alloc(l, n)
}

// duplicate searches the log (see Accumulator.Duplicate).
func (l *idLog) duplicate() error {
	later, first, ok, err := l.search()
	if err != nil || !ok {
		return err
	}
	id, err := l.ids.find(later)
	if err != nil {
		return err
	}
	return input.Errorf(l.file, int(later), "duplicate case id %q (first at line %d)", id, first)
}

// search returns the line of the first case whose hash an earlier case has,
// and the line of the first case with that hash.
func (l *idLog) search() (later, first uint32, ok bool, err error) {
	if l.n < 2 {
		return 0, 0, false, nil
	}
	workers := min(runtime.GOMAXPROCS(0), idParts)
	type found struct {
		later, first uint32
		ok           bool
		err          error
	}
	res := make([]found, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var s idSearch
			best := &res[w]
			for p := w; p < idParts; p += workers {
				later, first, ok, err := s.partition(l, &l.parts[p])
				if err != nil {
					best.err = err
					return
				}
				if ok && (!best.ok || later < best.later) {
					*best = found{later, first, true, nil}
				}
			}
		})
	}
	wg.Wait()
	for _, f := range res {
		if f.err != nil {
			return 0, 0, false, f.err
		}
		if f.ok && (!ok || f.later < later) {
			later, first, ok = f.later, f.first, true
		}
	}
	return later, first, ok, nil
}

// idSearch is a search worker's scratch memory.
type idSearch struct {
	h     []uint64
	line  []uint32
	table []uint32
}

// partition returns the line of the first entry of p whose hash an earlier
// entry has, and that earlier entry's line.
func (s *idSearch) partition(l *idLog, p *idPart) (later, first uint32, ok bool, err error) {
	if p.n < 2 {
		return 0, 0, false, nil
	}
	// The partition's entries in one piece, in case order.
	s.h, s.line = s.h[:0], s.line[:0]
	for _, c := range p.full {
		if c.h != nil {
			s.h, s.line = append(s.h, c.h...), append(s.line, c.line...)
			continue
		}
		n := len(s.h)
		s.h, s.line = grown(s.h, c.n), grown(s.line, c.n)
		if err := l.spill.read(c.off, u64Bytes(s.h[n:]), u32Bytes(s.line[n:])); err != nil {
			return 0, 0, false, err
		}
	}
	s.h, s.line = append(s.h, p.h...), append(s.line, p.line...)

	size := 1 << bits.Len(uint(2*len(s.h)))
	if cap(s.table) < size {
		s.table = make([]uint32, size)
	}
	t := s.table[:size]
	clear(t)
	mask := uint64(size - 1) //nolint:gosec // G115: size is a positive power of two
	for j, h := range s.h {
		for i := (h * 0x9e3779b97f4a7c15) >> 32 & mask; ; i = (i + 1) & mask {
			k := t[i] // index+1 of the entry in the slot; 0: empty
			if k == 0 {
				t[i] = uint32(j + 1) // a partition has fewer entries than cases, whose lines fit 32 bits
				break
			}
			if s.h[k-1] == h {
				return s.line[j], s.line[k-1], true, nil
			}
		}
	}
	return 0, 0, false, nil
}

// grown is s with n more elements (their values undefined).
func grown[T any](s []T, n int) []T {
	return slices.Grow(s, n)[:len(s)+n]
}
