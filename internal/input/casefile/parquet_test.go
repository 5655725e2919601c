package casefile_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
)

// Two shapes of a cases table: every column optional (nulls anywhere, a
// null list element, a double score), and every column required with
// dictionary-encoded ids and a float score.
type pqOptEntry struct {
	ID       *string  `parquet:"id,optional"`
	ParentID *string  `parquet:"parent_id,optional"`
	Score    *float64 `parquet:"score,optional"`
	Text     *string  `parquet:"text,optional"`
}

type pqOptCase struct {
	ID        *string      `parquet:"id,optional"`
	Locale    *string      `parquet:"locale,optional"`
	Type      *string      `parquet:"type,optional,dict"`
	Query     *string      `parquet:"query,optional"`
	Cluster   *string      `parquet:"cluster,optional"`
	Gold      []*string    `parquet:"must_cite_one_of,optional,list"`
	Relevant  []string     `parquet:"relevant_ids,list"`
	Retrieved []pqOptEntry `parquet:"retrieved,optional,list"`
}

type pqReqEntry struct {
	ID       string  `parquet:"id,dict"`
	ParentID string  `parquet:"parent_id"`
	Score    float32 `parquet:"score"`
}

type pqReqCase struct {
	ID        string       `parquet:"id"`
	Query     string       `parquet:"query,dict"`
	Locale    string       `parquet:"locale"`
	Gold      []string     `parquet:"must_cite_one_of,list"`
	Retrieved []pqReqEntry `parquet:"retrieved,list"`
}

// A table the fast path does not read (a scores map): the text path's.
type pqScoresCase struct {
	ID     string             `parquet:"id"`
	Scores map[string]float64 `parquet:"scores"`
}

var pqStrings = []string{"", "a", "c1", "c2", "doc-7", "é", "日本", "\xff", "a\x00b", "say \"hi\"\n", `back\slash`, "  ", "c1#0"}

var pqFloats = []float64{0, 1, 0.5, -2.25, 1e-7, 1e300, 5e-324, math.Copysign(0, -1), math.NaN(), math.Inf(1), 0.1, 123456789.125}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func optStr(r *rand.Rand, pNull float64) *string {
	if r.Float64() < pNull {
		return nil
	}
	s := pick(r, pqStrings)
	if r.IntN(40) == 0 { // long: pages end inside the row
		s = string(bytes.Repeat([]byte("long"), 300+r.IntN(300)))
	}
	return &s
}

func goodStr(r *rand.Rand) string {
	for {
		if s := pick(r, pqStrings); s != "" && s != "\xff" {
			return s
		}
	}
}

func randOptCase(r *rand.Rand, bad float64) pqOptCase {
	c := pqOptCase{Locale: optStr(r, 0.2), Type: optStr(r, 0.5), Query: optStr(r, 0.1), Cluster: optStr(r, 0.7)}
	id := fmt.Sprintf("case-%d", r.IntN(1000))
	if r.Float64() < bad {
		c.ID = optStr(r, 0.3)
	} else {
		c.ID = &id
	}
	if r.IntN(3) > 0 {
		c.Gold = []*string{}
		for range r.IntN(4) {
			if r.Float64() < bad {
				c.Gold = append(c.Gold, optStr(r, 0.5))
			} else {
				s := goodStr(r)
				c.Gold = append(c.Gold, &s)
			}
		}
	}
	for range r.IntN(3) {
		c.Relevant = append(c.Relevant, goodStr(r))
	}
	if r.IntN(4) > 0 {
		c.Retrieved = []pqOptEntry{}
		for range r.IntN(12) {
			e := pqOptEntry{ParentID: optStr(r, 0.4), Text: optStr(r, 0.5)}
			if r.Float64() < bad {
				e.ID = optStr(r, 0.3)
			} else {
				s := goodStr(r)
				e.ID = &s
			}
			if r.IntN(4) > 0 {
				x := pick(r, pqFloats[:8])
				if r.Float64() < bad {
					x = pick(r, pqFloats)
				}
				e.Score = &x
			}
			c.Retrieved = append(c.Retrieved, e)
		}
	}
	return c
}

func randReqCase(r *rand.Rand) pqReqCase {
	c := pqReqCase{ID: fmt.Sprintf("r-%d", r.IntN(100000)), Query: goodStr(r), Locale: pick(r, []string{"en", "de", "", "fr-CA"})}
	for range r.IntN(3) {
		c.Gold = append(c.Gold, goodStr(r))
	}
	for range r.IntN(12) {
		c.Retrieved = append(c.Retrieved, pqReqEntry{ID: goodStr(r), ParentID: pick(r, pqStrings[:5]), Score: float32(pick(r, pqFloats[:8]))})
	}
	return c
}

// writerOptions are random writer settings: page sizes small enough that a
// row spans pages, row groups, both data page versions, codecs.
func writerOptions(r *rand.Rand) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.PageBufferSize(pick(r, []int{64, 256, 1024, 1 << 20})),
		parquet.MaxRowsPerRowGroup(int64(pick(r, []int{1, 7, 50, 1000}))),
		parquet.DataPageVersion(pick(r, []int{1, 2})),
	}
	if r.IntN(2) == 0 {
		opts = append(opts, parquet.Compression(&parquet.Snappy))
	}
	return opts
}

func writePQ[T any](t testing.TB, path string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

// pqCase is what a Case holds, kept beyond the callback.
type pqCaseView struct {
	File, ID, Locale, Type, Query, Cluster string
	Line                                   int
	Gold, Relevant, Unknown                []string
	Retrieved                              []casefile.Retrieved
	HasRetrieved                           bool
	Scores                                 map[string]float64
}

func view(c *casefile.Case) pqCaseView {
	v := pqCaseView{File: c.File, Line: c.Line, ID: c.ID, Locale: c.Locale, Type: c.Type, Query: c.Query, Cluster: c.Cluster,
		HasRetrieved: c.HasRetrieved, Scores: c.Scores}
	clone := func(s string) string { return string([]byte(s)) }
	v.ID, v.Locale, v.Type, v.Query, v.Cluster = clone(v.ID), clone(v.Locale), clone(v.Type), clone(v.Query), clone(v.Cluster)
	for _, g := range c.Gold {
		v.Gold = append(v.Gold, clone(g))
	}
	for _, g := range c.Relevant {
		v.Relevant = append(v.Relevant, clone(g))
	}
	for _, u := range c.Unknown {
		v.Unknown = append(v.Unknown, clone(u))
	}
	for _, e := range c.Retrieved {
		e.ID, e.ParentID = clone(e.ID), clone(e.ParentID)
		v.Retrieved = append(v.Retrieved, e)
	}
	return v
}

// readCases reads path's shards with MapCasesWith: by rows (the stream
// itself, which hands its Parquet shards over) or as text (the stream
// hidden behind a plain reader). The error is remapped to the shard.
func readCases(t *testing.T, path string, byRows, inLine bool, workers int) ([]pqCaseView, string) {
	t.Helper()
	s, err := input.OpenSharded(context.Background(), path)
	if err != nil {
		return nil, err.Error()
	}
	defer s.Close()
	var r io.Reader = struct{ io.Reader }{s}
	if byRows {
		r = s
	}
	var got []pqCaseView
	err = casefile.MapCasesWith(context.Background(), r, path, casefile.MapOptions{Workers: workers, StringsInLine: inLine},
		func(c *casefile.Case, v *pqCaseView) error {
			*v = view(c)
			return nil
		},
		func(v *pqCaseView) error {
			got = append(got, *v)
			return nil
		})
	if err != nil {
		return got, s.Remap(err).Error()
	}
	return got, ""
}

// The fast path gives what the text path gives, case for case and error for
// error, over random tables (nulls, empty strings, invalid UTF-8, scores
// that are not finite or -0, rows across pages and row groups, shards).
func TestParquetRowsAsText(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 3))
	dir := t.TempDir()
	fast := 0
	for i := range 80 {
		p := filepath.Join(dir, fmt.Sprint(i))
		shards := 1 + r.IntN(3)
		bad := pick(r, []float64{0, 0, 0.02, 0.2})
		for s := range shards {
			n := r.IntN(40)
			if shards == 1 || r.IntN(8) > 0 {
				n++ // an empty shard is rarer
			}
			sp := filepath.Join(p, fmt.Sprintf("part-%d.parquet", s))
			switch r.IntN(5) {
			case 0:
				rows := make([]pqReqCase, n)
				for j := range rows {
					rows[j] = randReqCase(r)
				}
				writePQ(t, sp, rows, writerOptions(r)...)
			case 1:
				rows := make([]pqScoresCase, n)
				for j := range rows {
					rows[j] = pqScoresCase{ID: goodStr(r), Scores: map[string]float64{"hit": pick(r, pqFloats[:8])}}
				}
				writePQ(t, sp, rows, writerOptions(r)...)
			default:
				rows := make([]pqOptCase, n)
				for j := range rows {
					rows[j] = randOptCase(r, bad)
				}
				writePQ(t, sp, rows, writerOptions(r)...)
			}
		}
		target := p
		if shards == 1 && r.IntN(2) == 0 {
			target = filepath.Join(p, "part-0.parquet")
		}
		inLine := r.IntN(3) > 0
		workers := 1 + r.IntN(3)
		want, wantErr := readCases(t, target, false, inLine, workers)
		got, gotErr := readCases(t, target, true, inLine, workers)
		if wantErr != gotErr {
			// The text path's reader fails on a row's read error (a
			// non-finite float, say) before the lines of its block are
			// parsed, so a later row's read error can win over an earlier
			// row's case error there; the fast path gives the earliest,
			// as MapCasesWith says.
			require.True(t, strings.HasPrefix(wantErr, "failed to read "), "table %d: the error: text %q, rows %q", i, wantErr, gotErr)
			gf, gl := errAt(t, gotErr)
			wf, wl := errAt(t, wantErr)
			require.True(t, gf < wf || gf == wf && gl < wl, "table %d: text %q, rows %q", i, wantErr, gotErr)
			wantErr = gotErr
		}
		if wantErr != "" {
			// A read error drops the text path's block being read (its
			// reader fails before the block's lines are parsed); the fast
			// path gives every row before the error.
			require.LessOrEqual(t, len(want), len(got), "table %d", i)
			got = got[:len(want)]
		}
		require.Len(t, got, len(want), "table %d: the cases", i)
		for j := range want {
			require.Equal(t, want[j], got[j], "table %d: case %d", i, j)
		}
		if wantErr == "" {
			fast++
		}
	}
	require.Greater(t, fast, 25, "most tables read without an error")
}

// Rows of more than 1 MiB of strings (one long string, or two that are
// long together) among short rows, in one batch's arena: the long rows are
// read from their lines, the others by columns, and all as the text path
// reads them.
func TestParquetRowsLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 4))
	rows := make([]pqOptCase, 12)
	for j := range rows {
		rows[j] = randOptCase(r, 0)
	}
	long := func(n int) *string {
		s := strings.Repeat("q", n)
		return &s
	}
	rows[2].Query = long(1<<20 + 1)
	rows[5].Query = long(600 << 10)
	rows[5].Retrieved = append(rows[5].Retrieved, pqOptEntry{ID: long(8), Text: long(600 << 10)})
	rows[8].Query = long(1<<20 - 64)
	p := filepath.Join(t.TempDir(), "large.parquet")
	writePQ(t, p, rows)
	for _, inLine := range []bool{false, true} {
		want, wantErr := readCases(t, p, false, inLine, 2)
		require.Empty(t, wantErr)
		got, gotErr := readCases(t, p, true, inLine, 2)
		require.Empty(t, gotErr)
		require.Equal(t, want, got)
	}
}

// errAt is the shard and line an error names (SHARD:LINE: …, the last
// such): the shards are read in the order of their paths.
func errAt(t *testing.T, msg string) (string, int) {
	m := regexp.MustCompile(`([^ ]*\.parquet):(\d+): `).FindAllStringSubmatch(msg, -1)
	require.NotEmpty(t, m, msg)
	n, err := strconv.Atoi(m[len(m)-1][2])
	require.NoError(t, err)
	return m[len(m)-1][1], n
}

// The fast path is taken (a table of its columns), and not for the others.
func TestParquetRowsTaken(t *testing.T) {
	dir := t.TempDir()
	id := "a"
	writePQ(t, filepath.Join(dir, "cases.parquet"), []pqOptCase{{ID: &id}})
	writePQ(t, filepath.Join(dir, "scores.parquet"), []pqScoresCase{{ID: "a"}})
	for name, want := range map[string]bool{"cases.parquet": true, "scores.parquet": false} {
		s, err := input.OpenSharded(context.Background(), filepath.Join(dir, name))
		require.NoError(t, err)
		err = casefile.MapCasesWith(context.Background(), s, name, casefile.MapOptions{StringsInLine: true},
			func(c *casefile.Case, v *bool) error {
				*v = c.Raw == nil // a case read by rows has no line
				return nil
			},
			func(v *bool) error {
				require.Equal(t, want, *v, name)
				return nil
			})
		require.NoError(t, err)
		n, err := s.Read(make([]byte, 10))
		require.Equal(t, 0, n)
		require.ErrorIs(t, err, io.EOF)
		require.NoError(t, s.Close())
	}
}

// A cancelled context stops the fast path.
func TestParquetRowsCancel(t *testing.T) {
	dir := t.TempDir()
	rows := make([]pqReqCase, 5000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		rows[i] = pqReqCase{ID: fmt.Sprint(i), Query: goodStr(r), Retrieved: []pqReqEntry{{ID: "c1", Score: 0.5}}}
	}
	p := filepath.Join(dir, "c.parquet")
	writePQ(t, p, rows, parquet.MaxRowsPerRowGroup(100))
	s, err := input.OpenSharded(context.Background(), p)
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = casefile.MapCasesWith(ctx, s, p, casefile.MapOptions{StringsInLine: true},
		func(*casefile.Case, *int) error { return nil },
		func(*int) error {
			if n++; n == 100 {
				cancel()
			}
			return nil
		})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, n, 5000)
}

// FuzzParquetCases reads arbitrary bytes after the magic bytes as a Parquet
// cases file by rows and as text (seeded with small valid tables of both
// shapes, pages and row groups small): no panic, no hang, an error is an
// error, and when both paths read the file they give the same cases.
func FuzzParquetCases(f *testing.F) {
	dir := f.TempDir()
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("seed%d.parquet", i))
		opts := []parquet.WriterOption{parquet.PageBufferSize(128), parquet.MaxRowsPerRowGroup(3), parquet.DataPageVersion(1 + i%2)}
		if i%2 == 0 {
			rows := make([]pqOptCase, 4)
			for j := range rows {
				rows[j] = randOptCase(r, 0.1)
			}
			writePQ(f, p, rows, opts...)
		} else {
			rows := make([]pqReqCase, 4)
			for j := range rows {
				rows[j] = randReqCase(r)
			}
			writePQ(f, p, rows, opts...)
		}
		inputtest.AddFileSeed(f, p)
	}
	p := filepath.Join(dir, "seed-dict.parquet") // dictionary-encoded retrieved ids
	rows := make([]pqDictCase, 6)
	for j := range rows {
		id, parent := goodStr(r), goodStr(r)
		rows[j] = pqDictCase{ID: fmt.Sprint(j), Gold: []string{"a"}, Retrieved: []pqDictEntry{{ID: &id}, {ID: &parent, ParentID: &id}}}
	}
	writePQ(f, p, rows, parquet.PageBufferSize(128), parquet.MaxRowsPerRowGroup(4))
	inputtest.AddFileSeed(f, p)
	known := map[string]uint64{"a": 1, "c1": 2, "doc-7": 3, "日本": 4}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := inputtest.ParquetFuzzFile(t, b)
		if p == "" {
			return
		}
		want, wantErr := readCases(t, p, false, true, 2)
		got, gotErr := readCases(t, p, true, true, 2)
		if wantErr == "" && gotErr == "" {
			require.Equal(t, want, got)
			// The same cases with the dictionaries' ids keyed, and their
			// keys the identities'.
			keyed, err := readKeyed(t, p, &testKeyer{known: known}, 2)
			require.Empty(t, err)
			require.Len(t, keyed, len(want))
			for j, c := range keyed {
				require.Equal(t, want[j], c.pqCaseView)
				if c.keys != nil {
					require.Len(t, c.keys, len(c.Retrieved))
					for i, e := range c.Retrieved {
						require.Equal(t, known[e.Identity()], c.keys[i])
					}
				}
			}
		}
	})
}
