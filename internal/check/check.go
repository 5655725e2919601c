// Package check is the pipeline of `check`: it streams the cases, scores them
// in parallel (gate.Scorer), aggregates them in file order (gate.Accumulator),
// writes the --cases-out lines, and joins each case with a baseline run
// (baseline.Comparer) and the --write-baseline body. Run is its one entry
// point; the CLI and the public gate package call it. It reads no environment
// and publishes nothing: the caller opens the inputs and renders the Result.
package check

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Options are check's settings, each set once here.
type Options struct {
	K                 int // the retrieval top-k, resolved before the run (ResolveK: --k, else the baseline's, else the run's, else DefaultK)
	ReferenceLocale   string
	MinHit, MinRecall gate.Floor
	Floors            floor.List
	AllowEmpty        bool
	ParentSep         string // --parent-from-id; "" is off
	// Baseline configures the regression gates (used when In has a baseline
	// or a reason it is unavailable).
	RankDrop int                           // 0: baseline.DefaultRankDrop
	MaxDrop  map[string]baseline.Tolerance // by measure key
	Test     string                        // baseline.TestSignificant (default) or TestAny
	// Now is when the run happens: a baseline older than baseline.StaleAfter
	// is flagged (zero: not checked).
	Now time.Time

	// GroupMaxDrop are the --max-drop MEASURE[@GROUP]=F regression gates.
	GroupMaxDrop floor.List
	// MinRBO and MaxChurn are the churn gates, --min-rbo and --max-churn
	// [GROUP=]F (baseline.AddChurnLines).
	MinRBO, MaxChurn floor.List
}

// In are check's inputs, opened by the caller.
type In struct {
	Cases     io.Reader
	CasesName string // the name in file:line messages ("stdin" for a pipe)
	KB        *kbfile.KB

	// CasesOut receives the --cases-out lines (nil: none).
	CasesOut io.Writer

	// Baseline is the baseline run to compare with (nil: none), named
	// BaselineName in messages. BaselineSource is the provenance of a fetched
	// artifact (artifact_id, run_id, head_sha, artifact_created_at).
	Baseline       io.Reader
	BaselineName   string
	BaselineSource map[string]string
	// BaselineUnavailable, when set, is why --baseline found no baseline:
	// the Result's comparison says so and its gates are off.
	BaselineUnavailable *baseline.Unavailability
	// BaselineBody receives the gzip-compressed case lines of --write-baseline
	// (nil: none); the caller writes the file's header before them.
	BaselineBody io.Writer
}

// Result is a run of check.
type Result struct {
	// Gate is the scored run; its Gates include the regression gates of the
	// comparison.
	Gate *gate.Result
	// Comparison is the comparison with the baseline (nil without one).
	Comparison *baseline.Comparison
	// KBFingerprint is baseline.KBFingerprint of the KB (set when a baseline is
	// read or written).
	KBFingerprint string
}

// comparing reports whether the run compares with a baseline or writes one.
func (in *In) comparing() bool {
	return in.Baseline != nil || in.BaselineUnavailable != nil || in.BaselineBody != nil
}

// Run scores the cases of in against its KB at o.K, which ResolveK gave, and
// decides the gates. Bad input is an *input.Error (file:line); a cancelled ctx
// stops it promptly.
func Run(ctx context.Context, in In, o Options) (*Result, error) {
	if o.K < 1 {
		return nil, fmt.Errorf("check: k %d is not resolved (ResolveK gives the run's k)", o.K)
	}
	res := &Result{}
	var bl *baselineRun
	if in.comparing() {
		res.KBFingerprint = baseline.KBFingerprint(in.KB.Cards)
		bl = &baselineRun{opts: baseline.Options{
			K: o.K, KBFingerprint: res.KBFingerprint, RankDrop: o.RankDrop,
			MaxDrop: o.MaxDrop, GroupMaxDrop: o.GroupMaxDrop, Test: o.Test, Now: o.Now,
			MinRBO: o.MinRBO, MaxChurn: o.MaxChurn,
		}, unav: in.BaselineUnavailable, source: in.BaselineSource}
		defer bl.close()
		if in.Baseline != nil && in.BaselineUnavailable == nil {
			if err := bl.load(ctx, in.Baseline, in.BaselineName); err != nil {
				return nil, err
			}
		}
		if in.BaselineBody != nil {
			bl.startBody(in.BaselineBody)
		}
	}
	g, err := scoreCases(ctx, in, o, bl)
	if err != nil {
		return nil, err
	}
	res.Gate = g
	cmp, err := bl.result(ctx)
	if err != nil {
		return nil, err
	}
	if cmp != nil {
		g.Gates = append(g.Gates, cmp.Gates...)
	}
	res.Comparison = cmp
	return res, nil
}

// caseItem is what a worker of scoreCases hands to emit.
type caseItem struct {
	r    gate.CaseResult
	line baseline.CaseLine // id, query, gold (kept only when listed or written)
	cur  baseline.Current
	bl   []byte // the --write-baseline line
	// The chunks the lines r.Out and bl are carved from, released by emit
	// once it has copied them into their writers.
	outChunk, blChunk *lineChunk
}

// scoreCases streams the cases: workers score each case in parallel, emit
// aggregates them in file order and writes --cases-out.
func scoreCases(ctx context.Context, in In, o Options, bl *baselineRun) (*gate.Result, error) {
	acc := gate.NewAccumulator()
	defer acc.Close()
	if idAt := idsReadAgain(ctx, in.Cases, in.CasesName); idAt != nil {
		acc.IDsFrom(idAt)
	}
	scorer := &gate.Scorer{KB: in.KB, K: o.K, KeepMissed: acc.WantsMissed}
	var out *asyncWriter
	if in.CasesOut != nil {
		out = newAsyncWriter(in.CasesOut)
	}
	work := func(cs *casefile.Case, it *caseItem) error {
		r := &it.r
		if o.ParentSep != "" {
			for i := range cs.Retrieved {
				if e := &cs.Retrieved[i]; e.ParentID == "" {
					if p := casefile.ParentFromID(e.ID, o.ParentSep); p != e.ID {
						e.ParentID = p
					}
				}
			}
		}
		if bl == nil {
			err := scorer.ScoreInto(cs, r)
			if err == nil && out != nil {
				r.Out, it.outChunk = appendLine(cs, r)
			}
			return err
		}
		// The ranked identities live only until prepare has copied what it
		// keeps: a pooled buffer, not one on the heap per case.
		rb := rankedBufs.Get().(*[32]string)
		ranked, err := scorer.ScoreRanked(cs, r, rb[:0])
		if err == nil && out != nil {
			r.Out, it.outChunk = appendLine(cs, r)
		}
		if err == nil {
			bl.prepare(cs, it, ranked, o.K)
		}
		clear(rb[:])
		rankedBufs.Put(rb)
		return err
	}
	emit := func(it *caseItem) error {
		if out != nil {
			_, err := out.Write(it.r.Out)
			it.r.Out = nil
			it.outChunk.release() // copied into out's buffer
			if err != nil {
				return err
			}
		}
		if err := acc.Add(&it.r); err != nil {
			return err
		}
		if bl != nil {
			return bl.add(it)
		}
		return nil
	}
	// Nothing keeps a case's strings beyond emit but the accumulator and the
	// baseline's comparer, which copy what they keep (its listed cases): they
	// may view the read blocks.
	mo := casefile.MapOptions{StringsInLine: true, NoScores: true, RetrievalK: true}
	if in.KB != nil {
		mo.Keyer = in.KB // the scorer's (ids read from Parquet dictionaries, keyed once an entry)
	}
	err := casefile.MapCasesWith(ctx, in.Cases, in.CasesName, mo, work, emit)
	// Duplicate ids are found once the stream ends (gate.idLog): a duplicate
	// before the error that ended it is the error a case-by-case check meets
	// first, so it wins (every case emitted precedes the error's line).
	if derr := acc.Duplicate(); derr != nil {
		err = derr
	}
	if out != nil {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && bl != nil {
		err = bl.finish()
	}
	if err != nil {
		return nil, err
	}
	return acc.ResultContext(ctx, gate.Config{
		K: o.K, ReferenceLocale: o.ReferenceLocale, MinHit: o.MinHit, MinRecall: o.MinRecall, KBCards: in.KB.Len(),
		Floors: o.Floors, AllowEmpty: o.AllowEmpty,
	})
}

// idsReadAgain is the id of the case at a line of r, read again from the
// file (gate.Accumulator.IDsFrom), when r is a regular file (read from its
// offset now on) or shards that are regular files: Parquet shards
// (input.Sharded.ParquetLineAt: the row's line, from the row group holding
// it) or text shards (input.Sharded.TextLineAt: the line of the shard the
// stream's line was); nil for any other reader (a pipe, shards that are
// not all regular files), whose ids the accumulator keeps. The lines before
// are skipped, not decoded: they were read as cases once already (a file
// changed since gives an id the accumulator refuses). An id not found (a
// blank line, past the end) is "".
func idsReadAgain(ctx context.Context, r io.Reader, name string) func(line int) (string, error) {
	var lineAt func(n int) ([]byte, error)
	if s, ok := r.(*input.Sharded); ok {
		if lineAt = s.ParquetLineAt(); lineAt == nil {
			lineAt = s.TextLineAt(casefile.MaxLine)
		}
	} else if f, ok := r.(*os.File); ok {
		lineAt = fileLineAt(ctx, f, name)
	}
	if lineAt == nil {
		return nil
	}
	return func(line int) (string, error) {
		b, err := lineAt(line)
		if err != nil || input.IsBlank(b) {
			return "", err
		}
		return parseID(b, name, line)
	}
}

// fileLineAt reads a line of f again, from f's offset now on, when f is a
// regular file; nil otherwise.
func fileLineAt(ctx context.Context, f *os.File, name string) func(n int) ([]byte, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	return func(n int) ([]byte, error) {
		b, err := input.ReadLineAt(input.Reader(ctx, io.NewSectionReader(f, pos, math.MaxInt64-pos)), n, casefile.MaxLine)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", name, err)
		}
		return b, nil
	}
}

// parseID is the id of the case on a line read again.
func parseID(b []byte, name string, line int) (string, error) {
	var p casefile.CaseParser
	var c casefile.Case
	if err := p.Parse(b, name, line, &c); err != nil {
		return "", err
	}
	return strings.Clone(c.ID), nil
}

// rankedBufs are the workers' buffers of a case's ranked identities.
var rankedBufs = sync.Pool{New: func() any { return new([32]string) }}

// lineChunk is a block that output lines are carved from, so a million lines
// cost a few allocations instead of a million. A line is never written after it
// is handed out (later lines are appended past its end) until the chunk is
// recycled: refs counts the lines handed out and not yet released (emit
// releases a line once it has copied it into its writer) plus one while a
// worker may still carve from the chunk; at zero the chunk is reused.
type lineChunk struct {
	buf  []byte
	refs atomic.Int64
}

const lineChunkSize = 64 << 10

// lineChunks hold the chunks workers carve from; freeChunks the recycled ones.
var (
	lineChunks = sync.Pool{New: func() any { return newLineChunk() }}
	freeChunks = sync.Pool{New: func() any { return newLineChunk() }}
)

func newLineChunk() *lineChunk {
	ch := &lineChunk{buf: make([]byte, 0, lineChunkSize)}
	ch.refs.Store(1) // the carving worker's
	return ch
}

// getChunk returns a pooled chunk with room for a line.
func getChunk() *lineChunk {
	ch := lineChunks.Get().(*lineChunk)
	if cap(ch.buf)-len(ch.buf) < 4<<10 {
		// Full: no more carving from it; it is recycled once its lines are.
		ch.release()
		ch = freeChunks.Get().(*lineChunk)
	}
	return ch
}

// cut returns the line appended to ch since start and puts ch back.
func (ch *lineChunk) cut(start int) []byte {
	line := ch.buf[start:len(ch.buf):len(ch.buf)]
	ch.refs.Add(1)
	lineChunks.Put(ch)
	return line
}

// release drops one reference (a line, or the carving worker's); the last one
// recycles the chunk. A nil chunk is a no-op.
func (ch *lineChunk) release() {
	if ch == nil || ch.refs.Add(-1) != 0 {
		return
	}
	ch.buf = ch.buf[:0]
	ch.refs.Store(1)
	freeChunks.Put(ch)
}

// appendLine renders the --cases-out line of one case, and the chunk to
// release once the line is written.
func appendLine(c *casefile.Case, r *gate.CaseResult) ([]byte, *lineChunk) {
	ch := getChunk()
	start := len(ch.buf)
	ch.buf = gate.AppendCaseLine(ch.buf, c, r)
	return ch.cut(start), ch
}

// appendBaselineLine renders the --write-baseline line of one case, and the
// chunk to release once the line is written.
func appendBaselineLine(c *baseline.CaseLine) ([]byte, *lineChunk) {
	ch := getChunk()
	start := len(ch.buf)
	ch.buf = baseline.AppendCaseLine(ch.buf, c)
	return ch.cut(start), ch
}

// newGzipBody is the --write-baseline body writer: gzip (fastest) over a 1 MiB
// buffer, fed by an asyncWriter so compression runs beside the case stream.
func newGzipBody(w io.Writer) (*asyncWriter, func() error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	gz, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	aw := newAsyncWriter(gz)
	return aw, func() error {
		if err := aw.Close(); err != nil {
			return err
		}
		if err := gz.Close(); err != nil {
			return err
		}
		return bw.Flush()
	}
}

// FloorGrammar is what check's floors may name: its registered measures
// (metrics.CaseMeasures) over overall, type:NAME and locale:TAG.
var FloorGrammar = floor.Grammar{Measures: caseInfos(), Groups: true, CanonicalLocale: gate.CanonicalLocale}

func caseInfos() []metrics.Info {
	out := make([]metrics.Info, len(metrics.CaseMeasures))
	for i, m := range metrics.CaseMeasures {
		out[i] = m.Info
	}
	return out
}
