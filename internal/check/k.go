package check

// check's k, resolved once before the pipeline runs (issue 21 item 15, issue
// 31): a cases file written by `retrieve` records the k it retrieved with
// (`"retrieval": {"k": N}` on every case), and a baseline file records the k
// it was scored at. The k is, in order: --k; the baseline's, when comparing
// with one that records it (a comparison is at one cutoff, else every Δ mixes
// the retrieval change with the cutoff change); the run's, the retrieval.k of
// its first case; DefaultK. ResolveK reads the baseline's header and the first
// case before Run and returns the KChoice; its K is Options.K, which Run, the
// baseline comparison, the scorer and the measures take as it is. A k the run
// records that differs from the one used is in the KChoice with both, so the
// caller warns.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// DefaultK is check's k when neither --k, the baseline nor the run gives one.
const DefaultK = 5

// Where the k of a run came from (KChoice.From).
const (
	KFromFlag     = "flag"     // --k (or the k Action input)
	KFromBaseline = "baseline" // the baseline file's header
	KFromRun      = "run"      // the retrieval.k the cases record
	KFromDefault  = "default"  // DefaultK
)

// KChoice is the k a run was scored at and what it was chosen from.
type KChoice struct {
	K    int
	From string // KFromFlag, KFromBaseline, KFromRun or KFromDefault
	// RunK is the retrieval.k of the run's first case (0: it records none),
	// at RunKFile:RunKLine.
	RunK     int
	RunKFile string
	RunKLine int
	// BaselineK is the k of the baseline's header (0: no baseline, or one
	// without a header).
	BaselineK int
}

// maxPeek bounds the first line read to find the run's k (a longer line is not
// looked into; the case scanner reports it if it is too long).
const maxPeek = 16 << 20

// peekRunK returns the retrieval.k of the first non-blank line of r (0 when it
// has none or is not a JSON object the peek can read: the case scanner reports
// a bad line), its line number, and a reader of r's whole content. A regular
// file is read at its offsets and returned as it is; any other reader (a pipe)
// is read through ctx (input.Reader) and replayed: the blank lines before the
// first line as one newline each (the case scanner only counts them), so a
// gigabyte of them is not held to be replayed.
func peekRunK(ctx context.Context, r io.Reader) (int, int, io.Reader, error) {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			pos, err := f.Seek(0, io.SeekCurrent)
			if err == nil {
				// Read through ctx: the blank lines before the first case may be
				// gigabytes, seconds to read past.
				k, line, _, _, perr := firstK(bufio.NewReaderSize(input.Reader(ctx, io.NewSectionReader(f, pos, st.Size()-pos)), 64<<10))
				return k, line, r, perr
			}
		}
	}
	if s, ok := r.(*input.Sharded); ok { // read again from its start: the cases reader sees the shards (Parquet's fast path)
		k, line, _, _, perr := firstK(bufio.NewReaderSize(input.Reader(ctx, s), 64<<10))
		if _, err := s.Seek(0, io.SeekStart); err != nil {
			return 0, 0, r, err
		}
		return k, line, r, perr
	}
	br := bufio.NewReaderSize(input.Reader(ctx, r), 64<<10)
	k, line, blanks, consumed, err := firstK(br)
	return k, line, io.MultiReader(&newlines{n: blanks}, bytes.NewReader(consumed), br), err
}

// newlines reads n newlines.
type newlines struct{ n int }

func (r *newlines) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = '\n'
	}
	r.n -= k
	return k, nil
}

// firstK reads br up to the end of its first non-blank line and returns that
// line's retrieval.k, its line number, the number of blank lines before it
// (blank as the case scanner reads them: input.IsBlank after the BOM) and
// every byte read after those blank lines.
func firstK(br *bufio.Reader) (k, line, blanks int, consumed []byte, err error) {
	for line = 1; ; line++ {
		start := len(consumed)
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			consumed = append(consumed, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) || len(consumed)-start > maxPeek {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, 0, blanks, consumed, err
		}
		text := consumed[start:]
		if line == 1 {
			text = input.TrimBOM(text)
		}
		if err == nil && start == 0 && input.IsBlank(text[:len(text)-1]) {
			// A blank line with nothing kept before it: counted, not kept.
			consumed, blanks = consumed[:0], blanks+1
			continue
		}
		if t := bytes.TrimSpace(text); len(t) > 0 {
			if errors.Is(err, bufio.ErrBufferFull) {
				return 0, 0, blanks, consumed, nil // too long to look into
			}
			return retrievalK(t), line, blanks, consumed, nil
		}
		if err != nil { // EOF: no case
			return 0, 0, blanks, consumed, nil //nolint:nilerr // io.EOF (other errors returned above): no case, so no k
		}
	}
}

// retrievalK is the "retrieval": {"k": N} of one case line, 0 when absent or
// not what casefile.RetrievalK takes (the case scanner then refuses the line:
// check reads it with casefile.MapOptions.RetrievalK), and 0 when the line is
// not valid JSON (a repeated key included). The line is walked, not made into
// a tree, so that a long first line costs nothing beyond its bytes.
func retrievalK(line []byte) int {
	s := jsonpos.Scanner{B: line}
	k := 0
	end, err := firstMember(&s, s.WS(0), 0, "retrieval", func(v int) (int, error) {
		return firstMember(&s, v, 1, "k", func(v int) (int, error) {
			end, err := s.Skip(v, 2)
			if err == nil && jsonpos.TypeName(line[v]) == "number" {
				if n, ok := casefile.RetrievalK(line[v:end]); ok {
					k = n
				}
			}
			return end, err
		})
	})
	if err != nil || s.WS(end) < len(line) {
		return 0
	}
	return k
}

// firstMember validates the value at i (inside depth containers) as Skip does;
// when it is an object, the value of its first member named key is fn's to
// validate (fn returns the offset after it).
func firstMember(s *jsonpos.Scanner, i, depth int, key string, fn func(v int) (int, error)) (int, error) {
	b := s.B
	if i >= len(b) || b[i] != '{' {
		return s.Skip(i, depth)
	}
	if depth+1 > jsonpos.MaxDepth {
		return s.Skip(i, depth) // its error
	}
	if i = s.WS(i + 1); i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	s.OpenObject()
	defer s.CloseObject()
	found := false
	for {
		k, v, err := s.Key(i)
		if err != nil {
			return 0, err
		}
		var end int
		if !found && string(k) == key {
			found = true
			end, err = fn(v)
		} else {
			end, err = s.Skip(v, depth+1)
		}
		if err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = s.Next(end, '}', "after object value"); err != nil || done {
			return i, err
		}
	}
}

// ResolveK is the k of a run of in: flagK when it is given (≥ 1), else the k
// of the baseline's header (in.Baseline, when comparing with one that has a
// header), else the run's (the retrieval.k of in.Cases' first case), else
// DefaultK. It reads only the first line of each; a reader it read from that is
// not a regular file is replaced in in by one of the same content (the cases:
// the same cases at the same lines, peekRunK). A baseline
// whose header cannot be read gives no k here: Run's load reports it.
func ResolveK(ctx context.Context, in *In, flagK int) (KChoice, error) {
	baseK := 0
	if in.Baseline != nil && in.BaselineUnavailable == nil {
		k, rd := peekBaselineK(ctx, in.Baseline, in.BaselineName)
		baseK, in.Baseline = k, rd
	}
	c := KChoice{K: flagK, From: KFromFlag, BaselineK: baseK}
	runK, line, rd, err := peekRunK(ctx, in.Cases)
	if err != nil {
		return c, err
	}
	in.Cases = rd
	if runK > 0 {
		c.RunK, c.RunKFile, c.RunKLine = runK, in.CasesName, line
	}
	switch {
	case flagK > 0:
	case baseK > 0:
		c.K, c.From = baseK, KFromBaseline
	case runK > 0:
		c.K, c.From = runK, KFromRun
	default:
		c.K, c.From = DefaultK, KFromDefault
	}
	return c, nil
}

// peekBaselineK is the k of the baseline header r starts with (0: none, or not
// readable) and a reader of r's whole content: r itself when it is a regular
// file (read at its offsets), else what was read replayed before the rest.
func peekBaselineK(ctx context.Context, r io.Reader, name string) (int, io.Reader) {
	header := func(rd io.Reader) int {
		src, err := baseline.Open(rd, name)
		if err != nil {
			return 0
		}
		defer src.Close()
		if src.Header == nil {
			return 0
		}
		return src.Header.K
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if pos, err := f.Seek(0, io.SeekCurrent); err == nil {
				return header(io.NewSectionReader(f, pos, st.Size()-pos)), r
			}
		}
	}
	ir := input.Reader(ctx, r) // read on through it: a read it made is not lost
	var read bytes.Buffer
	k := header(io.TeeReader(ir, &read))
	return k, io.MultiReader(&read, ir)
}
