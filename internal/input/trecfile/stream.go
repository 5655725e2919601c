package trecfile

// A TREC run whose query ids come in increasing byte order (each query one
// block of lines, as trec_eval's and most systems' outputs are written) can be
// scored query by query: ScanTRECRun hands each query's top k on as soon as
// its last line is read and keeps nothing else, so its memory does not grow
// with the run. A run in any other order is refused with ErrNotSorted at the
// first query id that does not sort after the one before; its reader then
// reads it whole (ReadRunFrom).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// ErrNotSorted is ScanTRECRun's error for a run whose query ids do not come
// in increasing byte order: a query id not above the previous block's.
var ErrNotSorted = errors.New("the run's query ids are not in increasing byte order")

// trecStream is the state of a parser that hands each query on (ScanTRECRun).
type trecStream struct {
	emit    func(id []byte, docs [][]byte) error
	id      []byte // the current query's
	started bool
	docs    [][]byte
	queries int
}

// streamQuery is query for a stream: the current query's buffer, emptied for
// a new query id once the previous query has been handed on.
func (p *trecRunParser) streamQuery(qid []byte) *trecTopK {
	st := p.stream
	t := &p.qs[0]
	if st.started && bytes.Equal(qid, st.id) {
		return t
	}
	if st.started {
		p.flush()
		if p.serr == nil && bytes.Compare(qid, st.id) <= 0 {
			p.serr = ErrNotSorted
		}
	}
	st.id = append(st.id[:0], qid...)
	st.started = true
	t.entries = t.entries[:0] // their doc buffers are reused by insert
	return t
}

// flush hands the current query on, unless the stream has failed.
func (p *trecRunParser) flush() {
	st := p.stream
	if !st.started || p.serr != nil {
		return
	}
	st.docs = st.docs[:0]
	for _, e := range p.qs[0].entries {
		st.docs = append(st.docs, e.doc)
	}
	st.queries++
	if err := st.emit(st.id, st.docs); err != nil {
		p.serr = err
	}
}

// ScanTRECRun reads a TREC run in order from r and calls emit with each
// query's id and top k documents, best first (ParseTRECRun's ranking), as soon
// as the query's last line has been read. The slices are valid during the call
// only. The query ids must come in increasing byte order: otherwise it stops
// with ErrNotSorted at the first that does not. Malformed lines fail as in
// ParseTRECRun (file:line), an error of emit stops the scan and is returned,
// and a run without a query is "empty run".
func ScanTRECRun(ctx context.Context, r io.Reader, file string, k int, emit func(id []byte, docs [][]byte) error) error {
	if k < 1 {
		return fmt.Errorf("run cutoff k must be at least 1, got %d", k)
	}
	p := newTrecRunParser(file, k)
	p.stream = &trecStream{emit: emit}
	var entries []trecEntry // large k: grown on demand
	if k <= trecPoolK {
		entries = make([]trecEntry, 0, k)
	}
	p.qs = []trecTopK{{entries: entries}}
	if err := p.readSeq(ctx, r); err != nil {
		return err
	}
	p.flush()
	if p.serr != nil {
		return p.serr
	}
	if p.stream.queries == 0 {
		return input.Errorf(file, 0, "empty run")
	}
	return nil
}

// SequentialTREC returns a reader of r from its start without moving r's
// offset, when r is a TREC run (not a cases JSONL: detected by its first byte,
// as ReadRunFrom does) in a regular file or a reader that says its Size, with
// positioned reads; ok is false otherwise, and on any error (ReadRunFrom then
// reads r and reports it).
func SequentialTREC(ctx context.Context, r io.Reader) (io.Reader, bool) {
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return nil, false
	}
	size, ok := regularSize(r)
	if !ok {
		return nil, false
	}
	first, err := firstByteAt(ctx, ra)
	if err != nil || first == 0 || first == '{' {
		return nil, false
	}
	return io.NewSectionReader(ra, 0, size), true
}
