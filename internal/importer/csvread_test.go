package importer

import (
	"bufio"
	"context"
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

// stdCSV reads in with encoding/csv as convertCSV read it before csvReader:
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

// ownCSV reads in with csvReader through a bufio buffer of size bytes (16,
// bufio's least, splits the lines into many pieces).
func ownCSV(in string, size int) []csvRecord {
	r := newCSVReader(bufio.NewReaderSize(strings.NewReader(in), size))
	var out []csvRecord
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			var pe *csvError
			if errors.As(err, &pe) {
				return append(out, csvRecord{Err: pe.Err, ErrLine: pe.Line})
			}
			return append(out, csvRecord{Err: err})
		}
		out = append(out, csvRecord{Fields: append([]string(nil), rec...), Start: r.startLine, End: r.endLine})
	}
}

// csvReader reads what encoding/csv reads, as convertCSV used it: the same
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

// FuzzCSVReader: csvReader and encoding/csv read the same records and the
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

// An 80 MiB quoted CSV cell was refused at the 64 MiB cap having held about
// five times the cap (encoding/csv's buffers grown by append): csvReader
// refuses it holding the cap and a chunk. Allocation-measured: a 4 MiB
// record against a 1 MiB cap allocated 6.5 to 7.6 MB through encoding/csv.
func TestLongCSVRecordHeldOnce(t *testing.T) {
	withCaps(t, 1<<20, nil)
	big := strings.Repeat("x", 4<<20)
	f, _ := Lookup("csv")
	for _, tc := range []struct{ name, in, want string }{
		{"quoted cell", "query,retrieved\n\"" + big + "\",a\n", "in:2: a CSV record longer than 1 MiB"},
		{"quoted cell over many lines", "query,retrieved\n\"" + strings.Repeat("x\n", 2<<20) + "\",a\n", "in:2: a CSV record longer than 1 MiB"},
		{"cell", "query,retrieved\nq," + big + "\n", "in:2: a CSV record longer than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := Convert(context.Background(), strings.NewReader(tc.in), "in", io.Discard, f, Options{})
			runtime.ReadMemStats(&after)
			require.ErrorContains(t, err, tc.want)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3<<19), "bytes allocated")
		})
	}
	// A record under the cap is read whole, its lines counted.
	var out strings.Builder
	_, st, err := Convert(context.Background(), strings.NewReader("query,retrieved\n\""+strings.Repeat("q\n", 1<<18)+"\",a\nr,b\n"), "in", &out, f, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Records)
}
