package trecfile

// Runs are streamed: a TREC run is read in blocks, parsed as bytes without a
// per-line allocation, and only the best k documents of each query are kept (a
// bounded insertion buffer ordered as trec_eval orders: score descending, ties by
// docid descending). A regular file is split into byte ranges at line boundaries
// that are parsed in parallel; the per-query buffers of the ranges are merged.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// RunQuery is the top k of one query of a run, best first.
type RunQuery struct {
	ID   string
	Docs []string
}

// Run is the top k of every query of a run, sorted by query id.
type Run struct {
	File    string
	Format  string // "trec" or "cases"
	K       int
	Queries []RunQuery
}

// RunOptions tunes the TREC run reader; zero values pick the defaults.
type RunOptions struct {
	Workers   int // parallel parsers; default GOMAXPROCS
	ChunkSize int // bytes per range; default 8 MiB
}

// ReadRunFrom is ReadRun over an open run named file in messages, read from
// its start: a TREC run or a cases JSONL, detected by content. A reader with
// positioned reads (io.ReaderAt: an *os.File, a *bytes.Reader) is detected
// without moving its offset, and a TREC run in a regular file, or one whose
// Size is known, is parsed in parallel ranges; any other reader is read once,
// in order.
func ReadRunFrom(ctx context.Context, r io.Reader, file string, k int, opt RunOptions) (*Run, error) {
	if k < 1 {
		return nil, fmt.Errorf("run cutoff k must be at least 1, got %d", k)
	}
	ra, ok := r.(io.ReaderAt)
	if !ok {
		first, head, err := firstByte(r)
		if err != nil {
			return nil, fmt.Errorf("failed to read run: %w", err)
		}
		if first == 0 {
			return nil, input.Errorf(file, 0, "empty run")
		}
		r = io.MultiReader(bytes.NewReader(head), r)
		if first == '{' {
			return readCasesRun(ctx, r, file, k, opt)
		}
		return ParseTRECRun(ctx, r, file, k)
	}
	first, err := firstByteAt(ctx, ra)
	if err != nil {
		return nil, err
	}
	if first == 0 {
		return nil, input.Errorf(file, 0, "empty run")
	}
	if first == '{' {
		return readCasesRun(ctx, r, file, k, opt)
	}
	if size, ok := regularSize(r); ok {
		return parseTRECRunAt(ctx, ra, size, file, k, opt)
	}
	return ParseTRECRun(ctx, r, file, k)
}

// firstByteAt is the first byte of ra that is not TREC white space (after a
// leading BOM), 0 when there is none: the format is detected from it. It
// ends with ctx.Err() once ctx ends (gigabytes of white space take seconds).
func firstByteAt(ctx context.Context, ra io.ReaderAt) (byte, error) {
	head := make([]byte, 4096)
	var first byte
	var off int64
	for first == 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, rerr := ra.ReadAt(head, off)
		if rerr != nil && rerr != io.EOF {
			return 0, fmt.Errorf("failed to read run: %w", rerr)
		}
		h := head[:n]
		if off == 0 {
			h = input.TrimBOM(h)
		}
		for _, c := range h {
			if !trecSpace(c) {
				first = c
				break
			}
		}
		off += int64(n)
		if rerr == io.EOF {
			break
		}
	}
	return first, nil
}

// regularSize is the size of r when it is a regular file or says its Size.
func regularSize(r io.Reader) (int64, bool) {
	switch f := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return 0, false
		}
		return st.Size(), true
	case interface{ Size() int64 }:
		return f.Size(), true
	}
	return 0, false
}

// firstByte reads r up to its first byte that is not TREC white space (after a
// leading BOM) and returns it (0: none) with every byte read.
func firstByte(r io.Reader) (byte, []byte, error) {
	var head []byte
	buf := make([]byte, 4096)
	seen := 0 // bytes of head known to be blank (after the BOM)
	for {
		n, err := r.Read(buf)
		head = append(head, buf[:n]...)
		if len(head) >= len(input.BOM) || err != nil { // a BOM is whole before it is trimmed
			if seen == 0 {
				seen = len(head) - len(input.TrimBOM(head))
			}
			for ; seen < len(head); seen++ {
				if c := head[seen]; !trecSpace(c) {
					return c, head, nil
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return 0, head, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}

func readCasesRun(ctx context.Context, r io.Reader, file string, k int, opt RunOptions) (*Run, error) {
	type res struct {
		q    RunQuery
		line int
	}
	seen := map[string]int{}
	run := &Run{File: file, Format: "cases", K: k}
	err := casefile.MapCases(ctx, r, file, opt.Workers, func(c *casefile.Case) (res, error) {
		if !c.HasRetrieved {
			return res{}, input.Errorf(file, c.Line, "case %q has no \"retrieved\" list to rank", c.ID)
		}
		ranked := make([]string, len(c.Retrieved))
		for i, e := range c.Retrieved {
			ranked[i] = e.Identity()
		}
		docs := casefile.TopKIdentities(make([]string, 0, min(k, len(ranked))), ranked, k)
		return res{RunQuery{ID: c.ID, Docs: docs}, c.Line}, nil
	}, func(x res) error {
		if prev, ok := seen[x.q.ID]; ok {
			return input.Errorf(file, x.line, "duplicate case id %q (first on line %d)", x.q.ID, prev)
		}
		seen[x.q.ID] = x.line
		run.Queries = append(run.Queries, x.q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(run.Queries) == 0 {
		return nil, input.Errorf(file, 0, "empty run")
	}
	slices.SortFunc(run.Queries, func(a, b RunQuery) int { return strings.Compare(a.ID, b.ID) })
	return run, nil
}

// trecPoolK is the largest k whose buffers are carved, full size, from a shared pool.
const trecPoolK = 64

// trecEntry is one ranked document of a query's buffer.
type trecEntry struct {
	score float64
	doc   []byte
}

// trecBetter reports whether (s1, d1) ranks before (s2, d2): score descending, then
// docid descending (trec_eval's order).
func trecBetter(s1 float64, d1 []byte, s2 float64, d2 []byte) bool {
	if s1 != s2 {
		return s1 > s2
	}
	return bytes.Compare(d1, d2) > 0
}

// trecTopK is the bounded buffer of one query: at most k entries, best first, one
// per docid (its best-ranked occurrence).
type trecTopK struct {
	id      string
	entries []trecEntry
}

// trecRunParser accumulates the top k of every query it sees.
type trecRunParser struct {
	file   string
	k      int
	index  map[string]int // query id -> index in qs (int: a query count needs no bound proof)
	qs     []trecTopK
	last   int // index of the query of the previous line, -1 none
	pool   []trecEntry
	slab   []byte
	errOff int64 // byte offset of the line of err
	err    *input.Error
	stream *trecStream // ScanTRECRun's: one query at a time (stream.go)
	serr   error       // the stream's first error: the block's parse stops there
}

func newTrecRunParser(file string, k int) *trecRunParser {
	return &trecRunParser{file: file, k: k, index: map[string]int{}, last: -1}
}

func (p *trecRunParser) alloc(n int) []byte {
	if n > 4096 {
		return make([]byte, n)
	}
	if len(p.slab) < n {
		p.slab = make([]byte, 1<<16)
	}
	b := p.slab[:n:n]
	p.slab = p.slab[n:]
	return b
}

func (p *trecRunParser) query(qid []byte) *trecTopK {
	if p.stream != nil {
		return p.streamQuery(qid)
	}
	if p.last >= 0 && string(qid) == p.qs[p.last].id {
		return &p.qs[p.last]
	}
	i, ok := p.index[string(qid)]
	if !ok {
		i = len(p.qs)
		s := string(qid)
		p.index[s] = i
		var entries []trecEntry // large k: grown on demand
		if p.k <= trecPoolK {
			if len(p.pool) < p.k {
				p.pool = make([]trecEntry, 4096/p.k*p.k)
			}
			entries = p.pool[:0:p.k]
			p.pool = p.pool[p.k:]
		}
		p.qs = append(p.qs, trecTopK{id: s, entries: entries})
	}
	p.last = i
	return &p.qs[i]
}

// insert offers (score, doc) to t, copying doc when kept.
func (p *trecRunParser) insert(t *trecTopK, score float64, doc []byte) {
	e := t.entries
	n := len(e)
	if n == p.k && !trecBetter(score, doc, e[n-1].score, e[n-1].doc) {
		return
	}
	// The best-ranked occurrence of a docid wins.
	for i := range e {
		if bytes.Equal(e[i].doc, doc) {
			if !trecBetter(score, doc, e[i].score, e[i].doc) {
				return
			}
			// Remove the worse occurrence; its storage is reused below.
			d := e[i].doc
			copy(e[i:], e[i+1:])
			e[n-1].doc = d
			n--
			e = e[:n]
			break
		}
	}
	var buf []byte
	if n == p.k {
		buf = e[n-1].doc // evict the last
		n--
	} else if n < cap(e) {
		buf = e[:n+1][n].doc // storage of a previously removed entry, if any
	} else {
		e = slices.Grow(e, 1)
	}
	if cap(buf) >= len(doc) {
		buf = buf[:len(doc)]
	} else {
		buf = p.alloc(len(doc))
	}
	copy(buf, doc)
	pos := n
	for pos > 0 && trecBetter(score, doc, e[pos-1].score, e[pos-1].doc) {
		pos--
	}
	e = e[:n+1]
	copy(e[pos+1:], e[pos:n])
	e[pos] = trecEntry{score: score, doc: buf}
	t.entries = e
}

// trecClass classifies the bytes of a TREC run: 0 within a field, 1 a field
// separator (space, tab, CR), 2 the end of a line.
var trecClass = [256]uint8{' ': 1, '\t': 1, '\r': 1, '\n': 2}

// lines parses the lines `qid Q0 docid rank score tag` of b; base is the file
// offset of b[0]. b must end with '\n': that sentinel stops every scan, so the
// byte loops run without bounds checks. It stops at the first malformed line.
func (p *trecRunParser) lines(b []byte, base int64) bool {
	if len(b) == 0 {
		return true
	}
	if b[len(b)-1] != '\n' {
		panic("trecfile: TREC run block without a final newline")
	}
	ptr := unsafe.Pointer(unsafe.SliceData(b)) //nolint:gosec // G103: reads below stop at the '\n' sentinel b ends with (checked above), so i stays < len(b); BENCHMARKS.md
	i := 0
	if base == 0 && bytes.HasPrefix(b, input.BOM) {
		i = len(input.BOM) // a UTF-8 BOM at the start of the file
	}
	for i < len(b) {
		start := i
		var st, en [6]int
		n := 0
		c := trecClass[*(*byte)(unsafe.Add(ptr, i))]
		for {
			for c == 1 {
				i++
				c = trecClass[*(*byte)(unsafe.Add(ptr, i))]
			}
			if c == 2 {
				break
			}
			f := i
			for c == 0 {
				i++
				c = trecClass[*(*byte)(unsafe.Add(ptr, i))]
			}
			if n < 6 {
				st[n], en[n] = f, i
			}
			n++
		}
		i++ // past '\n'
		off := base + int64(start)
		if i-start > MaxLineBytes+1 {
			p.fail(off, "line longer than %d MiB", MaxLineBytes>>20)
			return false
		}
		if n == 0 {
			continue // blank line
		}
		if n != 6 {
			p.fail(off, "malformed run line: want 6 fields \"qid Q0 docid rank score tag\", got %d", n)
			return false
		}
		score, ok := trecScore(b[st[4]:en[4]])
		if !ok {
			p.fail(off, "score %s is not a finite decimal number", jsonpos.QuoteKey(b[st[4]:en[4]]))
			return false
		}
		p.insert(p.query(b[st[0]:en[0]]), score, b[st[2]:en[2]])
	}
	return true
}

func (p *trecRunParser) fail(off int64, format string, args ...any) {
	p.errOff = off
	p.err = input.Errorf(p.file, 0, format, args...)
}

// merge folds o's buffers into p's.
func (p *trecRunParser) merge(o *trecRunParser) {
	for i := range o.qs {
		t := p.query([]byte(o.qs[i].id))
		for _, e := range o.qs[i].entries {
			p.insert(t, e.score, e.doc)
		}
	}
}

func (p *trecRunParser) run() *Run {
	run := &Run{File: p.file, Format: "trec", K: p.k, Queries: make([]RunQuery, len(p.qs))}
	for i, t := range p.qs {
		size := 0
		for _, e := range t.entries {
			size += len(e.doc)
		}
		var all []byte
		all = make([]byte, 0, size)
		for _, e := range t.entries {
			all = append(all, e.doc...)
		}
		s := unsafe.String(unsafe.SliceData(all), len(all)) //nolint:gosec // G103: all is a fresh buffer this view owns; nothing writes it after this line
		docs := make([]string, len(t.entries))
		o := 0
		for j, e := range t.entries {
			docs[j] = s[o : o+len(e.doc)]
			o += len(e.doc)
		}
		run.Queries[i] = RunQuery{ID: t.id, Docs: docs}
	}
	slices.SortFunc(run.Queries, func(a, b RunQuery) int { return strings.Compare(a.ID, b.ID) })
	return run
}

// ParseTRECRun reads a TREC run sequentially from r and keeps the top k per query.
func ParseTRECRun(ctx context.Context, r io.Reader, file string, k int) (*Run, error) {
	if k < 1 {
		return nil, fmt.Errorf("run cutoff k must be at least 1, got %d", k)
	}
	p := newTrecRunParser(file, k)
	if err := p.readSeq(ctx, r); err != nil {
		return nil, err
	}
	if len(p.qs) == 0 {
		return nil, input.Errorf(file, 0, "empty run")
	}
	return p.run(), nil
}

// readSeq parses r in order, a block at a time; the error is at its file:line.
func (p *trecRunParser) readSeq(ctx context.Context, r io.Reader) error {
	file := p.file
	r = input.Reader(ctx, r)
	buf := make([]byte, 1<<20)
	have := 0
	var base int64
	var lines int
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if have == len(buf) {
			if have > MaxLineBytes {
				// No newline in more than MaxLineBytes: the line is too long.
				return input.Errorf(file, lines+1, "line longer than %d MiB", MaxLineBytes>>20)
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		n, err := r.Read(buf[have:])
		if err != nil && err != io.EOF && ctx.Err() != nil {
			return ctx.Err()
		}
		have += n
		eof := err == io.EOF
		if err != nil && !eof {
			return fmt.Errorf("failed to read %s: %w", file, err)
		}
		end := have
		if !eof {
			end = bytes.LastIndexByte(buf[:have], '\n') + 1
		} else if have > 0 && buf[have-1] != '\n' {
			buf = append(buf[:have], '\n') // the sentinel after an unterminated last line
			have++
			end = have
		}
		if end > 0 {
			if !p.lines(buf[:end], base) {
				l := lines + bytes.Count(buf[:p.errOff-base], []byte{'\n'}) + 1
				p.err.Line = l
				return p.err
			}
			if p.serr != nil {
				return p.serr
			}
			lines += bytes.Count(buf[:end], []byte{'\n'})
			base += int64(end)
			have = copy(buf, buf[end:have])
		}
		if eof {
			break
		}
	}
	return nil
}

// parseTRECRunAt parses a TREC run of the given size in parallel byte ranges.
func parseTRECRunAt(ctx context.Context, ra io.ReaderAt, size int64, file string, k int, opt RunOptions) (*Run, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunk := int64(opt.ChunkSize)
	if chunk <= 0 {
		chunk = 8 << 20
	}
	nchunks := int((size + chunk - 1) / chunk)
	workers = max(1, min(workers, nchunks))
	var next atomic.Int64
	var errChunk atomic.Int64
	errChunk.Store(math.MaxInt64)
	type failure struct {
		off int64
		err *input.Error
	}
	fails := make([]failure, nchunks)
	var ioErr error
	var ioOnce sync.Once
	parsers := make([]*trecRunParser, workers)
	var wg sync.WaitGroup
	for w := range workers {
		p := newTrecRunParser(file, k)
		parsers[w] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, chunk+1+trecTail)
			for {
				c := next.Add(1) - 1
				if c >= int64(nchunks) || c > errChunk.Load() {
					return
				}
				if ctx.Err() != nil {
					ioOnce.Do(func() { ioErr = ctx.Err() })
					errChunk.Store(-1)
					return
				}
				start, end := c*chunk, min((c+1)*chunk, size)
				b, base, err := trecReadRange(ra, &buf, start, end, size)
				if err != nil {
					ioOnce.Do(func() { ioErr = fmt.Errorf("failed to read %s: %w", file, err) })
					errChunk.Store(-1)
					return
				}
				p.last = -1
				if !p.lines(b, base) {
					fails[c] = failure{p.errOff, p.err}
					for {
						cur := errChunk.Load()
						if c >= cur || errChunk.CompareAndSwap(cur, c) {
							break
						}
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if ioErr != nil {
		return nil, ioErr
	}
	if c := errChunk.Load(); c != math.MaxInt64 {
		f := fails[c]
		line, err := trecLineOf(ra, f.off)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", file, err)
		}
		f.err.Line = line
		return nil, f.err
	}
	p := parsers[0]
	for _, o := range parsers[1:] {
		p.merge(o)
	}
	if len(p.qs) == 0 {
		return nil, input.Errorf(file, 0, "empty run")
	}
	return p.run(), nil
}

// trecTail is how much is read at a time past a range to finish its last line.
const trecTail = 64 << 10

// trecReadRange returns the complete lines that start in [start, end) and the file
// offset of the first one. buf is reused when large enough.
func trecReadRange(ra io.ReaderAt, bufp *[]byte, start, end, size int64) ([]byte, int64, error) {
	from := start
	if start > 0 {
		from = start - 1 // to see whether a line starts at start
	}
	want := end - from
	buf := *bufp
	if int64(cap(buf)) < want {
		buf = make([]byte, want, want+trecTail)
	}
	buf = buf[:want]
	defer func() { *bufp = buf[:0] }()
	if _, err := ra.ReadAt(buf, from); err != nil && err != io.EOF {
		return nil, 0, err
	}
	skip := 0
	if start > 0 {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			return buf[:0], end, nil // no line starts in this range
		}
		skip = nl + 1
	}
	// Finish the last line, which may run past end.
	pos := end
	// (at most MaxLineBytes past end: a longer line fails in lines, by its length)
	for buf[len(buf)-1] != '\n' && pos < size && pos-end <= MaxLineBytes+1 {
		more := min(int64(trecTail), size-pos)
		n := len(buf)
		buf = slices.Grow(buf, int(more))[:n+int(more)]
		if _, err := ra.ReadAt(buf[n:], pos); err != nil && err != io.EOF {
			return nil, 0, err
		}
		pos += more
		if nl := bytes.IndexByte(buf[n:], '\n'); nl >= 0 {
			buf = buf[:n+nl+1]
			break
		}
	}
	if len(buf) > skip && buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n') // the file's last line has no newline: add the sentinel
	}
	return buf[skip:], from + int64(skip), nil
}

// trecLineOf returns the 1-based line number of the line starting at byte off.
func trecLineOf(ra io.ReaderAt, off int64) (int, error) {
	buf := make([]byte, 1<<20)
	line := 1
	var pos int64
	for pos < off {
		n := min(int64(len(buf)), off-pos)
		m, err := ra.ReadAt(buf[:n], pos)
		line += bytes.Count(buf[:m], []byte{'\n'})
		pos += int64(m)
		if err != nil && m == 0 {
			return 0, err
		}
	}
	return line, nil
}
