package input_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
)

// A table of the shapes ParquetRows reads: required, optional and
// dictionary-encoded strings, lists that are null or empty, lists of
// structs with null, float and double leaves.
type rowsEntry struct {
	ID    *string  `parquet:"id,optional,dict"`
	Text  string   `parquet:"text"`
	Score *float64 `parquet:"score,optional"`
	F     float32  `parquet:"f"`
}

type rowsCase struct {
	ID        string      `parquet:"id"`
	Locale    *string     `parquet:"locale,optional,dict"`
	Query     *string     `parquet:"query,optional"`
	Gold      []string    `parquet:"gold,optional,list"`
	Relevant  []string    `parquet:"relevant,list"`
	Retrieved []rowsEntry `parquet:"retrieved,optional,list"`
}

var rowsStrings = []string{"", "a", "c1", "doc-7", "é", "日本", "\xff", "say \"hi\"\n"}

func rowsStr(r *rand.Rand, long int) string {
	if r.IntN(30) == 0 { // pages end inside the row
		return strings.Repeat("x", 1+r.IntN(long))
	}
	return rowsStrings[r.IntN(len(rowsStrings))]
}

func rowsOpt(r *rand.Rand, long int) *string {
	if r.IntN(4) == 0 {
		return nil
	}
	s := rowsStr(r, long)
	return &s
}

func randRowsCase(r *rand.Rand, i, long int) rowsCase {
	c := rowsCase{ID: fmt.Sprint(i), Locale: rowsOpt(r, 3), Query: rowsOpt(r, long)}
	if r.IntN(3) > 0 {
		c.Gold = []string{}
		for range r.IntN(4) {
			c.Gold = append(c.Gold, rowsStr(r, long))
		}
	}
	for range r.IntN(3) {
		c.Relevant = append(c.Relevant, rowsStr(r, long))
	}
	if r.IntN(4) > 0 {
		c.Retrieved = []rowsEntry{}
		for range r.IntN(12) {
			e := rowsEntry{ID: rowsOpt(r, 3), Text: rowsStr(r, long), F: float32(r.IntN(9)) / 4}
			if r.IntN(3) > 0 {
				x := r.Float64()
				e.Score = &x
			}
			c.Retrieved = append(c.Retrieved, e)
		}
	}
	return c
}

// writeSplit writes rows as writeParquet does, in row groups of group rows,
// but each column's values in runs of 1 to 2*run values, a page each
// (ColumnWriter.Flush): the pages start and end inside rows.
func writeSplit[T any](t testing.TB, r *rand.Rand, path string, rows []T, group, run int, opts ...parquet.WriterOption) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	sch := w.Schema()
	for len(rows) > 0 {
		g := rows[:min(group, len(rows))]
		rows = rows[len(g):]
		cols := make([][]parquet.Value, len(sch.Columns()))
		for _, row := range g {
			for _, v := range sch.Deconstruct(nil, &row) {
				cols[v.Column()] = append(cols[v.Column()], v)
			}
		}
		for c, vals := range cols {
			cw := w.ColumnWriters()[c]
			for len(vals) > 0 {
				n := min(1+r.IntN(2*run), len(vals))
				_, err := cw.WriteRowValues(vals[:n])
				require.NoError(t, err)
				require.NoError(t, cw.Flush())
				vals = vals[n:]
			}
		}
		require.NoError(t, w.Flush())
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

// rowsBatch is what a batch of rows holds: its rows' values (per row, per
// column: the levels, strings and floats, and the row's text line), the
// arena's length, the error that ended it.
type rowsBatch struct {
	Rows  [][]string
	Arena int
	Last  int64
	Err   string
}

func rowsOf(t testing.TB, r *input.ParquetRows, arena []byte, cols []input.ParquetCol, n int) [][]string {
	t.Helper()
	liner := r.Liner()
	var out [][]string
	v := make([]input.ParquetCol, len(cols))
	for i := range n {
		var row []string
		for c := range cols {
			cols[c].Row(i, arena, &v[c])
			var s strings.Builder
			fmt.Fprint(&s, v[c].Defs, v[c].Floats, len(v[c].Ends))
			for j := range v[c].Ends {
				s.WriteByte('|')
				s.Write(v[c].Str(j))
			}
			row = append(row, s.String())
		}
		line, err := liner.Line(nil, int64(i), v)
		if err != nil {
			row = append(row, err.Error())
		}
		out = append(out, append(row, string(line)))
	}
	return out
}

// readBatches reads path's rows in batches of at most maxRows rows and
// stopping after the row that brings the arena to maxBytes: by NextRows, or
// (one) row by row with Next.
func readBatches(t testing.TB, path string, one bool, maxRows, maxBytes int) []rowsBatch {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := input.OpenParquetRows(context.Background(), path, f)
	require.NoError(t, err)
	defer r.Close()
	cols := make([]input.ParquetCol, r.NumCols())
	var out []rowsBatch
	for {
		var arena []byte
		for c := range cols {
			cols[c].Reset()
		}
		n := 0
		if one {
			for n < maxRows && len(arena) < maxBytes {
				if arena, err = r.Next(arena, cols); err != nil {
					break
				}
				n++
			}
			if n > 0 && errors.Is(err, io.EOF) {
				err = nil
			}
		} else {
			arena, n, err = r.NextRows(arena, cols, maxRows, maxBytes)
		}
		if errors.Is(err, io.EOF) {
			require.Zero(t, n)
			return out
		}
		b := rowsBatch{Rows: rowsOf(t, r, arena, cols, n), Arena: len(arena), Last: r.Row()}
		if err != nil {
			b.Err = err.Error()
		}
		out = append(out, b)
		if err != nil {
			return out
		}
	}
}

// NextRows reads what Next reads, row for row and batch for batch (rows
// across pages, dictionary pages, nulls and empty lists, both page versions,
// small row groups), whatever the batch's bounds.
func TestParquetNextRowsAsNext(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 4))
	dir := t.TempDir()
	for i := range 40 {
		rows := make([]rowsCase, 1+r.IntN(400))
		long := []int{10, 300, 3000}[r.IntN(3)]
		for j := range rows {
			rows[j] = randRowsCase(r, j, long)
		}
		opts := []parquet.WriterOption{
			parquet.PageBufferSize([]int{64, 256, 1024, 1 << 20}[r.IntN(4)]),
			parquet.MaxRowsPerRowGroup([]int64{1, 7, 100, 1000}[r.IntN(4)]),
			parquet.DataPageVersion(1 + r.IntN(2)),
		}
		if r.IntN(2) == 0 {
			opts = append(opts, parquet.Compression(&parquet.Snappy))
		}
		p := filepath.Join(dir, fmt.Sprintf("%d.parquet", i))
		if r.IntN(2) == 0 {
			writeParquet(t, p, rows, opts...)
		} else {
			// Version 1 pages: the library refuses a version 2 page
			// that starts inside a row.
			opts = append(opts[3:], parquet.DataPageVersion(1))
			writeSplit(t, r, p, rows, []int{1, 50, 1000}[r.IntN(3)], []int{2, 20, 500}[r.IntN(3)], opts...)
		}
		maxRows := []int{1, 2, 3, 50, 128}[r.IntN(5)]
		maxBytes := []int{1, 40, 1000, 64 << 10}[r.IntN(4)]
		want := readBatches(t, p, true, maxRows, maxBytes)
		got := readBatches(t, p, false, maxRows, maxBytes)
		require.Len(t, got, len(want), "table %d", i)
		for j := range want {
			require.Equal(t, want[j], got[j], "table %d (%d rows, %v), batch %d", i, len(rows), opts, j)
		}
		n := 0
		for _, b := range want {
			n += len(b.Rows)
		}
		require.Equal(t, len(rows), n, "table %d: %+v", i, want[len(want)-1].Err)
	}
}

// A row longer than the cap in the middle of a batch ends it with the
// error naming that row, the rows before it read; a long row under the cap
// ends the batch after it (its arena past the batch's bound).
func TestParquetNextRowsLongRow(t *testing.T) {
	defer input.SetMaxParquetRow(1 << 20)()
	for _, tc := range []struct {
		query, relevant int // the long row's string bytes in query and relevant
		elems           int // or the number of its relevant ids ("ab": 2 bytes and a level, 2 bytes, each)
		err             string
	}{
		{1<<20 - 4096, 0, 0, ""},
		{600 << 10, 400 << 10, 0, ""},
		{0, 0, 250 << 10, ""},
		{1<<20 + 1, 0, 0, "not a valid Parquet file: column query: a row longer than 1 MiB"},
		{600 << 10, 600 << 10, 0, "row longer than 1 MiB as a line"},
		{0, 0, 270 << 10, "row longer than 1 MiB as a line"},
	} {
		rows := make([]rowsCase, 200)
		for j := range rows {
			rows[j] = rowsCase{ID: fmt.Sprint(j), Relevant: []string{"a", "b"}}
		}
		q := strings.Repeat("q", tc.query)
		rows[70].Query = &q
		if tc.relevant > 0 {
			rows[70].Relevant = []string{"a", strings.Repeat("r", tc.relevant)}
		}
		if tc.elems > 0 {
			rows[70].Relevant = make([]string, tc.elems)
			for j := range rows[70].Relevant {
				rows[70].Relevant[j] = "ab"
			}
		}
		p := filepath.Join(t.TempDir(), "c.parquet")
		writeParquet(t, p, rows, parquet.PageBufferSize(8<<20))
		for _, one := range []bool{true, false} {
			got := readBatches(t, p, one, 128, 64<<10)
			if tc.err != "" {
				require.Len(t, got, 1, "one %v", one)
				require.Len(t, got[0].Rows, 70, "one %v", one)
				require.Equal(t, p+":71: "+tc.err, got[0].Err, "one %v", one)
				continue
			}
			require.Len(t, got, 3, "one %v", one)
			require.Equal(t, []int{71, 128, 1}, []int{len(got[0].Rows), len(got[1].Rows), len(got[2].Rows)}, "one %v", one)
			require.Empty(t, got[0].Err, "one %v", one)
			require.Equal(t, int64(71), got[0].Last)
			require.Greater(t, got[0].Arena, tc.query+tc.relevant+2*tc.elems)
		}
	}
}

// A cancelled context stops NextRows within 256 rows.
func TestParquetNextRowsCancel(t *testing.T) {
	rows := make([]rowsCase, 3000)
	for j := range rows {
		rows[j] = rowsCase{ID: fmt.Sprint(j)}
	}
	p := filepath.Join(t.TempDir(), "c.parquet")
	writeParquet(t, p, rows)
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := input.OpenParquetRows(ctx, p, f)
	require.NoError(t, err)
	defer r.Close()
	cols := make([]input.ParquetCol, r.NumCols())
	_, n, err := r.NextRows(nil, cols, 300, 1<<20)
	require.NoError(t, err)
	require.Equal(t, 300, n)
	cancel()
	_, n, err = r.NextRows(nil, cols, 300, 1<<20)
	require.ErrorIs(t, err, context.Canceled)
	require.LessOrEqual(t, n, 256)
}

// FuzzParquetNextRows reads arbitrary bytes after the magic bytes as a
// Parquet file by rows, with Next and with NextRows: the same rows, batch
// for batch, and the same error, naming the same row (seeded with small
// valid tables, pages starting inside rows among them).
func FuzzParquetNextRows(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 9))
	dir := f.TempDir()
	for i := range 4 {
		rows := make([]rowsCase, 6)
		for j := range rows {
			rows[j] = randRowsCase(r, j, 10)
		}
		p := filepath.Join(dir, fmt.Sprintf("seed%d.parquet", i))
		if i < 2 {
			writeParquet(f, p, rows, parquet.PageBufferSize(64), parquet.MaxRowsPerRowGroup(4), parquet.DataPageVersion(1+i))
		} else {
			writeSplit(f, r, p, rows, 4, 3, parquet.DataPageVersion(1))
		}
		inputtest.AddFileSeed(f, p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := inputtest.ParquetFuzzFile(t, b)
		if p == "" {
			return
		}
		want, wantErr := tryBatches(t, p, true)
		got, gotErr := tryBatches(t, p, false)
		require.Equal(t, wantErr, gotErr)
		require.Equal(t, want, got)
	})
}

// tryBatches is readBatches (batches of 3 rows or 100 bytes) on a file that
// may not open.
func tryBatches(t *testing.T, path string, one bool) ([]rowsBatch, string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	_, err = input.OpenParquetRows(context.Background(), path, f)
	f.Close()
	if err != nil {
		return nil, err.Error()
	}
	return readBatches(t, path, one, 3, 100), ""
}

// The strings of a dictionary page are read whole whatever their length
// (those of at most 16 bytes are copied by 16), at the dictionary's end too.
func TestParquetNextRowsDictStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	var rows []rowsCase
	var want []string
	for i := range 300 {
		l := r.IntN(41)
		s := strings.Repeat(string(rune('a'+i%26)), l) + fmt.Sprint(i%7)
		e := s[:l/2]
		rows = append(rows, rowsCase{ID: fmt.Sprint(i), Locale: &s, Retrieved: []rowsEntry{{ID: &e}, {ID: &s}}})
		want = append(want, s, e, s)
	}
	p := filepath.Join(t.TempDir(), "c.parquet")
	writeParquet(t, p, rows, parquet.PageBufferSize(512))
	for _, one := range []bool{true, false} {
		var got []string
		for _, b := range readBatches(t, p, one, 128, 64<<10) {
			for _, row := range b.Rows {
				// row: id, locale, query, gold, relevant, and retrieved's
				// id, text, score, f, then the line
				got = append(got, row[1][strings.Index(row[1], "|")+1:])
				got = append(got, strings.Split(row[5], "|")[1:]...)
			}
		}
		require.Equal(t, want, got, "one %v", one)
	}
}

// KeyDict keys a dictionary column's strings once per dictionary (a row
// group's chunk), whatever its pages, and gives each string read from it
// its key in ParquetCol.Keys, by Next and NextRows alike; a string read from
// a PLAIN page (the dictionary's fallback midway) has ParquetNoKey, and a
// batch with no string from a dictionary has no keys.
func TestParquetKeyDict(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 35))
	var rows []rowsCase
	for i := range 600 {
		c := rowsCase{ID: fmt.Sprint(i)}
		for range r.IntN(6) {
			s := fmt.Sprint("doc-", r.IntN(40))
			if r.IntN(9) == 0 {
				s = strings.Repeat("y", 1+r.IntN(60))
			}
			c.Retrieved = append(c.Retrieved, rowsEntry{ID: &s})
		}
		rows = append(rows, c)
	}
	const idCol = 5 // retrieved's id
	key := func(s string) uint64 { return uint64(len(s))<<32 | uint64(s[len(s)-1]) }
	for _, tt := range []struct {
		name     string
		opts     []parquet.WriterOption
		groups   int
		fallback bool
	}{
		{"one dictionary, many pages", []parquet.WriterOption{parquet.PageBufferSize(256)}, 1, false},
		{"a dictionary a row group", []parquet.WriterOption{parquet.PageBufferSize(256), parquet.MaxRowsPerRowGroup(100)}, 6, false},
		{"the dictionary falls back to PLAIN", []parquet.WriterOption{parquet.PageBufferSize(256), parquet.DictionaryMaxBytes(200), parquet.MaxRowsPerRowGroup(300)}, 2, true},
	} {
		p := filepath.Join(t.TempDir(), "k.parquet")
		writeParquet(t, p, rows, tt.opts...)
		for _, one := range []bool{true, false} {
			f, err := os.Open(p)
			require.NoError(t, err)
			pr, err := input.OpenParquetRows(context.Background(), p, f)
			require.NoError(t, err)
			calls, dicts := 0, 0
			pr.KeyDict(idCol, func(strs []string, keys []uint64) {
				dicts++
				calls += len(strs)
				for i, s := range strs {
					keys[i] = key(s)
				}
			})
			cols := make([]input.ParquetCol, pr.NumCols())
			keyed, plain := 0, 0
			for {
				var arena []byte
				for c := range cols {
					cols[c].Reset()
				}
				n := 0
				if one {
					for ; n < 7; n++ {
						if arena, err = pr.Next(arena, cols); err != nil {
							break
						}
					}
				} else {
					arena, n, err = pr.NextRows(arena, cols, 7, 1<<20)
				}
				if n == 0 {
					require.ErrorIs(t, err, io.EOF)
					break
				}
				c := &cols[idCol]
				if len(c.Keys) == 0 {
					plain += len(c.Ends)
					continue
				}
				require.Len(t, c.Keys, len(c.Ends), "%s: a key per string", tt.name)
				var v input.ParquetCol
				for i, m := range c.Marks() {
					c.Row(i, arena, &v)
					for j := range v.Ends {
						k := c.Keys[int(m.Ends)+j]
						if k == input.ParquetNoKey {
							plain++
							continue
						}
						keyed++
						require.Equal(t, key(string(v.Str(j))), k, "%s: the key of %q", tt.name, v.Str(j))
					}
				}
			}
			pr.Close()
			f.Close()
			require.Equal(t, tt.groups, dicts, "%s: one dictionary a row group keyed once", tt.name)
			require.Greater(t, keyed, 200, tt.name)
			require.Less(t, calls, keyed/2, "%s: keyed per entry, not per value", tt.name)
			if tt.fallback {
				require.Greater(t, plain, 100, "%s: strings after the fallback", tt.name)
			} else {
				require.Zero(t, plain, tt.name)
			}
		}
	}
}
