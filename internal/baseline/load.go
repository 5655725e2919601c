package baseline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// The load is a pipeline (issue 23): one goroutine decompresses and splits the
// file into batches of lines, workers parse the batches in parallel (the jsonpos
// duplicate-key check, fastjson, the hashes of the id, gold and top k), and Load
// itself takes the parsed batches in file order: it checks the limits, inserts
// each record in the hash table (a duplicate id is found at the same line as
// reading in one pass would find it), appends the records and writes the lines
// to the temporary file. So the Baseline and the first error (the earliest
// line's) are those of a sequential read; only the parsing is spread. At most
// loadInFlight batches exist at once, which bounds the memory.

const (
	batchBytes = 256 << 10 // a batch ends after the line that passes this many bytes
	batchLines = 2048      // or after this many lines
)

// lineBatch is a run of consecutive case lines and, once a worker has parsed
// it, their records.
type lineBatch struct {
	buf  []byte // the lines, concatenated
	ends []int  // end of each line in buf
	lnos []int  // each line's number in the file
	// readErr ends the file after these lines (a read error at its line).
	readErr error

	// Set by the worker; done is closed when they are final.
	recs []record // off and topAt relative to the batch (offsets in buf, tops)
	tops []uint64
	err  error // the input error of line len(recs), if any
	done chan struct{}
}

func (lb *lineBatch) line(i int) []byte {
	start := 0
	if i > 0 {
		start = lb.ends[i-1]
	}
	return lb.buf[start:lb.ends[i]]
}

// Load reads the whole baseline from r (named file), in bounded memory: see
// Baseline. A duplicate case id is an input error naming both lines. The
// temporary file is made in tmpDir ("" is the system's).
func Load(ctx context.Context, r io.Reader, file, tmpDir string) (*Baseline, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a read still waiting for input stops
	src, err := Open(input.Reader(ctx, r), file)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(tmpDir, "retrieval-gate-baseline-*")
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("baseline: %w", err)
	}
	os.Remove(tmp.Name()) // unlinked at once: the open file is ours alone
	b := &Baseline{Source: src, tmp: tmp}

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
			tmp.Close()
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	var off int64
	for lb := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		<-lb.done
		if lb.readErr != nil && !errors.Is(lb.readErr, io.EOF) && ctx.Err() != nil {
			return nil, ctx.Err() // the read was interrupted by the cancellation
		}
		if err := b.take(lb, off, file); err != nil {
			return nil, err
		}
		// The lines of the records taken (all of them unless there is an error,
		// which ends the load).
		if _, err := w.Write(lb.buf); err != nil {
			return nil, fmt.Errorf("baseline: temporary file: %w", err)
		}
		off += int64(len(lb.buf))
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
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("baseline: temporary file: %w", err)
	}
	ok = true
	return b, nil
}

// readBatches splits the case lines into batches and hands each to the workers
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
		lb.buf, lb.ends, lb.lnos, lb.readErr = lb.buf[:0], lb.ends[:0], lb.lnos[:0], nil
		lb.done = make(chan struct{})
		for len(lb.buf) < batchBytes && len(lb.ends) < batchLines {
			line, err := s.nextRaw()
			if err != nil {
				lb.readErr = err
				break
			}
			lb.buf = append(lb.buf, line...)
			lb.ends = append(lb.ends, len(lb.buf))
			lb.lnos = append(lb.lnos, s.line)
		}
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

// nextRaw is Next without the jsonpos check (the workers run it).
func (s *Source) nextRaw() ([]byte, error) {
	if b := s.pending; b != nil {
		s.pending = nil
		return b, nil
	}
	return s.next()
}

// parse parses the batch's lines into records until the first bad line. hs is
// the worker's scratch for the top-k hashes, returned for reuse.
func (lb *lineBatch) parse(p *fastjson.Parser, check *jsonpos.Scanner, c *CaseLine, hs []uint64, file string) []uint64 {
	lb.recs, lb.tops, lb.err = lb.recs[:0], lb.tops[:0], nil
	off := 0
	for i := range lb.ends {
		line, ln := lb.line(i), lb.lnos[i]
		if err := check.Check(line); err != nil {
			lb.err = input.Errorf(file, ln, "%s", jsonpos.Message(err, "invalid JSON: "))
			return hs
		}
		if err := ParseCaseLine(p, line, file, ln, c); err != nil {
			lb.err = err
			return hs
		}
		// The record's fields are 32-bit: what does not fit is an input error,
		// never a silently truncated value.
		if ln < 0 || ln > math.MaxUint32 { // Source counts lines from 1
			lb.err = input.Errorf(file, ln, "more than %d lines: split the baseline", uint32(math.MaxUint32))
			return hs
		}
		if c.Rank < 0 || c.Rank > math.MaxInt32 { // ParseCaseLine rejects a negative rank
			lb.err = input.Errorf(file, ln, "rank %d is above %d", c.Rank, math.MaxInt32)
			return hs
		}
		rec := record{id: IDHash(c.ID), gold: GoldHash(c.Gold), scores: c.Scores, off: int64(off),
			size: uint32(len(line)), //nolint:gosec // G115: Source's scanner caps a line at MaxLineBytes (16 MiB)
			line: uint32(ln), rank: int32(c.Rank), ranked: c.Ranked, hasTop: c.Ranked || c.HasTop}
		for j, h := range c.Has {
			if h {
				rec.has |= 1 << j
			}
		}
		if rec.hasTop {
			hs = hs[:0]
			for _, id := range c.Top[:min(len(c.Top), maxTopDepth)] {
				hs = append(hs, IDHash(id))
			}
			rec.topAt, rec.topN = uint32(len(lb.tops)), uint32(len(hs)) //nolint:gosec // G115: a batch holds at most batchLines × maxTopDepth hashes
			lb.tops = append(lb.tops, hs...)
		}
		lb.recs = append(lb.recs, rec)
		off += len(line)
	}
	return hs
}

// take adds a parsed batch's records (in file order), its lines starting at off
// in the temporary file.
func (b *Baseline) take(lb *lineBatch, off int64, file string) error {
	for i := range lb.recs {
		rec := lb.recs[i]
		idx := b.recs.n
		if idx < 0 || idx >= math.MaxInt32 {
			return input.Errorf(file, int(rec.line), "more than %d cases: split the baseline", math.MaxInt32)
		}
		rec.off += off
		if rec.hasTop && rec.topN > 0 {
			at, err := b.tops.add(lb.tops[rec.topAt : rec.topAt+rec.topN])
			if err != nil {
				return input.Errorf(file, int(rec.line), "%v: split the baseline", err)
			}
			rec.topAt = at
		}
		if first, dup := b.insert(rec.id, int32(idx)); dup {
			var p fastjson.Parser
			var c CaseLine
			if err := ParseCaseLine(&p, lb.line(i), file, int(rec.line), &c); err != nil {
				return err
			}
			return input.Errorf(file, int(rec.line), "duplicate case id %q (first at line %d)", c.ID, b.recs.at(int(first)).line)
		}
		b.recs.add(rec)
	}
	return nil
}
