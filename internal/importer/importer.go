// Package importer converts the retrieval data formats users already have (BEIR,
// MS MARCO, TREC, ir_datasets, ragas, promptfoo, a plain CSV) into this project's
// own: cases JSONL (for check), TREC qrels and TREC runs (for compare). Formats are
// registered by name; Detect picks one from a file's first bytes. Every converter
// streams: it reads a line or one JSON element at a time and writes as it goes,
// so memory does not grow with the input (beyond a set of the case ids seen, to
// reject duplicates). Errors are *Error: file:line: what is wrong.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/jsoncap"
)

// Kind is what a format converts to.
type Kind string

const (
	KindCases Kind = "cases" // cases JSONL, one case per line (check, retrieve, compare --run)
	KindQrels Kind = "qrels" // TREC qrels: qid 0 docid rel (compare --qrels)
	KindRun   Kind = "run"   // TREC run: qid Q0 docid rank score tag (compare --run)
)

var recordNoun = map[Kind]string{KindCases: "cases", KindQrels: "judgments", KindRun: "ranked documents", KindKB: "documents"}

// Options tune the converters. The zero value is usable.
type Options struct {
	// ParentSep derives a retrieved entry's card identity from its chunk id
	// (casefile.ParentFromID) when the source has no parent id; "" keeps ids as they are.
	ParentSep string
	// ParentRegexp, when set, derives the card identity with casefile.ParentFromIDRegexp
	// instead (for ids a separator cannot split); ParentSep is then not used.
	ParentRegexp *regexp.Regexp
	// ListSep splits a list held in one text cell (CSV, promptfoo vars) that is
	// not a JSON array; "" means "|".
	ListSep string
	// RunTag is the tag column of a TREC run written from a run without one;
	// "" means the format's name.
	RunTag string
	// Provider selects one provider's results of a promptfoo file that holds
	// several (matched against provider.label, then provider.id).
	Provider string
	// LineAt maps a byte offset of the input to its 1-based line, for errors in a
	// JSON document (not line-oriented); nil reports the byte offset instead.
	LineAt func(off int64) int
}

// Stats says what a conversion did.
type Stats struct {
	Records int // cases, judgments or run lines written
	// Judgments whose relevance was outside the range MinRelevance..MaxRelevance
	// and was clamped to it (below, above).
	ClampedLow, ClampedHigh int
}

// MinRelevance..MaxRelevance is the range of relevance compare reads (any
// integer of it, negative = not relevant, above 3 with its own gain): imported
// judgments keep their relevance when it is in the range.
const (
	MinRelevance = trecfile.MinRelevance
	MaxRelevance = trecfile.MaxRelevance
)

// Format is one registered input format.
type Format struct {
	Name        string
	Kind        Kind
	Description string
	// Shards is how an input of the format is read as shards (ShardsOf).
	Shards  Sharding
	convert func(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error
}

var registry = map[string]*Format{}

func register(f *Format) {
	if _, dup := registry[f.Name]; dup {
		panic("importer: format registered twice: " + f.Name)
	}
	registry[f.Name] = f
}

// Lookup returns the format of that name.
func Lookup(name string) (*Format, bool) {
	f, ok := registry[name]
	return f, ok
}

// Formats lists the registered formats by name.
func Formats() []*Format {
	out := make([]*Format, 0, len(registry))
	for _, f := range registry {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names is the sorted list of format names, joined by sep.
func Names(sep string) string {
	var names []string
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	return strings.Join(names, sep)
}

// Sharding is how a format's input given as shards (a directory or a glob of
// a cluster job's part files) is read: as one stream of the shards' lines.
type Sharding int

const (
	// ShardNone: one JSON document (beir-results, promptfoo, a ragas JSON
	// array), which a part of it is not, and which part files concatenated are
	// not either: it is one file.
	ShardNone Sharding = iota
	// ShardLines: a line is a record, so shards are lines of the format.
	ShardLines
	// ShardHeader: a CSV or TSV whose first line is its header, which each
	// shard carries (input.OpenShardedCSV).
	ShardHeader
)

// ShardsOf is how an input of format f that starts with head (its first
// shard's first bytes) is read as shards: f.Shards, but a ragas dataset that
// is a JSON array (not JSONL) is one document.
func ShardsOf(f *Format, head []byte) Sharding {
	if f.Name == "ragas" {
		if t := bytes.TrimSpace(trimBOM(head)); len(t) > 0 && t[0] == '[' {
			return ShardNone
		}
	}
	return f.Shards
}

// peekSize is how much of the input Detect looks at.
const peekSize = 64 << 10

// DetectBytes is how much of the input's start Detect needs.
const DetectBytes = peekSize

// Convert reads the input r (named file in errors) in format f, or the detected
// format when f is nil, and writes the converted records to w. It returns the
// format used, the stats and the first error; on error w holds partial output,
// so write through an atomic file.
func Convert(ctx context.Context, r io.Reader, file string, w io.Writer, f *Format, opt Options) (*Format, Stats, error) {
	br := bufio.NewReaderSize(r, peekSize)
	var st Stats
	if f == nil {
		head, err := br.Peek(peekSize)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, st, err
		}
		var why string
		f, why = Detect(head)
		if f == nil {
			return nil, st, Errorf(file, 0, "cannot detect the format: %s; pass --format (one of %s)", why, Names(", "))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := f.convert(ctx, br, file, bw, opt, &st); err != nil {
		return f, st, err
	}
	if st.Records == 0 {
		return f, st, Errorf(file, 0, "no %s in the input (read as %s)", recordNoun[f.Kind], f.Name)
	}
	return f, st, bw.Flush()
}

// Error is the readers' input error (file:line: what is wrong; Line 0 means the
// whole file), so a converter's error and a reader's are one type to callers.
type Error = input.Error

// Errorf builds an *Error.
func Errorf(file string, line int, format string, args ...any) *Error {
	return input.Errorf(file, line, format, args...)
}

// lines calls fn for each line of br (1-based number, without the newline, a
// trailing CR or, on line 1, a UTF-8 BOM), checking ctx every 4096 lines. The
// slice is only valid during the call.
//
// A line longer than br's buffer is read in pieces, each copied into a buffer
// of br's size (kept for the next long line), and joined once whole: a line
// over maxRecord is refused as soon as its pieces pass the cap, having held no
// more than the cap and one piece. (Growing one slice by append held several
// copies at once, the ones left behind not yet collected: 270 MB for an
// 80 MiB line against the 64 MiB cap.)
func lines(ctx context.Context, br *bufio.Reader, file string, fn func(n int, line []byte) error) error {
	var long jsoncap.Pieces // a long line's pieces
	for n := 1; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long.Reset()
			long.Add(b)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long.Add(b)
				if long.Len() > maxRecord+2 { // more than the cap, a CR and the newline
					return Errorf(file, n, "line longer than %s (the cap of one record)", sizeText(maxRecord))
				}
			}
			b = long.Join()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(b) == 0 && err == io.EOF {
			return nil
		}
		line := b
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if int64(len(line)) > maxRecord {
			return Errorf(file, n, "line longer than %s (the cap of one record)", sizeText(maxRecord))
		}
		if n == 1 {
			line = trimBOM(line)
		}
		if ferr := fn(n, line); ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
	}
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}
