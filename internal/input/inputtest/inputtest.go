// Package inputtest reads input files for tests: the file forms of the
// readers of trecfile and labelfile. The commands open their inputs in their
// front end (internal/cli) and hand the domain the readers; a test that starts
// from a file path calls these. Placeholders is the tests' reading of a prompt
// template's placeholders; CountingReader, how far a reader read; BlankLines,
// a file a reader must stop reading on a cancelled context.
package inputtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// ReadRun reads the run file at path (trecfile.ReadRunFrom of the open file).
func ReadRun(ctx context.Context, path string, k int, opt trecfile.RunOptions) (*trecfile.Run, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read run: %w", err)
	}
	defer f.Close()
	return trecfile.ReadRunFrom(ctx, f, path, k, opt)
}

// ReadQrels reads the qrels file at path (trecfile.ParseQrels).
func ReadQrels(ctx context.Context, path string) (*trecfile.Qrels, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read qrels: %w", err)
	}
	defer f.Close()
	return trecfile.ParseQrels(ctx, f, path)
}

// ReadLabelsFile reads the labels file at path (labelfile.ReadLabels).
func ReadLabelsFile(ctx context.Context, path string, side labelfile.LabelSide, lock *labelfile.Lock) (*labelfile.Labels, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return labelfile.ReadLabels(ctx, f, path, side, lock)
}

// ReadSheetFile reads the labelling sheet at path (labelfile.ReadSheet).
func ReadSheetFile(ctx context.Context, path string) (*labelfile.Sheet, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return labelfile.ReadSheet(ctx, f, path)
}

// Placeholder is a placeholder of a prompt template and the line it starts on.
type Placeholder struct {
	Text string
	Line int
}

// Placeholders finds the placeholders of the prompt template s, leftmost
// first, without the parsers' regular expression (judge.CheckPlaceholders):
// "{{", blanks (RE2's \s), a name of letters, digits, '_', '.' or '-' not
// starting with a digit, '.' or '-', blanks, "}}". The fuzz targets of judge's
// and generate's ParsePrompt check the parsers against it.
func Placeholders(s string) []Placeholder {
	blank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	nameByte := func(c byte, first bool) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c >= '0' && c <= '9' || c == '.' || c == '-')
	}
	var out []Placeholder
	for i := 0; i+1 < len(s); {
		if s[i] != '{' || s[i+1] != '{' {
			i++
			continue
		}
		j := i + 2
		for j < len(s) && blank(s[j]) {
			j++
		}
		k := j
		for k < len(s) && nameByte(s[k], k == j) {
			k++
		}
		e := k
		for e < len(s) && blank(s[e]) {
			e++
		}
		if k > j && e+1 < len(s) && s[e] == '}' && s[e+1] == '}' {
			out = append(out, Placeholder{s[i : e+2], 1 + strings.Count(s[:i], "\n")})
			i = e + 2
			continue
		}
		i++
	}
	return out
}

// FirstUnknown is the leftmost of phs whose text known lacks: the placeholder
// a prompt parser names when it refuses a template for an unknown one.
func FirstUnknown(phs []Placeholder, known map[string]bool) (Placeholder, bool) {
	for _, ph := range phs {
		if !known[ph.Text] {
			return ph, true
		}
	}
	return Placeholder{}, false
}

// CountingReader counts the bytes read through it from R (N): how far a
// reader went into its input.
type CountingReader struct {
	R io.Reader
	N int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// BlankLines writes a file named name in a new temporary directory: n lines
// of 99 spaces each (100 bytes a line), then tail, and returns its path. An
// input of nothing but blank lines that a reader skips, so that a reader given
// a cancelled context must stop long before its end.
func BlankLines(t testing.TB, name string, n int, tail string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	w, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	blank := strings.Repeat(" ", 99) + "\n"
	for range n {
		_, _ = bw.WriteString(blank)
	}
	_, _ = bw.WriteString(tail)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}
