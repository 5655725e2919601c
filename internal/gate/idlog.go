package gate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sort"
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

// IDsFrom makes the accumulator keep no case ids (only their hashes and
// lines): the id of the duplicate Duplicate reports is idAt(line), the id of
// the case at that line read again from the cases, and checked against the
// hash logged for it (a file changed since is an input error at that line,
// not a wrong id). Call it before the first Add, for cases that can be read
// again (a regular file: check's); the ids' store was the aggregation's one
// read of each case's line, a cache miss on the core that parsed it.
func (a *Accumulator) IDsFrom(idAt func(line int) (string, error)) { a.seen.idAt = idAt }

// Close gives the duplicate-id log's memory and temporary file back now
// rather than when the accumulator is collected: its regions are mapped
// outside the Go heap, so the collector does not count them, and a process
// that runs many checks (a library caller's tests) would hold them until its
// heap grew enough for a collection. Duplicate finds nothing after Close;
// the accumulator's other results are unaffected.
func (a *Accumulator) Close() { a.seen.release() }

// release frees what the log holds and empties it.
func (l *idLog) release() {
	if l.arena != nil {
		l.arena.release()
	}
	if l.spill.f != nil {
		_ = l.spill.f.Close()
	}
	*l = idLog{}
}

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
// case ids themselves past idMemBytes of them (idStore): they are read back
// only to search, and to name the id of a duplicate.
type idLog struct {
	parts [idParts]idPart
	n     int
	file  string // the cases file, for the error
	ids   idStore
	// idAt, when set, names a duplicate's id from its line (read again from
	// the cases file): ids is then not kept (Accumulator.IDsFrom).
	idAt  func(line int) (string, error)
	spill idSpill
	arena *idArena // full chunks and id blocks (idarena.go)

	memChunks int // full chunks kept in memory
	// The last cases added, in order, not yet in their partitions (flush):
	// add writes them in sequence, and flush moves a full stage at once,
	// where the partitions' heads and open tails stay in the cache between
	// cases (a case at a time, each added case's partition was a miss).
	stageH [idStage]uint64
	stageL [idStage]uint32
	staged int
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
	// idBlock is the size of a block of the id store; idMemBytes bounds
	// the blocks kept in memory.
	idBlock    = 1 << 20
	idMemBytes = 16 << 20
	// idEvery is the distance in cases between the id store's checkpoints.
	idEvery = 1024
	// idStage is the number of cases add stages before flush.
	idStage = 4096
)

// add logs one case. Its error is a failed write of the spill file.
func (l *idLog) add(h uint64, line uint32, id, file string) error {
	if l.staged == idStage {
		if err := l.flush(); err != nil {
			return err
		}
	}
	l.stageH[l.staged], l.stageL[l.staged] = h, line
	l.staged++
	if l.idAt == nil {
		if err := l.ids.add(l, id, line); err != nil {
			return err
		}
	}
	l.n++
	l.file = file
	return nil
}

// flush appends the staged cases to their partitions, in order. On an error
// the cases not appended stay staged, first.
func (l *idLog) flush() error {
	for i, h := range l.stageH[:l.staged] {
		p := &l.parts[h>>(64-idPartBits)]
		if len(p.h) == cap(p.h) {
			if err := l.grow(p); err != nil {
				copy(l.stageL[:], l.stageL[i:l.staged])
				l.staged = copy(l.stageH[:], l.stageH[i:l.staged])
				return err
			}
		}
		p.h = append(p.h, h)
		p.line = append(p.line, l.stageL[i])
		p.n++
	}
	l.staged = 0
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
	if l.arena == nil {
		l.arena = &idArena{}
	}
	return l.arena.chunk(l, n)
}

// duplicate searches the log (see Accumulator.Duplicate).
func (l *idLog) duplicate() error {
	if err := l.flush(); err != nil {
		return err
	}
	later, first, h, ok, err := l.search()
	if err != nil || !ok {
		return err
	}
	var id string
	if l.idAt != nil {
		id, err = l.idAt(int(later))
		if err != nil {
			return err
		}
		if idHash(id) != h {
			// The line read again is not the one hashed: the file changed.
			return input.Errorf(l.file, int(later), "the cases file changed while it was read (a duplicate case id was here, first at line %d)", first)
		}
	} else if id, err = l.ids.find(l, later); err != nil {
		return err
	}
	return input.Errorf(l.file, int(later), "duplicate case id %q (first at line %d)", id, first)
}

// search returns the line of the first case whose hash an earlier case has,
// the line of the first case with that hash, and the hash.
func (l *idLog) search() (later, first uint32, h uint64, ok bool, err error) {
	if l.n < 2 {
		return 0, 0, 0, false, nil
	}
	workers := min(runtime.GOMAXPROCS(0), idParts)
	type found struct {
		later, first uint32
		h            uint64
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
				later, first, h, ok, err := s.partition(l, &l.parts[p])
				if err != nil {
					best.err = err
					return
				}
				if ok && (!best.ok || later < best.later) {
					*best = found{later, first, h, true, nil}
				}
			}
		})
	}
	wg.Wait()
	for _, f := range res {
		if f.err != nil {
			return 0, 0, 0, false, f.err
		}
		if f.ok && (!ok || f.later < later) {
			later, first, h, ok = f.later, f.first, f.h, true
		}
	}
	return later, first, h, ok, nil
}

// idSearch is a search worker's scratch memory.
type idSearch struct {
	h     []uint64
	line  []uint32
	table []uint32
}

// partition returns the line of the first entry of p whose hash an earlier
// entry has, that earlier entry's line, and the hash.
func (s *idSearch) partition(l *idLog, p *idPart) (later, first uint32, hash uint64, ok bool, err error) {
	if p.n < 2 {
		return 0, 0, 0, false, nil
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
			return 0, 0, 0, false, err
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
				return s.line[j], s.line[k-1], h, true, nil
			}
		}
	}
	return 0, 0, 0, false, nil
}

// grown is s with n more elements (their values undefined).
func grown[T any](s []T, n int) []T {
	return slices.Grow(s, n)[:len(s)+n]
}

// idStore keeps the case ids in file order, to name a duplicate: records of
// uvarint(line - previous line), uvarint(len(id)), id, in blocks of idBlock
// bytes (a record never straddles two; a longer id has a block of its own,
// on the heap, dropped once written). Past maxIDBytes of blocks in memory a
// full block goes to the spill file. Every idEvery-th record is a
// checkpoint, so finding a line reads at most idEvery records.
type idStore struct {
	blocks []idStoreBlock
	cur    []byte // the last block
	spare  []byte // a spilled block's memory, while cur holds one long id
	last   uint32 // the line of the last record
	n      int    // records
	marks  []idMark
	mem    int // bytes of the blocks kept in memory (their capacity)
}

type idStoreBlock struct {
	b   []byte // nil when spilled
	off int64  // its offset in the spill file when spilled
	n   int    // its length
}

// idMark is a checkpoint: the line of a record, the one before it, and where
// the record starts.
type idMark struct {
	line, prev uint32
	block, at  int
}

func (s *idStore) add(l *idLog, id string, line uint32) error {
	need := 2*binary.MaxVarintLen32 + len(id)
	if cap(s.cur)-len(s.cur) < need {
		if err := s.flush(l); err != nil {
			return err
		}
		switch {
		case need > idBlock:
			if s.cur != nil {
				s.spare = s.cur
			}
			s.cur = make([]byte, 0, need) // one id (a line is at most casefile.MaxLine)
		case s.cur == nil && s.spare != nil:
			s.cur, s.spare = s.spare, nil
		case s.cur == nil:
			if l.arena == nil {
				l.arena = &idArena{}
			}
			s.cur = l.arena.alloc(l, idBlock)[:0]
		}
	}
	if s.n%idEvery == 0 {
		s.marks = append(s.marks, idMark{line: line, prev: s.last, block: len(s.blocks), at: len(s.cur)})
	}
	s.cur = binary.AppendUvarint(s.cur, uint64(line-s.last))
	s.cur = binary.AppendUvarint(s.cur, uint64(len(id)))
	s.cur = append(s.cur, id...)
	s.last = line
	s.n++
	return nil
}

// flush moves the last block to the kept blocks, in memory or spilled; the
// memory of a spilled block is the next one's, but for a block of one long
// id, which is dropped.
func (s *idStore) flush(l *idLog) error {
	if s.cur == nil {
		return nil
	}
	if s.mem+cap(s.cur) <= cmp.Or(l.maxIDBytes, idMemBytes) {
		s.blocks = append(s.blocks, idStoreBlock{b: s.cur, n: len(s.cur)})
		s.mem += cap(s.cur)
		s.cur = nil
		return nil
	}
	off, err := l.spill.write(s.cur)
	if err != nil {
		return err
	}
	s.blocks = append(s.blocks, idStoreBlock{off: off, n: len(s.cur)})
	if cap(s.cur) > idBlock {
		s.cur = nil
	} else {
		s.cur = s.cur[:0]
	}
	return nil
}

// block returns block k's bytes (the last one is cur).
func (s *idStore) block(l *idLog, k int) ([]byte, error) {
	if k == len(s.blocks) {
		return s.cur, nil
	}
	b := s.blocks[k]
	if b.b != nil {
		return b.b[:b.n], nil
	}
	buf := make([]byte, b.n)
	return buf, l.spill.read(b.off, buf)
}

// find returns the id of the case at line.
func (s *idStore) find(l *idLog, line uint32) (string, error) {
	m := s.marks[sort.Search(len(s.marks), func(i int) bool { return s.marks[i].line > line })-1]
	k, at, prev := m.block, m.at, m.prev
	b, err := s.block(l, k)
	if err != nil {
		return "", err
	}
	for {
		if at == len(b) { // the block's last record was read: the next block
			k, at = k+1, 0
			if b, err = s.block(l, k); err != nil {
				return "", err
			}
		}
		d, n1 := binary.Uvarint(b[at:])
		size, n2 := binary.Uvarint(b[at+n1:])
		start := at + n1 + n2
		at = start + int(size) //nolint:gosec // G115: a length this store wrote
		prev += uint32(d)      //nolint:gosec // G115: a line difference this store wrote
		if prev == line {
			return string(b[start:at]), nil
		}
		if prev > line {
			return "", fmt.Errorf("case ids: no case at line %d", line)
		}
	}
}
