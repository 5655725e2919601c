package baseline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

// chunkReader returns data in reads of the given sizes (cycled; 0 is an
// empty read), then end (io.EOF or another error) in a read of its own.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
	end   error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.end
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)])
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

type splitLine struct {
	n    int
	text string
}

// scannerLines is the reference: the lines, their numbers and the final error
// of the bufio.Scanner (ScanLines, a maxLine-byte buffer) and the trimming the
// load used before it split lines itself.
func scannerLines(r io.Reader, maxLine int) ([]splitLine, string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(16, maxLine)), maxLine)
	var out []splitLine
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if n == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(b)) > 0 {
			out = append(out, splitLine{n, string(b)})
		}
	}
	switch err := sc.Err(); {
	case err == nil:
		return out, "EOF"
	case errors.Is(err, bufio.ErrTooLong):
		return out, fmt.Sprintf("f:%d: line longer than %d bytes", n+1, maxLine)
	default:
		return out, fmt.Sprintf("f:%d: cannot read: %v", n+1, err)
	}
}

// fillLines reads r with Source.fill, maxLines lines a call at most.
func fillLines(t *testing.T, r io.Reader, maxLine, maxLines int) ([]splitLine, string) {
	s := &Source{File: "f", in: r, maxLine: maxLine}
	var out []splitLine
	var lb lineBatch
	for range 1 << 20 {
		s.fill(&lb, maxLines)
		require.LessOrEqual(t, lb.used, len(lb.buf))
		for i := range lb.starts {
			require.LessOrEqual(t, lb.ends[i], lb.used)
			out = append(out, splitLine{lb.lnos[i], string(lb.line(i))})
		}
		if lb.readErr != nil {
			if lb.readErr == io.EOF { //nolint:errorlint // fill returns io.EOF itself
				return out, "EOF"
			}
			return out, lb.readErr.Error()
		}
	}
	t.Fatal("fill made no progress")
	return nil, ""
}

// FuzzSplitLines: the load's own line splitting (Source.fill) gives the lines,
// line numbers and errors that bufio.Scanner and the trimming before it gave,
// whatever the reads' sizes, the line cap and the batch size.
func FuzzSplitLines(f *testing.F) {
	for _, s := range []string{
		"", "\n", "a", "a\n", "a\r\n\r\nb", "\xef\xbb\xbf{}\n{}", " \t\n\r\r\nx\r\r", "abcdefgh\nabcdefghi\nabcdefghij",
		"0123456789abcdef\n", "0123456789abcdef", "0123456789abcde\n012", "\n\n\n\nabc\n  \nd",
	} {
		f.Add([]byte(s), []byte{1, 3, 0, 7}, uint8(16), uint8(1), false)
		f.Add([]byte(s), []byte{}, uint8(4), uint8(3), true)
	}
	f.Fuzz(func(t *testing.T, data, sizes []byte, maxLine, maxLines uint8, fail bool) {
		if len(sizes) > 0 && bytes.Count(sizes, []byte{0}) == len(sizes) {
			sizes = append(sizes, 1) // the Scanner gives up after 100 empty reads; so does fill
		}
		ml := int(maxLine)%64 + 1
		end := io.EOF
		if fail {
			end = errors.New("boom")
		}
		wantLines, wantErr := scannerLines(&chunkReader{data: data, sizes: sizes, end: end}, ml)
		gotLines, gotErr := fillLines(t, &chunkReader{data: data, sizes: sizes, end: end}, ml, int(maxLines)%5+1)
		assert.Equal(t, wantLines, gotLines)
		assert.Equal(t, wantErr, gotErr)
	})
}

// TestLoadLineCap: a baseline line of MaxLineBytes bytes or more is refused at
// its line number, one byte less is read (the cap bufio.Scanner had).
func TestLoadLineCap(t *testing.T) {
	pad := func(n int) string {
		l := `{"id":"a","scores":{"retrieval_hit_at_k":1},"query":"`
		return l + strings.Repeat("q", n-len(l)-2) + "\"}"
	}
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{{"one byte under the cap", MaxLineBytes - 1, true}, {"at the cap", MaxLineBytes, false}, {"over the cap", MaxLineBytes + 5, false}} {
		t.Run(tc.name, func(t *testing.T) {
			body := oline("first", "g", "abc") + "\n" + pad(tc.size) + "\n" + oline("last", "g", "abc")
			b, err := Load(t.Context(), strings.NewReader(body), "base.jsonl", t.TempDir())
			if !tc.ok {
				require.Error(t, err)
				assert.Equal(t, fmt.Sprintf("base.jsonl:3: line longer than %d bytes", MaxLineBytes), err.Error())
				return
			}
			require.NoError(t, err)
			defer b.Close()
			assert.Equal(t, 3, b.recs.n)
			assert.Equal(t, 4, b.lineOf(2))
			d, err := b.detail(1)
			require.NoError(t, err)
			assert.Equal(t, "a", d.ID)
			assert.True(t, d.Has[hitIndex])
		})
	}
}

// TestLoadGzipLineCap: a gzip baseline whose line inflates to 256 MiB (a
// megabyte of gzip) is refused at the same cap and line as the same content
// uncompressed (MaxLineBytes, "line longer than"), having inflated little
// more than the cap: the bytes allocated stay within a few times the cap, not
// the line, on the header line and on a case line.
func TestLoadGzipLineCap(t *testing.T) {
	racetest.Skip(t, "a 256 MiB line inflated on one goroutine, the heap measured")
	if testing.Short() {
		t.Skip("inflates 256 MiB twice")
	}
	const long = 256 << 20
	for _, tc := range []struct {
		name, head, tail string
		line             int
	}{
		{"the header line", `{"schema":"retrieval-gate/baseline@1","x":"`, `"}` + "\n", 1},
		{"a case line", oline("first", "g", "abc") + `{"id":"b","scores":{},"x":"`, `"}` + "\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gz bytes.Buffer
			zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
			require.NoError(t, err)
			_, err = io.WriteString(zw, tc.head)
			require.NoError(t, err)
			_, err = io.Copy(zw, io.LimitReader(zeroDigits{}, long))
			require.NoError(t, err)
			_, err = io.WriteString(zw, tc.tail)
			require.NoError(t, err)
			require.NoError(t, zw.Close())
			plain := tc.head + strings.Repeat("0", MaxLineBytes+10) + tc.tail

			_, want := Load(t.Context(), strings.NewReader(plain), "base.jsonl.gz", t.TempDir())
			require.Error(t, want)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = Load(t.Context(), bytes.NewReader(gz.Bytes()), "base.jsonl.gz", t.TempDir())
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.Equal(t, fmt.Sprintf("base.jsonl.gz:%d: line longer than %d bytes", tc.line, MaxLineBytes), err.Error())
			assert.Equal(t, want.Error(), err.Error(), "as the same content uncompressed")
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes of gzip, %d bytes allocated", gz.Len(), alloc)
			assert.Less(t, alloc, uint64(8*MaxLineBytes), "bytes allocated: the line was inflated on past the cap")
		})
	}
}

// zeroDigits is an endless reader of '0's.
type zeroDigits struct{}

func (zeroDigits) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// TestLoadLinesAndDetails: with blank lines, CRLF, a BOM and a line that
// takes the general path between them, every record keeps its line in the
// file and reads back its own detail, across batches.
func TestLoadLinesAndDetails(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("\xef\xbb\xbf")
	var lines []int // the line of record i
	n := 0
	for i := range 2*batchLines + 300 {
		switch {
		case i%97 == 5:
			sb.WriteString("\n \t\r\n") // two blank lines
			n += 2
		case i%211 == 7:
			sb.WriteString(`{"id":"e\u0301` + fmt.Sprint(i) + `","gold":["g"],"top":["x","y"]}` + "\r\n") // escaped: the general path
			lines = append(lines, n+1)
			n++
			continue
		}
		sb.WriteString(oline(fmt.Sprintf("c%05d", i), "g", "abc"))
		lines = append(lines, n+1)
		n++
	}
	b := load(t, sb.String())
	require.Equal(t, len(lines), b.recs.n)
	for i, want := range lines {
		require.Equal(t, want, b.lineOf(i), "record %d", i)
		d, err := b.detail(i)
		require.NoError(t, err)
		if strings.HasPrefix(d.ID, "e") {
			assert.Equal(t, []string{"x", "y"}, d.Top)
			continue
		}
		require.Equal(t, IDHash(d.ID), b.recs.at(i).id)
		require.Equal(t, []string{"a", "b", "c"}, d.Top)
	}
	// A duplicate names the first's line, past the blank lines.
	_, err := Load(t.Context(), strings.NewReader(sb.String()+oline("c00400", "g", "abc")), "base.jsonl", t.TempDir())
	require.Error(t, err)
	idx := b.lookup(IDHash("c00400"))
	require.GreaterOrEqual(t, idx, 0)
	assert.Equal(t, fmt.Sprintf("base.jsonl:%d: duplicate case id \"c00400\" (first at line %d)", n+1, lines[idx]), err.Error())
}

// newlines reads n newlines, then the tail.
type newlines struct {
	n    int
	tail string
}

func (r *newlines) Read(p []byte) (int, error) {
	if r.n == 0 {
		if r.tail == "" {
			return 0, io.EOF
		}
		k := copy(p, r.tail)
		r.tail = r.tail[k:]
		return k, nil
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = '\n'
	}
	r.n -= k
	return k, nil
}

// TestBlankLinesDoNotGrowTheBuffer: a run of blank lines before a batch's
// first line is dropped as it is split (a megabyte of gzip inflating to a
// gigabyte of newlines after the header grew the buffer to gigabytes); the
// line after them keeps its number.
func TestBlankLinesDoNotGrowTheBuffer(t *testing.T) {
	const n = 64 << 20
	s := &Source{File: "f", in: &newlines{n: n, tail: `{"id":"a"}` + "\n"}, maxLine: MaxLineBytes}
	var lb lineBatch
	s.fill(&lb, batchLines)
	require.Len(t, lb.starts, 1)
	assert.Equal(t, n+1, lb.lnos[0])
	assert.JSONEq(t, `{"id":"a"}`, string(lb.line(0)))
	assert.LessOrEqual(t, cap(lb.buf), 2*(batchBytes+readChunk), "the batch's buffer")
}
