// Package casefile reads evaluation cases (JSONL, with the zero-allocation case
// scanner) and knowledge bases (JSONL cards or a directory of Markdown cards).
package casefile

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// Retrieved is one entry of a case's ranked `retrieved` list.
type Retrieved struct {
	ID       string
	ParentID string // empty when absent
	Score    float64
	HasScore bool
}

// Identity is the card identity of the entry: parent_id where present, else id.
func (r Retrieved) Identity() string {
	if r.ParentID != "" {
		return r.ParentID
	}
	return r.ID
}

// Case is one line of a cases JSONL file.
//
// The strings of a Case stay valid after the callback that received it (but
// see MapOptions.StringsInLine). They
// are carved from 16 KiB blocks shared by consecutive cases (one allocation per
// block, not per string), so keeping one small string (say a case id) for long
// keeps its block alive: strings.Clone what you keep for many cases. Gold,
// Relevant, Retrieved and Raw are reused for the next case.
type Case struct {
	File   string
	Line   int // 1-based line number in File
	ID     string
	Locale string
	Type   string // "golden" when absent
	Query  string
	// Cluster is the case's family (the optional `cluster` key; generate
	// sets the card its queries were written from): cases of one cluster are
	// not independent, and check --baseline's paired statistics are computed
	// over clusters. Empty: a family of its own.
	Cluster string
	// Gold is must_cite_one_of as given (duplicates kept); nil or empty means no gold.
	Gold []string
	// Relevant is relevant_ids as given: every card relevant to the query (the
	// denominator of real recall), besides the disjunctive Gold; nil or empty
	// (or null) means none. Reused for the next case.
	Relevant     []string
	Retrieved    []Retrieved
	HasRetrieved bool
	// RetrievedKeys, when Keyer is not nil, are the keys Keyer gives the
	// identities of Retrieved, one an entry, in order: the Parquet cases'
	// fast path sets them for a case whose identities were all read from
	// dictionaries (MapOptions.Keyer), keyed once per dictionary entry, so
	// that the scorer of that KB does not key them again. Nil Keyer: no keys.
	RetrievedKeys []uint64
	Keyer         Keyer
	// Scores holds precomputed per-case scores; nil when the case has no `scores`.
	Scores map[string]float64
	// Unknown holds the case's top-level keys that are no field of a case (in
	// line order; retrieve's and generate's provenance keys are known): a misspelt must_cite_one_of, another harness's shape.
	// Reused for the next case.
	Unknown []string
	// Raw is the original line without its newline (and without a trailing CR
	// or, on line 1, a UTF-8 BOM). Valid only during the callback that receives
	// the Case; copy it to keep it.
	Raw []byte
}

// StreamCases reads cases JSONL from r (named file in errors) and calls fn once per
// case, in file order, from a single goroutine. Blank lines are skipped; a CR
// before the newline, a UTF-8 BOM and a last line without newline are accepted.
// The *Case passed to fn is only valid during the call. The first error (from
// reading, parsing or fn) stops the stream and is returned; parse errors are
// *input.Error with file and line.
func StreamCases(ctx context.Context, r io.Reader, file string, fn func(*Case) error) error {
	var p CaseParser
	var c Case
	var spare []byte // the previous block's buffer, once its cases are done
	br := newBlockReader(input.Reader(ctx, r), file, func(n int) []byte {
		if b := spare; cap(b) >= n && cap(b) == caseBlockSize {
			spare = nil
			return b[:0]
		}
		return newCaseBuf(n)
	})
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, first, err := br.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = forCaseLines(data, file, first, func(b []byte, line int) error {
			if n++; n&0xff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := p.Parse(b, file, line, &c); err != nil {
				return err
			}
			return fn(&c)
		})
		if err != nil {
			return err
		}
		spare = data[:0]
	}
}

// MapCases reads cases JSONL from r and calls work for each case, on up to
// `workers` goroutines at once (workers <= 0 means GOMAXPROCS); the *Case given to
// work is only valid during that call. emit receives work's results in file order,
// from the calling goroutine. The first error (read, parse, work or emit) stops
// the stream promptly and is returned; when several cases fail, the error is the
// one of the earliest case in file order, so it is deterministic. work may still
// have been called on some cases after that one (their results are discarded),
// and emit is never called for a case after it. All goroutines have ended when
// MapCases returns, but for a Read of a pipe or terminal that ctx interrupted
// (see input.Reader).
//
// Memory is bounded: a reader goroutine reads blocks of about 256 KiB cut at line
// ends, and at most 2*workers+2 blocks (with their results) are in flight.
func MapCases[T any](ctx context.Context, r io.Reader, file string, workers int, work func(*Case) (T, error), emit func(T) error) error {
	return MapCasesWith(ctx, r, file, MapOptions{Workers: workers},
		func(c *Case, t *T) (err error) {
			*t, err = work(c)
			return err
		},
		func(t *T) error { return emit(*t) })
}

// Keyer keys card ids: Keys sets keys[i] to the key of ids[i] (kbfile.KB's
// Keys).
type Keyer interface {
	Keys(ids []string, keys []uint64)
}

// MapOptions are the settings of MapCasesWith.
type MapOptions struct {
	Workers int // goroutines calling work; <= 0: GOMAXPROCS
	// StringsInLine: the strings of a Case that need no unquoting (its id,
	// locale, type, query, gold and relevant ids, retrieved ids and parent
	// ids; not its unknown keys) view the block the case was read in instead
	// of being copies (copying them was about a tenth of check's time, with
	// the garbage and the page faults of fresh memory). Such a string is
	// valid during work and emit of its case, and no longer: the block is
	// reused once emit has returned for all of its cases. A caller that keeps
	// one beyond emit clones it.
	StringsInLine bool
	// NoScores: the retrieved entries' scores are validated, not decoded
	// (CaseParser.NoScores): for a caller that never reads them.
	NoScores bool
	// RetrievalK: a "retrieval" that is not an object, or a "retrieval.k"
	// that is not an integer of at least 1, is an input error on every line
	// (CaseParser.RetrievalK): for check, which reads the run's k from it.
	RetrievalK bool
	// Keyer: the retrieved identities read from Parquet dictionaries are
	// keyed by it once per dictionary entry, and a case whose identities all
	// were gets their keys (Case.RetrievedKeys): for a caller that keys them
	// with this Keyer (check's scorer). Nil: no case has keys.
	Keyer Keyer
}

// MapCasesWith is MapCases with options, and with work writing its result in
// place and emit reading it there: a large result (check's is over 500 bytes)
// is not copied twice a case. The *T given to work is zeroed; the one given
// to emit is only valid during that call.
func MapCasesWith[T any](ctx context.Context, r io.Reader, file string, o MapOptions, work func(*Case, *T) error, emit func(*T) error) error {
	if ps, ok := r.(parquetShards); ok { // Parquet shards: their rows read as cases (parquet.go)
		if paths := ps.ParquetShards(); paths != nil {
			if read, err := mapParquet(ctx, ps, paths, file, o, work, emit); read {
				return err
			}
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	inflight := 2*workers + 2
	tokens := make(chan struct{}, inflight)   // one per batch in flight
	freeBufs := make(chan []byte, inflight+1) // recycled block buffers
	freeRes := make(chan []T, inflight)       // recycled result slices
	todo := make(chan *mapBatch[T], inflight) // reader -> workers
	done := make(chan *mapBatch[T], inflight) // workers -> emit, in any order
	getBuf := func(n int) []byte {
		if n <= caseBlockSize {
			select {
			case b := <-freeBufs:
				return b[:0]
			default:
			}
		}
		return newCaseBuf(n)
	}

	var readers, workersWG sync.WaitGroup
	readers.Add(1)
	go func() { // reader
		defer readers.Done()
		defer close(todo)
		br := newBlockReader(input.Reader(ctx, r), file, getBuf)
		for seq := 0; ; seq++ {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			data, first, err := br.next()
			if errors.Is(err, io.EOF) {
				return
			}
			b := &mapBatch[T]{seq: seq, data: data, first: first, err: err}
			select {
			case todo <- b:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	workersWG.Add(workers)
	for range workers {
		go func() {
			defer workersWG.Done()
			w := new(alone[struct {
				p CaseParser
				c Case
			}])
			w.v.p = CaseParser{StringsInLine: o.StringsInLine, NoScores: o.NoScores, RetrievalK: o.RetrievalK}
			for b := range todo {
				if b.err == nil {
					select {
					case b.results = <-freeRes:
					default:
					}
					b.run(ctx, file, &w.v.p, &w.v.c, work)
				}
				done <- b // never blocks: at most inflight batches exist
			}
		}()
	}
	go func() {
		workersWG.Wait()
		close(done)
	}()

	// Emit in file order; a batch's token is returned once it is emitted.
	result := emitInOrder(done, inflight, tokens, cancel, emit, func(b *mapBatch[T]) {
		select {
		case freeRes <- b.results[:0]:
		default:
		}
		if cap(b.data) == caseBlockSize {
			select {
			case freeBufs <- b.data[:0]:
			default:
			}
		}
	})
	readers.Wait()
	if result == nil {
		// Only an outside cancellation can have cut the stream short here.
		result = ctx.Err()
	}
	return result
}

// alone holds a worker's own memory (its parser and case) on cache lines of
// its own. Two workers' parsers and cases allocated side by side shared a
// line at their ends, and each write of one worker took that line from the
// other's core: the scorer's first reads of a case and the parser's first
// writes waited on the other core (about a tenth of check's CPU on 2 cores).
// The padding is two lines (128 bytes) each side, as the adjacent-line
// prefetcher fetches lines in pairs.
type alone[T any] struct {
	_ [128]byte
	v T
	_ [128]byte
}

// mapBatch is a block of whole lines on its way through MapCases.
type mapBatch[T any] struct {
	seq     int
	data    []byte
	first   int   // line number of the first line of data
	results []T   // work's results, in line order
	err     error // the first error in the batch, after results
}

func (b *mapBatch[T]) order() int         { return b.seq }
func (b *mapBatch[T]) done() ([]T, error) { return b.results, b.err }

// run parses and works the batch's lines until the first error.
func (b *mapBatch[T]) run(ctx context.Context, file string, p *CaseParser, c *Case, work func(*Case, *T) error) {
	if err := ctx.Err(); err != nil {
		b.err = err
		return
	}
	// The results are kept in a local until the batch ends: b shares a cache
	// line with the batch the other worker holds (alone's comment).
	results := b.results
	n := 0
	b.err = forCaseLines(b.data, file, b.first, func(line []byte, no int) error {
		if n++; n&0x7f == 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
		}
		if err := p.Parse(line, file, no, c); err != nil {
			return err
		}
		// The slot is zero: a recycled results slice was cleared after emit,
		// a grown one is zero past its length, and a failed slot is cleared.
		if n := len(results); n < cap(results) {
			results = results[:n+1]
		} else {
			var zero T
			results = append(results, zero)
		}
		t := &results[len(results)-1]
		if err := work(c, t); err != nil {
			var zero T
			*t = zero
			results = results[:len(results)-1]
			return err
		}
		return nil
	})
	b.results = results
	if b.err == nil && ctx.Err() != nil {
		b.err = ctx.Err()
	}
}
