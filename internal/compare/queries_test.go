package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

func TestReadQueries(t *testing.T) {
	// generate's keys, a run's retrieved list and a key of another tool are
	// read as the cases reader reads them, and not kept.
	in := "\uFEFF" + `{"id":"q1","query":"How do I reset my password?","locale":"en","cluster":"card-a","must_cite_one_of":["a"],"generator":{"model":"m"}}` + "\r\n" +
		"\n" +
		`{"id":"q2","query":"Como redefinir a senha?","locale":"pt-BR","retrieved":[{"id":"a","score":1}],"other_tool":{"x":[1,2]}}` + "\n" +
		`{"id":"q3"}`
	got, err := compare.ReadQueries(context.Background(), strings.NewReader(in), "cases.jsonl")
	require.NoError(t, err)
	assert.Equal(t, compare.Queries{
		"q1": {Text: "How do I reset my password?", Locale: "en", Cluster: "card-a"},
		"q2": {Text: "Como redefinir a senha?", Locale: "pt-BR"},
		"q3": {},
	}, got)

	// A queries TSV (MS MARCO, BEIR), as judge --queries reads it.
	got, err = compare.ReadQueries(context.Background(), strings.NewReader("\uFEFF\n1185869\t)what was the immediate impact of the success of the manhattan project?\r\n\n 42 \t what is rba \n"), "queries.tsv")
	require.NoError(t, err)
	assert.Equal(t, compare.Queries{"1185869": {Text: ")what was the immediate impact of the success of the manhattan project?"}, "42": {Text: "what is rba"}}, got)

	for _, c := range []struct{ in, msg string }{
		{`{"id":"q1","query":"a"}` + "\n" + `{"id":"q1","query":"b"}` + "\n", `cases.jsonl:2: duplicate query id "q1" (first at line 1)`},
		{`{"id":"q1"}` + "\n" + `{"query":"no id"}` + "\n", `cases.jsonl:2: case has no "id"`},
		{`{"id":"q1","query":3}` + "\n", `cases.jsonl:1: `},
		{"q1 0 d1 1\n", `cases.jsonl:1: want the cases JSONL (a line starting with '{') or TSV lines "qid<TAB>query text"`},
		{"q1\ta\nq2\t\n", `cases.jsonl:2: want the cases JSONL`},
		{"q1\ta\n\nq1\tb\n", `cases.jsonl:3: duplicate query id "q1" (first at line 1)`},
		{"", `cases.jsonl: no queries: want the cases JSONL`},
		{" \n\n", `cases.jsonl: no queries: want the cases JSONL`},
	} {
		_, err := compare.ReadQueries(context.Background(), strings.NewReader(c.in), "cases.jsonl")
		require.ErrorContains(t, err, c.msg, c.in)
		var ie *input.Error
		require.ErrorAs(t, err, &ie, "an error at a line of the file")
	}
	// A record longer than the cases reader's cap is refused, not held.
	long := `{"id":"q1","query":"` + strings.Repeat("x", casefile.MaxLine) + `"}` + "\n"
	_, err = compare.ReadQueries(context.Background(), strings.NewReader(long), "cases.jsonl")
	require.ErrorContains(t, err, "cases.jsonl:1: line longer than 64 MiB")
	_, err = compare.ReadQueries(context.Background(), strings.NewReader("q0\tfine\nq1\t"+strings.Repeat("x", casefile.MaxLine)+"\n"), "q.tsv")
	require.EqualError(t, err, "q.tsv:2: line longer than 64 MiB")
}

func FuzzReadQueries(f *testing.F) {
	f.Add([]byte(`{"id":"q1","query":"a","locale":"en","cluster":"c"}` + "\n"))
	f.Add([]byte(`{"id":"q1","query":"a"}` + "\n" + `{"id":"q1"}`))
	f.Add([]byte("{\"id\":\"q\\u00e9\",\"query\":\"\\n::error::x\"}\r\n\n"))
	f.Add([]byte("q1\tquery one\r\nq2\t::warning::x\n"))
	f.Add([]byte("\ufeff q3 \t a\tb \r\r\n\n q4\tc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		qs, err := compare.ReadQueries(context.Background(), bytes.NewReader(b), "f.jsonl")
		if err != nil {
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			return
		}
		// Each query is a case of the file, read as the cases reader reads it
		// (or a line of a TSV: id and text).
		if h := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n"); len(h) > 0 && h[0] != '{' {
			// Every line that holds something is "id<TAB>text" (each
			// trimmed, its '\r's cut, a BOM cut from the first), read in
			// full: the same queries, none more.
			want := compare.Queries{}
			for i, l := range strings.Split(string(b), "\n") {
				l = strings.TrimRight(l, "\r")
				if i == 0 {
					l = strings.TrimPrefix(l, "\uFEFF")
				}
				if strings.TrimSpace(l) == "" {
					continue
				}
				id, text, ok := strings.Cut(l, "\t")
				require.True(t, ok, "accepted line %d %q", i+1, l)
				_, dup := want[strings.TrimSpace(id)]
				require.False(t, dup, "accepted a duplicate id at line %d", i+1)
				want[strings.TrimSpace(id)] = compare.Query{Text: strings.TrimSpace(text)}
			}
			assert.Equal(t, want, qs)
			return
		}
		n := 0
		require.NoError(t, casefile.StreamCases(context.Background(), bytes.NewReader(b), "f.jsonl", func(c *casefile.Case) error {
			n++
			assert.Equal(t, compare.Query{Text: c.Query, Locale: c.Locale, Cluster: c.Cluster}, qs[c.ID])
			return nil
		}))
		assert.Len(t, qs, n)
	})
}

// The cases' cluster keys (compare --queries) count as --clusters: the same 20
// families of TestCompareClusters given by their cases give the same
// statistics; --clusters wins where it lists a query; the queries reach the
// result; and with human labels the corrected estimates are computed over
// the cases' clusters.
func TestCompareQueriesClusters(t *testing.T) {
	var ql, cases, cl strings.Builder
	var a, b []trecfile.RunQuery
	for f := range 20 {
		for j := range 3 {
			id := fmt.Sprintf("q%02d-%d", f, j)
			fmt.Fprintf(&ql, "%s 0 %s-g 3\n%s 0 %s-x 0\n", id, id, id, id)
			fmt.Fprintf(&cases, `{"id":%q,"query":"question %d of card %d","locale":"en","cluster":"card-%02d"}`+"\n", id, j, f, f)
			fmt.Fprintf(&cl, "%s card-%02d\n", id, f)
			a = append(a, trecfile.RunQuery{ID: id, Docs: []string{id + "-x", id + "-g"}})
			docs := []string{id + "-x", id + "-g"}
			if f < 4 {
				docs = []string{id + "-g", id + "-x"}
			}
			b = append(b, trecfile.RunQuery{ID: id, Docs: docs})
		}
	}
	q := qrels(t, ql.String())
	in := []compare.Input{{Name: "dense", Run: run("a.run", a...)}, {Name: "hybrid", Run: run("b.run", b...)}}
	qs, err := compare.ReadQueries(context.Background(), strings.NewReader(cases.String()), "cases.jsonl")
	require.NoError(t, err)
	cls, err := compare.ReadClusters(context.Background(), strings.NewReader(cl.String()), "clusters.tsv")
	require.NoError(t, err)

	o := opts()
	o.K = 1
	o.Clusters, o.ClustersFile = cls, "clusters.tsv"
	byFile, err := compare.Compare(q, in, o)
	require.NoError(t, err)

	o = opts()
	o.K = 1
	o.Queries, o.QueriesFile = qs, "cases.jsonl"
	byCases, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	require.NotNil(t, byCases.Clusters)
	assert.Equal(t, compare.Clusters{File: "cases.jsonl", Queries: 60, Clusters: 20, Listed: 60}, *byCases.Clusters)
	assert.Equal(t, byFile.Paired, byCases.Paired)
	assert.Equal(t, qs, byCases.Queries)
	assert.Equal(t, "question 1 of card 3", byCases.Queries["q03-1"].Text)

	// --clusters wins: it puts the 60 queries in 60 clusters of their own.
	own := map[string]string{}
	for id := range qs {
		own[id] = id
	}
	o.Clusters, o.ClustersFile = own, "own.tsv"
	won, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	assert.Equal(t, compare.Clusters{File: "own.tsv", Queries: 60, Clusters: 60, Listed: 60}, *won.Clusters)

	// Cases without a cluster key: no clustering, the text still there.
	plain := compare.Queries{}
	for id, x := range qs {
		plain[id] = compare.Query{Text: x.Text, Locale: x.Locale}
	}
	o = opts()
	o.K = 1
	o.Queries, o.QueriesFile = plain, "cases.jsonl"
	res, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	assert.Nil(t, res.Clusters)
	assert.Equal(t, "question 0 of card 0", res.Queries["q00-0"].Text)

	// Clusters from the cases and human labels: the corrected estimates are
	// computed over the cases' clusters (two labelled queries in two cards).
	o.Queries = qs
	o.HumanSheet = sheet(t, "q00-0,q00-0-g,3\nq00-0,q00-0-x,0\nq01-1,q01-1-g,0\nq01-1,q01-1-x,0\n")
	res, err = compare.Compare(q, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Clusters)
	assert.Equal(t, "cases.jsonl", res.Clusters.File)
	require.NotNil(t, res.Human)
	assert.Equal(t, 2, res.Human.N)
	assert.Equal(t, 2, res.Human.Clusters)
	hit := res.Human.Means[1][metrics.QueryIndex("hit_at_k")] // hybrid: a hit on q00-0 under human grades, none on q01-1
	assert.Equal(t, metrics.MethodPPIClusterJackknife, hit.Method)
	assert.Equal(t, 2, hit.Clusters)
	assert.True(t, hit.Interval().Unreliable, "2 labelled clusters")
}

// compare.Run reads In.Queries (a reader: the front end opens the file or
// hands evaluate's cases on) into the result, and names it in its errors.
func TestRunReadsQueries(t *testing.T) {
	o := opts()
	in := func(cases string) compare.In {
		return compare.In{Qrels: compare.Reader{Name: "q.trec", R: strings.NewReader("q1 0 d1 3\nq2 0 d2 2\n")},
			Runs:    []compare.RunReader{{Strategy: "a", Reader: compare.Reader{Name: "a.run", R: strings.NewReader("q1 Q0 d1 1 1 a\nq2 Q0 d2 1 1 a\n")}}},
			Queries: compare.Reader{Name: "cases.jsonl", R: strings.NewReader(cases)}}
	}
	res, err := compare.Run(context.Background(), in(`{"id":"q1","query":"first"}`+"\n"+`{"id":"q2","query":"second","locale":"de"}`+"\n"), o)
	require.NoError(t, err)
	assert.Equal(t, compare.Queries{"q1": {Text: "first"}, "q2": {Text: "second", Locale: "de"}}, res.Queries)
	assert.Nil(t, res.Clusters)
	assert.Nil(t, o.Queries, "the caller's options are not touched")

	_, err = compare.Run(context.Background(), in(`{"id":"q1"}`+"\n"+`{"id":"q1"}`+"\n"), o)
	require.EqualError(t, err, `failed to read the queries: cases.jsonl:2: duplicate query id "q1" (first at line 1)`)
}
