package baseline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The load is a pipeline (issue 23): one goroutine decompresses the file
// straight into batches and splits their lines in place (split.go), workers parse the batches in parallel (each line
// in one pass by fastRecord when it has the writer's layout, else the jsonpos
// duplicate-key check, fastjson and recordOf; the hashes of the id, gold and
// top k), and Load
// itself takes the parsed batches in file order: it checks the limits, inserts
// each record in the hash table (a duplicate id is found at the same line as
// reading in one pass would find it), appends the records and writes their
// details (what a report may list of them) to the temporary file. So the Baseline and the first error (the earliest
// line's) are those of a sequential read; only the parsing is spread. At most
// loadInFlight batches exist at once, which bounds the memory.

const (
	batchBytes = 256 << 10 // a batch ends after the line that passes this many bytes
	batchLines = 2048      // or after this many lines
)

// lineBatch is a run of consecutive case lines and, once a worker has parsed
// it, their records.
type lineBatch struct {
	// buf holds the lines where they were read (Source.fill): line i is
	// buf[starts[i]:ends[i]]; buf[:used] holds them all (with newlines and
	// blank lines), the part the temporary file gets.
	buf          []byte
	starts, ends []int
	used         int
	lnos         []int // each line's number in the file
	// readErr ends the file after these lines (a read error at its line).
	readErr error

	// Set by the worker; done is closed when they are final.
	recs []record // off and topAt relative to the batch (offsets in det, tops)
	// det holds the records' details, the part of each line a report may
	// list (appendDetail; the whole line when it took the general path):
	// the temporary file gets them.
	det    []byte
	clines []int // each record's case line ("line"; -1 when not known)
	tops   []uint64
	err    error // the input error of line len(recs), if any
	done   chan struct{}
}

func (lb *lineBatch) line(i int) []byte { return lb.buf[lb.starts[i]:lb.ends[i]] }

// Load reads the whole baseline from r (named file), in bounded memory: see
// Baseline. A duplicate case id is an input error naming both lines. The
// temporary file is made in tmpDir ("" is the system's).
func Load(ctx context.Context, r io.Reader, file, tmpDir string) (*Baseline, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a read still waiting for input stops
	src, err := Open(input.Reader(ctx, r), file)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the first line's read was interrupted by the cancellation
		}
		return nil, err
	}
	tmp, err := os.CreateTemp(tmpDir, "retrieval-gate-baseline-*")
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("baseline: %w", err)
	}
	os.Remove(tmp.Name()) // unlinked at once: the open file is ours alone
	b := &Baseline{Source: src, tmp: tmp}
	if src.Header != nil {
		b.presize(src.Header.Cases)
	}

	workers := max(1, runtime.GOMAXPROCS(0))
	inFlight := 2*workers + 2
	free := make(chan *lineBatch, inFlight)
	for range inFlight {
		free <- &lineBatch{}
	}
	work := make(chan *lineBatch, inFlight)
	order := make(chan *lineBatch, inFlight)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the reader: gunzip and line split
		defer wg.Done()
		defer close(work)
		defer close(order)
		src.readBatches(ctx, free, work, order, stop)
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p fastjson.Parser
			var check jsonpos.Scanner
			var c CaseLine
			var hs []uint64
			for lb := range work {
				hs = lb.parse(&p, &check, &c, hs, file)
				close(lb.done)
			}
		}()
	}
	ok := false
	defer func() {
		close(stop)
		cancel()
		wg.Wait() // no goroutine reads src or a batch once Load returns
		src.Close()
		if !ok {
			b.Close() // the temporary file and the records
		}
	}()
	lastLine := src.headerLine // the last line read
	for lb := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		<-lb.done
		if n := len(lb.lnos); n > 0 {
			lastLine = lb.lnos[n-1]
		}
		if lb.readErr != nil && !errors.Is(lb.readErr, io.EOF) && ctx.Err() != nil {
			return nil, ctx.Err() // the read was interrupted by the cancellation
		}
		if err := b.take(lb, file); err != nil {
			return nil, err
		}
		// The details of the records taken (all of them unless there is an
		// error, which ends the load): a batch is a large write.
		if _, err := tmp.Write(lb.det); err != nil {
			return nil, fmt.Errorf("baseline: temporary file: %w", err)
		}
		if lb.err != nil {
			return nil, lb.err
		}
		if lb.readErr != nil {
			if errors.Is(lb.readErr, io.EOF) {
				break
			}
			return nil, lb.readErr
		}
		free <- lb
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A header that states its case count holds the file to it: a file cut at
	// a line boundary (a whole gzip stream still) or with lines added or taken
	// out is refused. The error is at the header's line, which states the count.
	if src.casesStated && int64(b.recs.n) != src.Header.Cases {
		return nil, input.Errorf(file, src.headerLine, "the header states %d cases, the file has %d case lines (up to line %d): a baseline cut short or edited; write it again with check --write-baseline", src.Header.Cases, b.recs.n, lastLine)
	}
	ok = true
	return b, nil
}

// readBatches reads the case lines into batches and hands each to the workers
// and, in file order, to Load. The last batch carries the error that ended the
// file (io.EOF at its end).
func (s *Source) readBatches(ctx context.Context, free <-chan *lineBatch, work, order chan<- *lineBatch, stop <-chan struct{}) {
	for {
		var lb *lineBatch
		select {
		case lb = <-free:
		case <-stop:
			return
		}
		lb.done = make(chan struct{})
		s.fill(lb, batchLines)
		if lb.readErr == nil && ctx.Err() != nil {
			lb.readErr = ctx.Err()
		}
		select {
		case order <- lb:
		case <-stop:
			return
		}
		select {
		case work <- lb:
		case <-stop:
			return
		}
		if lb.readErr != nil {
			return
		}
	}
}

// parse parses the batch's lines into records until the first bad line. hs is
// the worker's scratch for the top-k hashes, returned for reuse.
func (lb *lineBatch) parse(p *fastjson.Parser, check *jsonpos.Scanner, c *CaseLine, hs []uint64, file string) []uint64 {
	lb.recs, lb.clines, lb.tops, lb.det, lb.err = lb.recs[:0], lb.clines[:0], lb.tops[:0], lb.det[:0], nil
	var gold [][]byte
	var d detailSpans
	for i := range lb.ends {
		line, ln := lb.line(i), lb.lnos[i]
		var rec record
		var ok bool
		var cline int
		if hs, cline, ok = fastRecord(check, line, &rec, hs[:0], &gold, &d); ok && ln >= 0 && int64(ln) <= math.MaxUint32 {
			at := len(lb.det)
			lb.det = appendDetail(lb.det, &d)
			rec.size = uint32(len(lb.det) - at) //nolint:gosec // G115: a detail is shorter than its line, which Source.fill caps at MaxLineBytes (16 MiB)
			if rec.hasTop {
				rec.topAt, rec.topN = uint32(len(lb.tops)), uint16(len(hs)) //nolint:gosec // G115: a batch holds at most batchLines × maxTopDepth hashes, a record at most maxTopDepth
				lb.tops = append(lb.tops, hs...)
			}
			lb.recs, lb.clines = append(lb.recs, rec), append(lb.clines, cline)
			continue
		}
		// The general path: the jsonpos check, fastjson, recordOf, and
		// ParseCaseLine for what is wrong.
		if err := check.Check(line); err != nil {
			lb.err = input.Errorf(file, ln, "%s", jsonpos.Message(err, "invalid JSON: "))
			return hs
		}
		// The record's fields are 32-bit: what does not fit is an input error,
		// never a silently truncated value.
		if ln < 0 || int64(ln) > math.MaxUint32 { // Source counts lines from 1
			lb.err = input.Errorf(file, ln, "more than %d lines: split the baseline", uint32(math.MaxUint32))
			return hs
		}
		rec, ok = record{}, false
		if v, err := p.ParseBytes(line); err == nil {
			hs, ok = recordOf(v, &rec, hs[:0], &gold)
		}
		if !ok { // what is wrong, from ParseCaseLine
			if err := ParseCaseLine(p, line, file, ln, c); err != nil {
				lb.err = err
				return hs
			}
			if c.Rank < 0 || c.Rank > math.MaxInt32 { // ParseCaseLine rejects a negative rank
				lb.err = input.Errorf(file, ln, "rank %d is above %d", c.Rank, math.MaxInt32)
				return hs
			}
			rec = caseRecord(c)
			hs = hs[:0]
			if rec.hasTop {
				for _, id := range c.Top[:min(len(c.Top), maxTopDepth)] {
					hs = append(hs, IDHash(id))
				}
			}
		}
		rec.size = uint32(len(line)) //nolint:gosec // G115: Source.fill caps a line at MaxLineBytes (16 MiB)
		lb.det = append(lb.det, line...)
		if rec.hasTop {
			rec.topAt, rec.topN = uint32(len(lb.tops)), uint16(len(hs)) //nolint:gosec // G115: a batch holds at most batchLines × maxTopDepth hashes, a record at most maxTopDepth
			lb.tops = append(lb.tops, hs...)
		}
		lb.recs, lb.clines = append(lb.recs, rec), append(lb.clines, -1)
	}
	return hs
}

// caseRecord is the record of a parsed case line (but for off, size, line and
// the top-k hashes).
func caseRecord(c *CaseLine) record {
	rec := record{id: IDHash(c.ID), gold: GoldHash(c.Gold), scores: c.Scores, hasTop: c.Ranked || c.HasTop}
	if c.Ranked {
		rec.setRank(c.Rank) // the caller checked the range
	}
	for j, h := range c.Has {
		if h {
			rec.has |= 1 << j
		}
	}
	return rec
}

// take adds a parsed batch's records (in file order; their details follow the
// previous batch's in the temporary file).
func (b *Baseline) take(lb *lineBatch, file string) error {
	for i := range lb.recs {
		if i%touchAhead == 0 {
			b.touch(lb.recs[i:min(i+touchAhead, len(lb.recs))])
		}
		rec, ln := lb.recs[i], lb.lnos[i]
		idx := b.recs.n
		if idx < 0 || idx >= math.MaxInt32 {
			return input.Errorf(file, ln, "more than %d cases: split the baseline", math.MaxInt32)
		}
		if rec.hasTop && rec.topN > 0 {
			at, err := b.tops.add(lb.tops[rec.topAt : rec.topAt+uint32(rec.topN)])
			if err != nil {
				return input.Errorf(file, ln, "%v: split the baseline", err)
			}
			rec.topAt = at
		}
		if first, dup := b.insert(rec.id, int32(idx)); dup {
			var p fastjson.Parser
			var c CaseLine
			if err := ParseCaseLine(&p, lb.line(i), file, ln, &c); err != nil {
				return err
			}
			return input.Errorf(file, ln, "duplicate case id %q (first at line %d)", c.ID, b.lineOf(int(first)))
		}
		b.follow(idx, lb.clines[i])
		b.addPlace(idx, rec.size, ln)
		b.recs.add(rec)
	}
	return nil
}

// touchAhead is how many records' table slots take loads before inserting them.
const touchAhead = 256

// touch loads the table slots that recs' ids probe first, one after the other:
// the loads do not depend on each other, so their cache misses overlap, and
// the inserts that follow find the slots in cache (one random miss per case
// was most of the insert's time).
func (b *Baseline) touch(recs []record) {
	if b.bits == 0 || 4*(b.recs.n+len(recs)) > 3*len(b.slots) {
		return // the table grows first
	}
	var acc uint64
	for i := range recs {
		acc += b.slots[(recs[i].id*0x9e3779b97f4a7c15)>>(64-b.bits)].key
	}
	b.touched += acc
}

// recordOf fills rec (but for off, size and line) and appends the top-k hashes
// to hs from a parsed case line, without allocating: the strings are hashed
// where fastjson unescaped them. It accepts exactly what ParseCaseLine accepts
// and computes the same values; ok is false for anything else, and the caller
// then runs ParseCaseLine, which reports what is wrong (the check is the
// differential FuzzRecordOf).
func recordOf(v *fastjson.Value, rec *record, hs []uint64, gold *[][]byte) (out []uint64, ok bool) {
	if v.Type() != fastjson.TypeObject {
		return hs, false
	}
	str := func(key string) ([]byte, bool) {
		x := v.Get(key)
		if x == nil || x.Type() == fastjson.TypeNull {
			return nil, true
		}
		sb, err := x.StringBytes()
		return sb, err == nil
	}
	id, ok := str("id")
	if !ok || len(id) == 0 {
		return hs, false
	}
	for _, k := range [...]string{"locale", "type", "query"} {
		if _, ok := str(k); !ok {
			return hs, false
		}
	}
	key := "gold"
	if v.Get(key) == nil {
		key = "must_cite_one_of"
	}
	*gold = (*gold)[:0]
	if x := v.Get(key); x != nil && x.Type() != fastjson.TypeNull {
		arr, err := x.Array()
		if err != nil {
			return hs, false
		}
		for _, e := range arr {
			sb, err := e.StringBytes()
			if err != nil {
				return hs, false
			}
			*gold = append(*gold, sb)
		}
	}
	if x := v.Get("line"); x != nil {
		if n, err := x.Int(); err != nil || n < 0 {
			return hs, false
		}
	}
	*rec = record{id: idHashBytes(id), gold: goldHashBytes(*gold)}
	if x := v.Get("scores"); x != nil && x.Type() != fastjson.TypeNull {
		o, err := x.Object()
		if err != nil {
			return hs, false
		}
		bad := false
		o.Visit(func(k []byte, e *fastjson.Value) {
			i := metrics.CaseIndex(string(k)) // no allocation: the conversion only looks the key up
			if i < 0 || bad {
				return
			}
			f, err := e.Float64()
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !metrics.CaseMeasures[i].Scale.InRange(f) {
				bad = true
				return
			}
			rec.scores[i] = f
			rec.has |= 1 << i
		})
		if bad {
			return hs, false
		}
	}
	if x := v.Get("rank"); x != nil {
		n, err := x.Int()
		if err != nil || n < 0 || n > math.MaxInt32 {
			return hs, false // (a rank above MaxInt32 is refused by the caller after ParseCaseLine)
		}
		rec.hasTop = true
		rec.setRank(n)
	}
	if x := v.Get("top"); x != nil && x.Type() != fastjson.TypeNull {
		arr, err := x.Array()
		if err != nil {
			return hs, false
		}
		for i, e := range arr {
			sb, err := e.StringBytes()
			if err != nil {
				return hs, false
			}
			if i < maxTopDepth {
				hs = append(hs, idHashBytes(sb))
			}
		}
		rec.hasTop = true
	}
	return hs, true
}

// idHashBytes is IDHash of a string's bytes.
func idHashBytes(s []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range s {
		h ^= uint64(c)
		h *= 1099511628211
	}
	if h == 0 {
		h = 1
	}
	return h
}

// goldHashBytes is GoldHash of ids given as bytes (reordered in place).
func goldHashBytes(ids [][]byte) uint64 {
	n := 0
	for _, g := range ids {
		if len(g) == 0 || slices.ContainsFunc(ids[:n], func(d []byte) bool { return bytes.Equal(d, g) }) {
			continue
		}
		ids[n] = g
		n++
	}
	if n == 0 {
		return 0
	}
	ids = ids[:n]
	slices.SortFunc(ids, bytes.Compare)
	h := uint64(14695981039346656037)
	for _, id := range ids {
		for _, c := range id {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0
		h *= 1099511628211
	}
	return h | 1
}
