package trecfile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestReadQrelsFormats(t *testing.T) {
	trec := "q1 0 d1 3\nq1 0 d2 0\n\nq2\t0\td9\t1\r\nq1 0 d3 2\n"
	jsonl := `{"query_id":"q1","doc_id":"d1","relevance":3}
{"query_id":"q1","doc_id":"d2","relevance":0}
{"query_id":"q2","doc_id":"d9","relevance":1}
{"query_id":"q1","doc_id":"d3","relevance":2}
`
	for name, content := range map[string]string{"trec": trec, "jsonl": jsonl} {
		t.Run(name, func(t *testing.T) {
			q, err := ReadQrels(context.Background(), writeTemp(t, "qrels", content))
			require.NoError(t, err)
			assert.Equal(t, 2, q.NumQueries())
			assert.Len(t, q.jRel, 4)
			i, ok := q.QueryIndex("q1")
			require.True(t, ok)
			assert.Equal(t, []int{1, 0, 1, 1}, q.Levels(i))
			for doc, want := range map[string]int{"d1": 3, "d2": 0, "d3": 2} {
				rel, ok := q.Relevance(i, doc)
				assert.True(t, ok, doc)
				assert.Equal(t, want, rel, doc)
			}
			_, ok = q.Relevance(i, "d9") // judged for q2 only
			assert.False(t, ok)
			_, ok = q.QueryIndex("q3")
			assert.False(t, ok)
		})
	}
}

// A relevance written with leading zeros is the integer they pad: TREC and MS
// MARCO files are read with strconv's rules, so "0000000003" is 3 (it was refused
// as not an integer once it had more than 9 digits, leading zeros included).
func TestReadQrelsLeadingZeros(t *testing.T) {
	q, err := ParseQrels(context.Background(), strings.NewReader("q1 0 d1 0000000003\nq1 0 d2 -000000000001\nq1 0 d3 +0000000000\n"), "qrels")
	require.NoError(t, err)
	for doc, want := range map[string]int{"d1": 3, "d2": -1, "d3": 0} {
		rel, ok := q.Relevance(0, doc)
		require.True(t, ok, doc)
		assert.Equal(t, want, rel, doc)
	}
}

func TestReadQrelsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"relevance above range", "q1 0 d1 1\nq1 0 d2 128\n", ":2: relevance 128 is outside the accepted range -128..127"},
		{"relevance below range", "q1 0 d1 -129\n", ":1: relevance -129 is outside the accepted range -128..127"},
		{"not an integer", "q1 0 d1 1\n\nq1 0 d2 x\n", `:3: relevance "x" is not an integer`},
		{"ten digits above range", "q1 0 d1 -1234567890\n", ":1: relevance -1234567890 is outside the accepted range -128..127"},
		{"too few fields", "q1 0 d1\n", `:1: malformed qrels line: want 4 fields "qid iter docid rel", got 3`},
		{"BEIR qrels TSV", "\nquery-id\tcorpus-id\tscore\nq1\td1\t1\n", ":2: a BEIR qrels TSV (header \"query-id corpus-id score\"), not TREC qrels: convert it first with `retrieval-gate import --in "},
		{"too many fields", "q1 0 d1 1 extra\n", ":1: malformed qrels line: want 4 fields"},
		{"duplicate", "q1 0 d1 1\nq2 0 d1 1\nq1 0 d2 1\nq1 0 d1 2\n", `:4: duplicate judgment of document "d1" for query "q1" (first on line 1)`},
		{"duplicate after blank lines", "\nq1 0 d1 1\n\n\nq2 0 d1 1\nq1 0 d2 1\n\nq1 0 d1 2\nq1 0 d3 1\n", `:8: duplicate judgment of document "d1" for query "q1" (first on line 2)`},
		{"empty", "\n\n", ": no judgments"},
		{"json malformed", `{"query_id":"q1","doc_id":"d1","relevance":1}` + "\n{\n", ":2: malformed JSON"},
		{"json missing relevance", `{"query_id":"q1","doc_id":"d1"}`, `:1: judgment has no "relevance"`},
		{"json relevance fraction", `{"query_id":"q1","doc_id":"d1","relevance":1.5}`, `:1: "relevance" must be an integer -128..127, got 1.5`},
		{"json relevance above range", `{"query_id":"q1","doc_id":"d1","relevance":200}`, `:1: relevance 200 is outside the accepted range -128..127`},
		{"json relevance below range", `{"query_id":"q1","doc_id":"d1","relevance":-1e3}`, `:1: relevance -1e3 is outside the accepted range -128..127`},
		{"json not object", `{"query_id":"q1","doc_id":"d1","relevance":1}` + "\n[1]\n", ":2: a judgment must be a JSON object"},
		{"json bad id", `{"query_id":true,"doc_id":"d1","relevance":1}`, `:1: "query_id" must be a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "qrels.txt", tc.content)
			_, err := ReadQrels(context.Background(), p)
			require.Error(t, err)
			var de *input.Error
			require.ErrorAs(t, err, &de, "%v", err)
			assert.Contains(t, err.Error(), p+tc.want)
		})
	}
}

func readRunString(t *testing.T, content string, k int, opt RunOptions) (*Run, error) {
	t.Helper()
	return ReadRun(context.Background(), writeTemp(t, "run.txt", content), k, opt)
}

func TestReadTRECRunRanking(t *testing.T) {
	// Scores descending, ties by docid descending (trec_eval); the rank column is
	// ignored; a repeated docid keeps its best-ranked occurrence; unsorted input.
	content := strings.Join([]string{
		"q2 Q0 a 1 1.0 t",
		"q1 Q0 dA 9 0.5 t",
		"q1 Q0 dB 1 0.5 t",
		"q1 Q0 dC 3 0.9 t",
		"q1 Q0 dA 2 0.95 t", // better occurrence of dA
		"q1 Q0 dC 4 0.1 t",  // worse occurrence of dC: dropped
		"",
		"q1\tQ0\tdD\t5\t-1e3\tt\r",
		"q1 Q0 dE 6 0.5 t",
	}, "\n") + "\n"
	for _, opt := range []RunOptions{{}, {Workers: 3, ChunkSize: 7}, {Workers: 1, ChunkSize: 20}} {
		run, err := readRunString(t, content, 10, opt)
		require.NoError(t, err)
		assert.Equal(t, "trec", run.Format)
		require.Len(t, run.Queries, 2)
		assert.Equal(t, RunQuery{ID: "q1", Docs: []string{"dA", "dC", "dE", "dB", "dD"}}, run.Queries[0])
		assert.Equal(t, RunQuery{ID: "q2", Docs: []string{"a"}}, run.Queries[1])

		top2, err := readRunString(t, content, 2, opt)
		require.NoError(t, err)
		assert.Equal(t, []string{"dA", "dC"}, top2.Queries[0].Docs)
	}
}

func TestReadTRECRunErrors(t *testing.T) {
	good := "q1 Q0 d1 1 0.5 t\n"
	lines := strings.Repeat(good, 50)
	for _, tc := range []struct {
		name, content, want string
	}{
		{"five fields", lines + "q1 Q0 d2 2 0.4\n" + lines, ":51: malformed run line: want 6 fields \"qid Q0 docid rank score tag\", got 5"},
		{"seven fields", "q1 Q0 d2 2 0.4 t x\n", ":1: malformed run line: want 6 fields"},
		{"bad score", lines + lines + "q1 Q0 d2 2 high t\n", `:101: score "high" is not a finite decimal number`},
		{"nan score", "q1 Q0 d2 2 NaN t\n", `:1: score "NaN" is not a finite decimal number`},
		{"first of two errors", lines + "x\n" + lines + "y\n", ":51: malformed run line"},
		{"no newline at end", lines + "q1 Q0 d2 2 0.4", ":51: malformed run line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, opt := range []RunOptions{{}, {Workers: 2, ChunkSize: 64}, {Workers: 4, ChunkSize: 5}} {
				p := writeTemp(t, "run.txt", tc.content)
				_, err := ReadRun(context.Background(), p, 10, opt)
				require.Error(t, err)
				var de *input.Error
				require.ErrorAs(t, err, &de)
				assert.Contains(t, err.Error(), p+tc.want, "%+v", opt)

				_, err = ParseTRECRun(context.Background(), strings.NewReader(tc.content), "seq", 10)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "seq"+tc.want)
			}
		})
	}
	_, err := readRunString(t, "\n \n", 10, RunOptions{})
	assert.ErrorContains(t, err, "empty run")
}

func TestReadCasesRun(t *testing.T) {
	content := `{"id":"q1","retrieved":["a#1",{"id":"b#1","parent_id":"b"},{"id":"a#2","parent_id":"a#1"},"c","d"]}
{"id":"q2","retrieved":[]}
`
	run, err := readRunString(t, content, 3, RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "cases", run.Format)
	assert.Equal(t, []RunQuery{{ID: "q1", Docs: []string{"a#1", "b", "c"}}, {ID: "q2", Docs: []string{}}}, run.Queries)

	_, err = readRunString(t, content+`{"id":"q1","retrieved":[]}`+"\n", 3, RunOptions{})
	require.ErrorContains(t, err, `:3: duplicate case id "q1" (first on line 1)`)
	_, err = readRunString(t, `{"id":"q1","scores":{"x":1}}`+"\n", 3, RunOptions{})
	assert.ErrorContains(t, err, `:1: case "q1" has no "retrieved" list to rank`)
}

func TestTrecScoreMatchesStrconv(t *testing.T) {
	// Finite decimals: exactly strconv's value.
	for _, s := range []string{"0", "-0", "1", "0.5", "99.5833", "-12.25", "+3.125", ".5", "5.", "123456789012345",
		"1234567890123456789", "0.1000000000000000055511151231257827", "1e3", "-2.5E-3", "0.000000000000000000000001", "1e-400"} {
		got, ok := trecScore([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		assert.True(t, ok, s)
		assert.Equal(t, want, got, s)
	}
	// One rule: anything but a finite decimal is refused, also what strconv accepts.
	for _, s := range []string{"", "-", ".", "1.2.3", "abc", "NaN", "nan", "1,5", "Inf", "-inf", "infinity",
		"1e400", "-1e400", "0x1p3", "0x1p-2", "1_000", "1e", "1e+", ".e1", "+.5e"} {
		_, ok := trecScore([]byte(s))
		assert.False(t, ok, s)
	}
}

// refTopK is a naive reference: every line parsed with strings.Fields, all
// occurrences kept, best occurrence per docid, sorted, cut at k.
func refTopK(content string, k int) (map[string][]string, bool) {
	type ent struct {
		s float64
		d string
	}
	all := map[string]map[string]float64{}
	for _, ln := range strings.Split(content, "\n") {
		fs := strings.FieldsFunc(ln, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 6 {
			return nil, false
		}
		s, ok := trecScore([]byte(fs[4]))
		if !ok {
			return nil, false
		}
		if all[fs[0]] == nil {
			all[fs[0]] = map[string]float64{}
		}
		if old, ok := all[fs[0]][fs[2]]; !ok || s > old {
			all[fs[0]][fs[2]] = s
		}
	}
	out := map[string][]string{}
	for q, docs := range all {
		var es []ent
		for d, s := range docs {
			es = append(es, ent{s, d})
		}
		sort.Slice(es, func(i, j int) bool {
			if es[i].s != es[j].s {
				return es[i].s > es[j].s
			}
			return es[i].d > es[j].d
		})
		var ids []string
		for _, e := range es[:min(k, len(es))] {
			ids = append(ids, e.d)
		}
		out[q] = ids
	}
	return out, true
}

func FuzzReadTRECRun(f *testing.F) {
	f.Add("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 3 t\n", uint8(2), uint8(7))
	f.Add("q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.7 t\r\n\n", uint8(1), uint8(1))
	f.Add("q1 Q0 d1 1 x t\n", uint8(3), uint8(3))
	f.Add("a b c d 1e308 f\na b c d -1e308 f\na b e d 1e309 f", uint8(2), uint8(5))
	f.Fuzz(func(t *testing.T, content string, k, chunk uint8) {
		kk := int(k%5) + 1
		const p = "run"
		ctx := context.Background()
		par, perr := parseTRECRunAt(ctx, bytes.NewReader([]byte(content)), int64(len(content)), p, kk, RunOptions{Workers: 3, ChunkSize: int(chunk%16) + 1})
		seq, serr := ParseTRECRun(ctx, strings.NewReader(content), p, kk)
		if (perr == nil) != (serr == nil) {
			t.Fatalf("parallel err %v, sequential err %v", perr, serr)
		}
		if perr != nil {
			assert.Equal(t, serr.Error(), perr.Error())
			return
		}
		assert.Equal(t, seq.Queries, par.Queries)
		want, ok := refTopK(content, kk)
		require.True(t, ok, "reference rejects what the reader accepts")
		got := map[string][]string{}
		for _, q := range par.Queries {
			got[q.ID] = q.Docs
		}
		assert.Equal(t, want, got)
		assert.True(t, slices.IsSortedFunc(par.Queries, func(a, b RunQuery) int { return strings.Compare(a.ID, b.ID) }))
	})
}

func FuzzReadQrels(f *testing.F) {
	f.Add("q1 0 d1 3\nq1 0 d2 0\n")
	f.Add(`{"query_id":"q1","doc_id":"d1","relevance":2}` + "\n")
	f.Add("q1 0 d1 1\nq1 0 d1 2\n")
	f.Add(`{"query_id":1,"doc_id":2.5e3,"relevance":3.0}`)
	f.Add("q1 0 d1 -1\nq1 0 d2 127\nq2 0 d1 -128\n")
	f.Fuzz(func(t *testing.T, content string) {
		q, err := ParseQrels(context.Background(), strings.NewReader(content), "qrels")
		ref, refLine, isTREC := refQrels(content)
		if err != nil {
			var de *input.Error
			require.ErrorAs(t, err, &de, "not an input error")
			assert.Equal(t, "qrels", de.File)
			require.True(t, de.Line >= 0 && de.Line <= strings.Count(content, "\n")+1, "line %d: %v", de.Line, err)
			if isTREC && refLine >= 0 {
				// Every line a reference reading takes before refLine is a judgment.
				require.Equal(t, refLine, de.Line, "the reference refuses line %d, the reader %v", refLine, err)
			}
			if isTREC && refLine == -1 {
				t.Fatalf("the reference reads %d judgments, the reader refuses: %v", len(ref), err)
			}
			return
		}
		if isTREC {
			require.Equal(t, -1, refLine, "the reader accepts what the reference refuses at line %d", refLine)
			queries := map[string]bool{}
			for k, rel := range ref {
				queries[k[0]] = true
				i, ok := q.QueryIndex(k[0])
				require.True(t, ok, "query %q", k[0])
				got, ok := q.Relevance(i, k[1])
				require.True(t, ok, "document %q of query %q", k[1], k[0])
				require.Equal(t, rel, got)
			}
			require.Equal(t, len(queries), q.NumQueries())
			require.Len(t, q.jRel, len(ref))
		}
		total := 0
		lo, hi := q.Scale()
		require.Len(t, q.Levels(0), max(hi, 0)+1)
		require.Equal(t, max(hi, 0), q.MaxLevel())
		for _, r := range q.jRel {
			require.True(t, int(r) >= lo && int(r) <= hi)
			if r < 0 {
				total++ // a negative judgment is in no level
			}
		}
		for i := range q.NumQueries() {
			lv := q.Levels(i)
			for _, c := range lv {
				total += c
			}
			j, ok := q.QueryIndex(q.QueryID(i))
			require.True(t, ok)
			require.Equal(t, i, j)
		}
		assert.Equal(t, len(q.jRel), total)
		seen := 0
		for i := range q.NumQueries() {
			for _, j := range q.perm[q.qStart[i]:q.qStart[i+1]] {
				rel, ok := q.Relevance(i, string(q.doc(j)))
				require.True(t, ok)
				require.Equal(t, int(q.jRel[j]), rel)
				seen++
			}
		}
		assert.Equal(t, len(q.jRel), seen)
	})
}

func TestReadTRECRunLargeK(t *testing.T) {
	var b strings.Builder
	for q := range 3 {
		for d := range 150 {
			fmt.Fprintf(&b, "q%d Q0 d%03d %d %d t\n", q, d, d+1, d%70)
		}
	}
	for _, k := range []int{1, 64, 65, 100, 1000} {
		run, err := readRunString(t, b.String(), k, RunOptions{Workers: 2, ChunkSize: 999})
		require.NoError(t, err)
		want, ok := refTopK(b.String(), k)
		require.True(t, ok)
		for _, q := range run.Queries {
			assert.Equal(t, want[q.ID], q.Docs, "k=%d %s", k, q.ID)
		}
	}
}

// TestQrelsWideScale reads relevance outside 0..3 in both formats: a negative
// judgment is judged but in no level count (trec_eval), a level above 3 keeps
// its value, and the scale found is reported.
func TestQrelsWideScale(t *testing.T) {
	for name, content := range map[string]string{
		"trec": "q1 0 d1 4\nq1 0 d2 -1\nq1 0 d3 1\nq2 0 d1 0\nq2 0 d9 127\nq3 0 d1 -128\n",
		"jsonl": `{"query_id":"q1","doc_id":"d1","relevance":4}` + "\n" +
			`{"query_id":"q1","doc_id":"d2","relevance":-1}` + "\n" +
			`{"query_id":"q1","doc_id":"d3","relevance":1.0}` + "\n" +
			`{"query_id":"q2","doc_id":"d1","relevance":0}` + "\n" +
			`{"query_id":"q2","doc_id":"d9","relevance":127}` + "\n" +
			`{"query_id":"q3","doc_id":"d1","relevance":-128}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			q, err := ParseQrels(context.Background(), strings.NewReader(content), "q")
			require.NoError(t, err)
			lo, hi := q.Scale()
			assert.Equal(t, -128, lo)
			assert.Equal(t, 127, hi)
			assert.Equal(t, 127, q.MaxLevel())
			want1 := make([]int, 128)
			want1[1], want1[4] = 1, 1
			assert.Equal(t, want1, q.Levels(0))
			assert.Equal(t, make([]int, 128), q.Levels(2)) // only a negative judgment
			for doc, want := range map[string]int{"d1": 4, "d2": -1, "d3": 1} {
				rel, ok := q.Relevance(0, doc)
				require.True(t, ok, doc)
				assert.Equal(t, want, rel, doc)
			}
			rel, ok := q.Relevance(2, "d1")
			require.True(t, ok)
			assert.Equal(t, -128, rel)
		})
	}
	q, err := ParseQrels(context.Background(), strings.NewReader("q1 0 d1 -2\n"), "q")
	require.NoError(t, err)
	lo, hi := q.Scale()
	assert.Equal(t, [3]int{-2, -2, 0}, [3]int{lo, hi, q.MaxLevel()})
	assert.Equal(t, []int{0}, q.Levels(0))
}

// Levels (test helper) is AppendLevels into a new slice.
func (q *Qrels) Levels(i int) []int { return q.AppendLevels(nil, i) }

// onlyReader hides every method of a reader but Read (a pipe's view).
type onlyReader struct{ r *strings.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestReadRunFrom: an open run reads as its file does, whatever the reader
// offers: an *os.File (positioned reads, parallel ranges), a *bytes.Reader
// (positioned reads and a Size) and a plain reader read once (detection from
// the bytes it has read, a BOM and blank lines before the first record).
func TestReadRunFrom(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"trec", "\xEF\xBB\xBF\n\n  q2 Q0 d1 1 0.5 t\nq1 Q0 d2 1 0.9 t\nq1 Q0 d3 2 0.8 t\nq1 Q0 d4 3 0.1 t\n"},
		{"cases", "\xEF\xBB\xBF\n{\"id\":\"q1\",\"query\":\"x\",\"retrieved\":[\"d1\",\"d2\",\"d3\"]}\n{\"id\":\"q2\",\"query\":\"y\",\"retrieved\":[{\"id\":\"c1\",\"parent_id\":\"d9\"}]}\n"},
		{"long blank prefix", strings.Repeat(" \n", 5000) + "q1 Q0 d1 1 1 t\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "run", tc.content)
			want, err := ReadRun(context.Background(), path, 2, RunOptions{ChunkSize: 16})
			require.NoError(t, err)
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			for _, r := range []io.Reader{f, bytes.NewReader([]byte(tc.content)), onlyReader{strings.NewReader(tc.content)}} {
				got, err := ReadRunFrom(context.Background(), r, path, 2, RunOptions{ChunkSize: 16})
				require.NoError(t, err, "%T", r)
				assert.Equal(t, want, got, "%T", r)
			}
		})
	}
	for _, r := range []io.Reader{bytes.NewReader([]byte(" \n\t")), onlyReader{strings.NewReader("\xEF\xBB\xBF \n")}} {
		_, err := ReadRunFrom(context.Background(), r, "x.run", 2, RunOptions{})
		require.EqualError(t, err, "x.run: empty run", "%T", r)
	}
}

// FuzzReadRunFrom: an open run reads the same whatever the reader offers:
// positioned reads with a Size (a *bytes.Reader: detection without moving the
// offset, a TREC run in parallel ranges) or Read alone (detection from the
// bytes read, then the same bytes parsed in order); the same run, or the same
// error.
func FuzzReadRunFrom(f *testing.F) {
	f.Add("q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 3 t\n", uint8(2))
	f.Add("\xEF\xBB\xBF \n{\"id\":\"q1\",\"retrieved\":[\"a\",\"b\"]}\n", uint8(1))
	f.Add("\xEF\xBB", uint8(1))
	f.Add(" \n\t", uint8(1))
	f.Fuzz(func(t *testing.T, content string, k uint8) {
		kk := int(k%5) + 1
		ctx := context.Background()
		at, aerr := ReadRunFrom(ctx, bytes.NewReader([]byte(content)), "run", kk, RunOptions{Workers: 2, ChunkSize: 7})
		seq, serr := ReadRunFrom(ctx, onlyReader{strings.NewReader(content)}, "run", kk, RunOptions{Workers: 2, ChunkSize: 7})
		if (aerr == nil) != (serr == nil) {
			t.Fatalf("positioned err %v, plain err %v", aerr, serr)
		}
		if aerr != nil {
			assert.Equal(t, serr.Error(), aerr.Error())
			return
		}
		assert.Equal(t, at, seq)
	})
}

// refQrels reads TREC qrels apart from ParseQrels: lines at '\n', a BOM dropped
// from the first, fields at runs of ASCII blanks, four fields "qid iter docid
// rel" with rel a decimal integer (strconv) in -128..127, no judgment twice. It
// returns the judgments and -1, or the line of the first error (0 for no
// judgments; -2 for a duplicate, which the reader reports at one of its lines
// once the whole file is read). isTREC is false for a JSON-lines file.
func refQrels(content string) (ref map[[2]string]int, line int, isTREC bool) {
	ref = map[[2]string]int{}
	blank := func(r rune) bool { return r < 0x80 && strings.ContainsRune(" \t\r\n\v\f", r) }
	dup := false
	for i, l := range strings.Split(strings.TrimPrefix(content, "\ufeff"), "\n") {
		f := strings.FieldsFunc(l, blank)
		if len(f) == 0 {
			continue
		}
		if len(ref) == 0 && !dup && f[0][0] == '{' {
			return nil, 0, false
		}
		if len(f) != 4 {
			return nil, i + 1, true
		}
		rel, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || rel < MinRelevance || rel > MaxRelevance {
			return nil, i + 1, true
		}
		k := [2]string{f[0], f[2]}
		if _, ok := ref[k]; ok {
			dup = true
		}
		ref[k] = int(rel)
	}
	switch {
	case dup:
		return nil, -2, true
	case len(ref) == 0:
		return nil, 0, true
	}
	return ref, -1, true
}
