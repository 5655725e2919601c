package gate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// idStore keeps the case ids in file order, to name a duplicate: records of
// uvarint(line), uvarint(len(id)), id. The records are written in pages
// (idPage) by the scorers' workers (IDWriter: the id is in the worker's cache
// then) or, for a result that has none, by Add; the store links them without
// reading or copying them: a run of records that follow one another in one
// page, and in file order, is one segment (a batch of the reader's, usually),
// kept as a slice of the page. Past maxIDBytes of segments in memory, a
// segment goes to the store's temporary file (consecutive ones are one block
// there, up to idBlock bytes) and its page's memory is reused once all its
// records are written out. Every idEvery-th record is a checkpoint, so
// finding a line reads at most idEvery records.
type idStore struct {
	blocks  []idStoreBlock // committed segments, in file order
	cur     []byte         // the open segment (its capacity: the rest of its page)
	curPage *idPage
	curMark int     // the first checkpoint in cur
	own     *idPage // the page of the records Add writes
	n       int     // records
	marks   []idMark
	mem     int // bytes of the segments kept in memory
	spill   idSpill
}

type idStoreBlock struct {
	b   []byte // nil when spilled
	off int64  // its offset in the spill file when spilled
	n   int    // its length
}

// idMark is a checkpoint: the line of a record and where the record starts.
type idMark struct {
	line      uint32
	block, at int
}

// idPage is a page of records in the log's arena (or, for an id longer than a
// page, on the heap), written by one writer at a time: a scorer's worker (its
// scratch holds the page) or Add.
type idPage struct {
	buf []byte // the records written (its capacity: the page)
	mem []byte // the page, all of it (never changes)
	log *idLog
	// pending is the bytes written and not yet in the spill file, plus
	// idPageOpen while a writer holds the page: at zero every record of the
	// page is in the file and the page is reused. The writer adds when it
	// lets the page go (retire), the store subtracts a spilled segment
	// (settle); a page with a segment kept in memory never reaches zero.
	pending atomic.Int64
	heap    bool // a page of one long id: dropped, not reused
}

const (
	idPageSize = 64 << 10
	idPageOpen = 1 << 62
)

// IDWriter writes the case ids' records for an Accumulator's duplicate-id
// log, from the scorers' workers (Scorer.IDs): Add then links each result's
// record instead of copying its id on the serial path. Safe for concurrent
// use.
type IDWriter struct{ l *idLog }

// IDWriter returns the writer of a's id records, for its scorers.
func (a *Accumulator) IDWriter() *IDWriter { return &IDWriter{&a.seen} }

// record writes the record of a case (id, line) to the page the worker's
// scratch holds, and notes it in r for Add.
func (w *IDWriter) record(sc *scratch, r *CaseResult, id string, line int) {
	if line < 0 || int64(line) > int64(^uint32(0)) || len(id) > idPageSize/2 {
		return // Add reports the line, or writes the long id's record
	}
	rec := w.l.put(&sc.idPage, id, uint32(line))
	r.idPage = sc.idPage
	r.idOff = uint32(len(r.idPage.buf) - len(rec)) //nolint:gosec // G115: an offset in a page of idPageSize bytes
	r.idLen = uint16(len(rec))                     //nolint:gosec // G115: at most idPageSize/2 plus two varints
}

// put writes a record to *pp, a page the caller holds (a fresh one when it is
// nil, another log's, or full), and returns the record (its capacity: the
// rest of the page).
func (l *idLog) put(pp **idPage, id string, line uint32) []byte {
	need := 2*binary.MaxVarintLen32 + len(id)
	p := *pp
	if p == nil || p.log != l || cap(p.buf)-len(p.buf) < need {
		if p != nil {
			p.retire()
		}
		p = l.page(need)
		*pp = p
	}
	at := len(p.buf)
	b := p.buf[:cap(p.buf)]
	n := at + binary.PutUvarint(b[at:], uint64(line))
	n += binary.PutUvarint(b[n:], uint64(len(id)))
	if m := len(id); m >= 8 && m <= 16 && len(b)-n >= 16 {
		// Two overlapping words, not a call of memmove: most ids.
		binary.LittleEndian.PutUint64(b[n:], input.LE64(id, 0))
		binary.LittleEndian.PutUint64(b[n+m-8:], input.LE64(id, m-8))
	} else {
		copy(b[n:], id)
	}
	p.buf = b[:n+len(id)]
	return p.buf[at:]
}

// page returns an empty page with room for need bytes: a reused one, a new
// one of the arena, or one on the heap for a long id.
func (l *idLog) page(need int) *idPage {
	var p *idPage
	if need > idPageSize {
		b := make([]byte, need)
		p = &idPage{buf: b[:0], mem: b, log: l, heap: true}
	} else {
		l.mu.Lock()
		if n := len(l.freePages); n > 0 {
			p = l.freePages[n-1]
			l.freePages = l.freePages[:n-1]
		} else {
			b := l.alloc(idPageSize)
			p = &idPage{buf: b[:0], mem: b, log: l}
			l.pages++
		}
		l.mu.Unlock()
	}
	p.pending.Store(idPageOpen)
	return p
}

// retire lets the page go: its writer writes no more to it.
func (p *idPage) retire() { p.done(int64(len(p.buf)) - idPageOpen) }

// settle counts n bytes of the page's records as written to the spill file.
func (p *idPage) settle(n int) { p.done(-int64(n)) }

func (p *idPage) done(d int64) {
	if p.pending.Add(d) != 0 || p.heap {
		return
	}
	p.buf = p.buf[:0]
	l := p.log
	l.mu.Lock()
	l.freePages = append(l.freePages, p)
	l.mu.Unlock()
}

// add links the record rec, written in page p (nil: Add writes the record of
// id itself), of the case at line.
func (s *idStore) add(l *idLog, rec []byte, p *idPage, id string, line uint32) error {
	if p == nil {
		rec = l.put(&s.own, id, line)
		p = s.own
	}
	if p != s.curPage || addr(rec) != addr(s.cur)+uintptr(len(s.cur)) {
		if err := s.commit(l); err != nil {
			return err
		}
		s.cur, s.curPage, s.curMark = rec[:0], p, len(s.marks)
	}
	if s.n%idEvery == 0 {
		s.marks = append(s.marks, idMark{line: line, block: len(s.blocks), at: len(s.cur)})
	}
	s.cur = s.cur[:len(s.cur)+len(rec)] // the record follows the segment in its page
	s.n++
	return nil
}

// addr is the address of b's first byte, only compared.
func addr(b []byte) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))) //nolint:gosec // G103: an address compared, never turned back into a pointer
}

// commit moves the open segment to the blocks: kept in memory, or appended
// to the spill file (to the last block when that one ends where it starts).
func (s *idStore) commit(l *idLog) error {
	cur, p := s.cur, s.curPage
	if len(cur) == 0 {
		return nil
	}
	s.cur, s.curPage = nil, nil
	if s.mem+len(cur) <= cmp.Or(l.maxIDBytes, idMemBytes) {
		s.blocks = append(s.blocks, idStoreBlock{b: cur, n: len(cur)})
		s.mem += len(cur)
		return nil
	}
	off, err := s.spill.write(cur)
	if err != nil {
		return err
	}
	if k := len(s.blocks) - 1; k >= 0 && s.blocks[k].b == nil && s.blocks[k].off+int64(s.blocks[k].n) == off && s.blocks[k].n+len(cur) <= idBlock {
		for i := s.curMark; i < len(s.marks); i++ {
			s.marks[i].block, s.marks[i].at = k, s.marks[i].at+s.blocks[k].n
		}
		s.blocks[k].n += len(cur)
	} else {
		s.blocks = append(s.blocks, idStoreBlock{off: off, n: len(cur)})
	}
	p.settle(len(cur))
	return nil
}

// block returns block k's bytes (k == len(blocks): the open segment).
func (s *idStore) block(k int) ([]byte, error) {
	switch {
	case k == len(s.blocks):
		return s.cur, nil
	case k > len(s.blocks):
		return nil, fmt.Errorf("case ids: no block %d", k)
	}
	b := s.blocks[k]
	if b.b != nil {
		return b.b[:b.n], nil
	}
	buf := make([]byte, b.n)
	return buf, s.spill.read(b.off, buf)
}

// find returns the id of the case at line.
func (s *idStore) find(line uint32) (string, error) {
	i := sort.Search(len(s.marks), func(i int) bool { return s.marks[i].line > line }) - 1
	if i < 0 {
		return "", fmt.Errorf("case ids: no case at line %d", line)
	}
	k, at := s.marks[i].block, s.marks[i].at
	b, err := s.block(k)
	if err != nil {
		return "", err
	}
	for {
		if at == len(b) { // the block's last record was read: the next block
			k, at = k+1, 0
			if b, err = s.block(k); err != nil {
				return "", err
			}
			continue
		}
		ln, n1 := binary.Uvarint(b[at:])
		size, n2 := binary.Uvarint(b[at+n1:])
		start := at + n1 + n2
		at = start + int(size) //nolint:gosec // G115: a length this store wrote
		switch {
		case ln == uint64(line):
			return string(b[start:at]), nil
		case ln > uint64(line):
			return "", fmt.Errorf("case ids: no case at line %d", line)
		}
	}
}
