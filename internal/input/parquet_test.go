package input_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

type pqEntry struct {
	ID       string   `parquet:"id"`
	ParentID *string  `parquet:"parent_id,optional"`
	Score    *float64 `parquet:"score,optional"`
}

type pqCase struct {
	ID        string             `parquet:"id"`
	Locale    *string            `parquet:"locale,optional"`
	Query     string             `parquet:"query"`
	Gold      []string           `parquet:"must_cite_one_of,list"`
	Retrieved []pqEntry          `parquet:"retrieved,list"`
	Scores    map[string]float64 `parquet:"scores,optional"`
	N         int32              `parquet:"n"`
	U         uint64             `parquet:"u"`
	F         float32            `parquet:"f"`
	B         bool               `parquet:"b"`
}

type pqQrel struct {
	QueryID   string `parquet:"query_id"`
	DocID     string `parquet:"doc_id"`
	Relevance int64  `parquet:"relevance"`
}

type pqRun struct {
	QueryID string  `parquet:"query_id"`
	DocID   string  `parquet:"doc_id"`
	Rank    int32   `parquet:"rank"`
	Score   float64 `parquet:"score"`
}

func writeParquet[T any](t testing.TB, path string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

func readAll(t *testing.T, path string) (string, error) {
	t.Helper()
	s, err := input.OpenSharded(context.Background(), path)
	if err != nil {
		return "", err
	}
	defer s.Close()
	b, err := io.ReadAll(s)
	return string(b), s.Remap(err)
}

func ptr[T any](v T) *T { return &v }

func TestParquetCasesAsJSONL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cases.parquet")
	writeParquet(t, p, []pqCase{
		{ID: "a", Locale: ptr("en"), Query: `say "hi"` + "\n\x01", Gold: []string{"c1", "c2"},
			Retrieved: []pqEntry{{ID: "c1#0", ParentID: ptr("c1"), Score: ptr(0.5)}, {ID: "c9"}},
			Scores:    map[string]float64{"hit": 1}, N: -3, U: 1 << 63, F: 0.1, B: true},
		{ID: "b", Query: "q", N: 1, F: 1e-7},
	})
	assert.True(t, input.IsParquet(p))
	assert.True(t, input.IsSharded(p), "a Parquet file is read as one shard")
	got, err := readAll(t, p)
	require.NoError(t, err)
	want := `{"id":"a","locale":"en","query":"say \"hi\"\n\u0001","must_cite_one_of":["c1","c2"],` +
		`"retrieved":[{"id":"c1#0","parent_id":"c1","score":0.5},{"id":"c9"}],"scores":{"hit":1},"n":-3,"u":9223372036854775808,"f":0.10000000149011612,"b":true}` + "\n" +
		`{"id":"b","query":"q","must_cite_one_of":[],"retrieved":[],"n":1,"u":0,"f":1.0000000116860974e-07,"b":false}` + "\n"
	assert.Equal(t, want, got, "the exact bytes of the lines")
}

func TestParquetTRECRunAndQrels(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "run.parquet"), []pqRun{{"q1", "d1", 1, 0.75}, {"q1", "d2", 2, 1e-9}})
	got, err := readAll(t, filepath.Join(dir, "run.parquet"))
	require.NoError(t, err)
	assert.Equal(t, "q1 Q0 d1 1 0.75 parquet\nq1 Q0 d2 2 1e-09 parquet\n", got)

	writeParquet(t, filepath.Join(dir, "qrels.parquet"), []pqQrel{{"q1", "d1", 2}})
	got, err = readAll(t, filepath.Join(dir, "qrels.parquet"))
	require.NoError(t, err)
	assert.Equal(t, `{"query_id":"q1","doc_id":"d1","relevance":2}`+"\n", got) //nolint:testifylint // the exact bytes of the line, not only the same JSON value

	writeParquet(t, filepath.Join(dir, "bad.parquet"), []pqRun{{"q1", "d1", 1, 0.5}, {"q 2", "d1", 1, 0.5}})
	_, err = readAll(t, filepath.Join(dir, "bad.parquet"))
	require.EqualError(t, err, filepath.Join(dir, "bad.parquet")+`:2: column query_id: "q 2" cannot be a TREC field (empty, or it holds white space or a control character)`)
}

func TestParquetShardsMixedAndRows(t *testing.T) {
	dir := t.TempDir()
	// Small row groups and pages: a row is found across them.
	rows := make([]pqQrel, 1000)
	for i := range rows {
		rows[i] = pqQrel{QueryID: "q", DocID: "d", Relevance: int64(i)}
	}
	writeParquet(t, filepath.Join(dir, "locale=en/part-0.parquet"), rows, parquet.MaxRowsPerRowGroup(300), parquet.PageBufferSize(256))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "locale=fr"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "locale=fr/part-0.json"), []byte(`{"query_id":"q","doc_id":"x","relevance":1}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o600))
	got, err := readAll(t, dir)
	require.NoError(t, err)
	lines := bytes.Split([]byte(got), []byte("\n"))
	require.Len(t, lines, 1002)
	assert.Equal(t, `{"query_id":"q","doc_id":"d","relevance":999}`, string(lines[999])) //nolint:testifylint // the exact bytes of the line, not only the same JSON value
	assert.Equal(t, `{"query_id":"q","doc_id":"x","relevance":1}`, string(lines[1000]))  //nolint:testifylint // the exact bytes of the line, not only the same JSON value

	// A row's error names the shard and the row; an empty Parquet shard is one.
	s, err := input.OpenSharded(context.Background(), dir)
	require.NoError(t, err)
	_, err = io.ReadAll(s)
	require.NoError(t, err)
	file, line := s.Locate(1001)
	assert.Equal(t, filepath.Join(dir, "locale=fr/part-0.json"), file)
	assert.Equal(t, 1, line)
	file, line = s.Locate(700)
	assert.Equal(t, filepath.Join(dir, "locale=en/part-0.parquet"), file)
	assert.Equal(t, 700, line)
	require.NoError(t, s.Close())

	writeParquet(t, filepath.Join(dir, "locale=xx/part-0.parquet"), []pqQrel{})
	_, err = readAll(t, dir)
	require.ErrorContains(t, err, filepath.Join(dir, "locale=xx/part-0.parquet")+": empty shard: no records")
}

func TestParquetRefused(t *testing.T) {
	dir := t.TempDir()
	type ts struct {
		ID string `parquet:"id"`
		T  int64  `parquet:"t,timestamp"`
	}
	writeParquet(t, filepath.Join(dir, "ts.parquet"), []ts{{"a", 1}})
	_, err := readAll(t, filepath.Join(dir, "ts.parquet"))
	require.ErrorContains(t, err, "ts.parquet: column t: type TIMESTAMP")

	type deep struct {
		ID string     `parquet:"id"`
		L  [][]string `parquet:"l,list"`
	}
	writeParquet(t, filepath.Join(dir, "deep.parquet"), []deep{{"a", [][]string{{"x"}}}})
	_, err = readAll(t, filepath.Join(dir, "deep.parquet"))
	require.ErrorContains(t, err, "nesting deeper is not read")

	type nan struct {
		ID string  `parquet:"id"`
		S  float64 `parquet:"s"`
	}
	writeParquet(t, filepath.Join(dir, "nan.parquet"), []nan{{"a", 1}, {"b", posInf()}})
	_, err = readAll(t, filepath.Join(dir, "nan.parquet"))
	require.EqualError(t, err, filepath.Join(dir, "nan.parquet")+":2: column s: +Inf is not a number JSON can hold")

	// Truncated: starts with the magic bytes, does not end with them.
	b, err := os.ReadFile(filepath.Join(dir, "nan.parquet"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.parquet"), b[:len(b)-3], 0o600))
	_, err = readAll(t, filepath.Join(dir, "cut.parquet"))
	require.ErrorContains(t, err, "cut.parquet: not a Parquet file: it starts with \"PAR1\" but does not end with it")
}

// A page of more values than the cap is refused before it is read (run-length
// encoding packs millions of values into a few bytes).
func TestParquetPageValuesCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.parquet")
	rows := make([]pqQrel, 2000)
	for i := range rows {
		rows[i] = pqQrel{QueryID: "q", DocID: "d", Relevance: 1}
	}
	writeParquet(t, p, rows)
	_, err := readAll(t, p)
	require.NoError(t, err)
	defer input.SetMaxParquetPageValues(1000)()
	_, err = readAll(t, p)
	require.ErrorContains(t, err, "q.parquet: not a valid Parquet file: row group 0, column 0: a page of 2000 values: the cap is 1000")
}

func posInf() float64 { x := 0.0; return 1 / x }

// FuzzParquet reads arbitrary bytes after the magic bytes as a Parquet shard
// (seeded with small valid files of each shape: cases, qrels, a TREC run):
// no panic, no allocation the caps do not bound, and an error is an input
// error naming the file.
func FuzzParquet(f *testing.F) {
	dir := f.TempDir()
	seeds := []func(string){
		func(p string) {
			writeParquet(f, p, []pqCase{{ID: "a", Locale: ptr("en"), Query: "q", Gold: []string{"c1"}, Retrieved: []pqEntry{{ID: "c1", Score: ptr(0.5)}}, Scores: map[string]float64{"hit": 1}}})
		},
		func(p string) { writeParquet(f, p, []pqQrel{{"q1", "d1", 2}, {"q1", "d2", 0}}) },
		func(p string) {
			writeParquet(f, p, []pqRun{{"q1", "d1", 1, 0.5}}, parquet.Compression(&parquet.Snappy))
		},
	}
	for i, seed := range seeds {
		p := filepath.Join(dir, "seed"+string(rune('0'+i))+".parquet")
		seed(p)
		inputtest.AddFileSeed(f, p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := inputtest.ParquetFuzzFile(t, b)
		if p == "" {
			return
		}
		s, err := input.OpenSharded(context.Background(), p)
		if err == nil {
			_, err = io.Copy(io.Discard, s)
			require.NoError(t, s.Close())
		}
		if err != nil {
			var ie *input.Error
			require.ErrorAs(t, err, &ie, "%v", err)
			require.Equal(t, p, ie.File)
		}
	})
}

// LZ4_RAW pages are read (the checks decompress each into its header's
// size first); a damaged one is an error, not a buffer that doubles until the
// memory runs out (testdata/fuzz/FuzzParquet/8275d7cf84fc30d6, which did).
func TestParquetLZ4(t *testing.T) {
	for _, v := range []int{1, 2} {
		p := filepath.Join(t.TempDir(), "c.parquet")
		writeParquet(t, p, []pqCase{{ID: "a", Query: strings.Repeat("abc", 500), Gold: []string{"c1"}}, {ID: "b", Query: "q"}},
			parquet.Compression(&parquet.Lz4Raw), parquet.DataPageVersion(v))
		got, err := readAll(t, p)
		require.NoError(t, err, "page version %d", v)
		assert.Equal(t, 2, strings.Count(got, "\n"))
		assert.Contains(t, got, strings.Repeat("abc", 500))
	}
}

// A footer that claims more than it holds is refused before the library
// reads it: 25 bytes that claim 2³¹ − 1 schema elements ran the process out
// of memory (a fatal error, past any recover), and a footer of 1-byte
// elements past maxParquetFooterElements claims hundreds of bytes each.
func TestParquetFooterClaims(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, footer []byte) string {
		p := filepath.Join(dir, name)
		b := append([]byte("PAR1"), make([]byte, 64)...)
		b = append(b, footer...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
		require.NoError(t, os.WriteFile(p, append(b, "PAR1"...), 0o600))
		return p
	}
	huge := file("huge.parquet", append([]byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07}, make([]byte, 16)...))
	_, err := readAll(t, huge)
	require.EqualError(t, err, huge+": not a valid Parquet file: footer: decoding thrift payload: 2:FIELD<LIST>: a field of length 2147483647 past the end of the footer")

	many := []byte{0x15, 0x02, 0x19, 0xfc}
	many = binary.AppendUvarint(many, input.MaxParquetFooterElements+1)
	many = append(many, make([]byte, input.MaxParquetFooterElements+2)...) // empty structs, then the stop
	_, err = readAll(t, file("many.parquet", many))
	require.ErrorContains(t, err, fmt.Sprintf("not a valid Parquet file: footer: decoding thrift payload: 2:FIELD<LIST>: more than %d elements in its lists", input.MaxParquetFooterElements))
}

type pqWide struct {
	ID    string  `parquet:"id"`
	Query string  `parquet:"query"`
	Z     []int32 `parquet:"z,list"`
}

// TestParquetRowValuesCap: the line reader reads rows of many values one at a
// time (it read 256 at once, and 16 rows of 4 million zeros, a 30 KB file, took
// 2.8 GB), and a row of more values than a record may hold
// (jsonpos.MaxValues) is refused at its row.
func TestParquetRowValuesCap(t *testing.T) {
	dir := t.TempDir()
	heavy := filepath.Join(dir, "heavy.parquet")
	rows := make([]pqWide, 8)
	for i := range rows {
		rows[i] = pqWide{ID: fmt.Sprint(i), Query: "q", Z: make([]int32, 100000)}
	}
	writeParquet(t, heavy, rows)
	light := filepath.Join(dir, "light.parquet")
	writeParquet(t, light, []pqWide{{ID: "a", Query: "q", Z: []int32{1, 2}}, {ID: "b", Query: "q"}})
	for _, c := range []struct {
		path string
		want int
	}{{heavy, 1}, {light, 256}} {
		f, err := os.Open(c.path)
		require.NoError(t, err)
		st, err := f.Stat()
		require.NoError(t, err)
		pf, err := parquet.OpenFile(f, st.Size())
		require.NoError(t, err)
		assert.Equal(t, c.want, input.ReadRowsAtOnce(pf.RowGroups()[0], 256), c.path)
		f.Close()
	}
	got, err := readAll(t, heavy)
	require.NoError(t, err)
	assert.Equal(t, 8, strings.Count(got, "\n"))

	over := filepath.Join(dir, "over.parquet")
	writeParquet(t, over, []pqWide{{ID: "a", Query: "q"}, {ID: "b", Query: "q", Z: make([]int32, jsonpos.MaxValues)}})
	_, err = readAll(t, over)
	require.EqualError(t, err, over+":2: the row holds 1,048,578 values, more than 1,048,576 (the cap on what a record may take in memory)")
}
