package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReaderAt counts the bytes ReadAt gives.
type countingReaderAt struct {
	r    io.ReaderAt
	read int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.read += int64(n)
	return n, err
}

// The ragas array and BEIR results converters ask LineAt for every record.
// It read the input from its start each time, so converting n records read
// about n²/2 records' bytes: 5,000 records of 500 bytes took 7 s, and the
// context, checked every 1,024 records, was looked at once in minutes on a
// larger file (import did not stop on a signal). The whole conversion now
// reads the input about once through LineAt.
func TestLineAtReadsTheInputOnce(t *testing.T) {
	const n = 2000
	var ragas, beir strings.Builder
	ragas.WriteString("[\n")
	beir.WriteString("{")
	for i := range n {
		if i > 0 {
			ragas.WriteString(",\n")
			beir.WriteString(",\n")
		}
		fmt.Fprintf(&ragas, `{"id":"c%d","user_input":"query %d %s","retrieved_context_ids":["d1","d2"],"reference_context_ids":["d1"]}`, i, i, strings.Repeat("x", 400))
		fmt.Fprintf(&beir, `"q%d": {"d1": 1, "d2": 0.5, "%s": 0.1}`, i, strings.Repeat("x", 400))
	}
	ragas.WriteString("]\n")
	beir.WriteString("}\n")
	for _, tc := range []struct{ format, in string }{{"ragas", ragas.String()}, {"beir-results", beir.String()}} {
		f, ok := Lookup(tc.format)
		require.True(t, ok)
		ra := &countingReaderAt{r: strings.NewReader(tc.in)}
		res, err := Run(context.Background(), In{Name: "in.json", R: strings.NewReader(tc.in), Out: io.Discard, LineAt: LineAt(ra)}, RunOptions{Format: f})
		require.NoError(t, err, tc.format)
		require.Positive(t, res.Stats.Records, tc.format)
		assert.LessOrEqual(t, ra.read, 2*int64(len(tc.in))+64<<10, "%s: LineAt read %d bytes of a %d-byte input", tc.format, ra.read, len(tc.in))
	}
}

// LineAt answers as a scan from the start does, whatever the order of the
// offsets asked.
func TestLineAtAnyOrder(t *testing.T) {
	in := []byte("[\n  {\"a\": 1},\n\n  {\"b\": 2}, {\"c\": 3}\n,\n{\"d\": 4}\n]   \n\n")
	naive := func(off int64) int {
		line := 1
		for i, c := range in {
			if int64(i) >= off && !bytes.ContainsRune([]byte(" \t\r\n,"), rune(c)) {
				return line
			}
			if c == '\n' {
				line++
			}
		}
		return line
	}
	at := LineAt(bytes.NewReader(in))
	offs := []int64{0, 1, 2, 3, 14, 15, 16, 20, 26, 26, 40, 7, 8, int64(len(in)), int64(len(in)) + 5, 0, 30, 31, 29, 45}
	for i := range int64(len(in)) + 2 {
		offs = append(offs, i)
	}
	for i := int64(len(in)) + 1; i >= 0; i-- {
		offs = append(offs, i)
	}
	for _, off := range offs {
		assert.Equal(t, naive(off), at(off), "offset %d", off)
	}
}
