package csvcap

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// csvRecord is one record as a reader gives it: its fields and lines, or the
// error that ended the input and its line.
type csvRecord struct {
	Fields     []string
	Start, End int
	Err        error
	ErrLine    int
}

// stdCSV reads in with encoding/csv as the importer and the label sheet read
// it before Reader:
// defaults, ReuseRecord, every record as wide as the first; a record's start
// is its first field's line, its end the line of its last field's end.
func stdCSV(in string) []csvRecord {
	r := csv.NewReader(strings.NewReader(in))
	r.ReuseRecord = true
	var out []csvRecord
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return append(out, csvRecord{Err: pe.Err, ErrLine: pe.Line})
			}
			return append(out, csvRecord{Err: err})
		}
		start, _ := r.FieldPos(0)
		end, _ := r.FieldPos(len(rec) - 1)
		end += strings.Count(rec[len(rec)-1], "\n")
		out = append(out, csvRecord{Fields: append([]string(nil), rec...), Start: start, End: end})
	}
}

// ownCSV reads in with Reader through a bufio buffer of size bytes (16,
// bufio's least, splits the lines into many pieces).
func ownCSV(in string, size int) []csvRecord {
	r := NewReader(bufio.NewReaderSize(strings.NewReader(in), size), 1<<30)
	var out []csvRecord
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return append(out, csvRecord{Err: pe.Err, ErrLine: pe.Line})
			}
			return append(out, csvRecord{Err: err})
		}
		out = append(out, csvRecord{Fields: append([]string(nil), rec...), Start: r.StartLine(), End: r.EndLine()})
	}
}

// Reader reads what encoding/csv reads, as its users read it: the same
// records at the same lines, the same error at the same line.
func TestCSVReaderAsEncodingCSV(t *testing.T) {
	for _, in := range csvSeeds {
		for _, size := range []int{16, 4096} {
			assert.Equal(t, stdCSV(in), ownCSV(in, size), "%q, buffer %d", in, size)
		}
	}
}

var csvSeeds = []string{
	"", "\n", "\r", "\r\n", "\n\n\n", "a", "a\n", "a\r", "a\r\n", "a,b\nc,d\n", "a,b\nc\n", "a,b\nc,d,e\n",
	"\"a\"", "\"a\"\n", "\"a\"\r", "\"a\"\r\n", "\"a\"\rb\n", "\"a\"b\n", "\"a\"\"b\",c\n", "\"a", "\"a\n", "\"a\r", "\"a\r\n",
	"\"a\nb\",c\nd,e\n", "\"a\r\nb\"\r\nc\r\n", "a\"b,c\n", "a,b\"\n", "a\rb,c\r\n", "a\r\r\n", "\r\r\n", "\ra\n",
	"a,\n", "a,", ",", ",\n", "\n\na,b\n\n\nc,d", "\"\"", "\"\"\"\"", "\"a\n\n\nb\"x", "a,\"b\nc\"\"\nd\",e\nf\",g\n",
	"q,r\n\"x\ny\n", "\xef\xbb\xbfa,b\n", "a,\"\",\"\"\"\n", "\"\n", "\"\"\n\n", "a\n\r\nb\n", "a\n\r", "\"0\n\r", "\"0\n\r\r", "\"0\n\rx",
}

// FuzzCSVReader: Reader and encoding/csv read the same records and the
// same error from any input under the cap, whatever pieces bufio cuts the
// lines into.
func FuzzCSVReader(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, in string, size uint8) {
		require.Equal(t, stdCSV(in), ownCSV(in, 16+int(size)))
	})
}

// A record over the cap is refused having held the cap and a chunk, where
// encoding/csv behind a cap's reader held about five times the cap: a 4 MiB
// record against a 1 MiB cap, a quoted cell on one line or many, or not
// quoted, and a run of commas.
func TestLongRecordHeldOnce(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	for _, tc := range []struct{ name, in string }{
		{"quoted cell", "a,b\n\"" + big + "\",c\n"},
		{"quoted cell over many lines", "a,b\n\"" + strings.Repeat("x\n", 2<<20) + "\",c\n"},
		{"cell", "a,b\nc," + big + "\n"},
		{"blank lines", "a,b\n" + strings.Repeat("\n", 4<<20) + "c,d\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bufio.NewReaderSize(strings.NewReader(tc.in), 64<<10), 1<<20)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := r.Read()
			require.NoError(t, err)
			_, err = r.Read()
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrTooLong)
			assert.Equal(t, 1, r.EndLine(), "the last record read")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3<<19), "bytes allocated")
		})
	}
	// A record at the cap is read whole, its lines counted.
	in := "\"" + strings.Repeat("q\n", 1<<18) + "\",a\nr,b\n"
	r := NewReader(bufio.NewReaderSize(strings.NewReader(in), 64<<10), int64(len(in)-len("r,b\n")))
	rec, err := r.Read()
	require.NoError(t, err)
	assert.Equal(t, []string{strings.Repeat("q\n", 1<<18), "a"}, rec)
	assert.Equal(t, []int{1, 1<<18 + 1}, []int{r.StartLine(), r.EndLine()})
	rec, err = r.Read()
	require.NoError(t, err)
	assert.Equal(t, []string{"r", "b"}, rec)
}
