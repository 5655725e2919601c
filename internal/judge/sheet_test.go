package judge_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// samplePool is a pool of 60 "en" queries and 40 "de" queries, three documents each.
func samplePool() []judge.Pair {
	var ps []judge.Pair
	for q := range 100 {
		loc := "en"
		if q >= 60 {
			loc = "de"
		}
		for d := range 3 {
			ps = append(ps, judge.Pair{QueryID: fmt.Sprintf("q%03d", q), Query: "query " + loc, Locale: loc,
				DocID: fmt.Sprintf("d%d", d), Document: fmt.Sprintf("=text %d\nline two", d)})
		}
	}
	return ps
}

func TestSampleQueries(t *testing.T) {
	pool := samplePool()
	hs := judge.SampleQueries(pool, 10, 1)
	require.Len(t, hs.Queries, 10)
	assert.Equal(t, []judge.Stratum{{Locale: "de", Queries: 40, Drawn: 4}, {Locale: "en", Queries: 60, Drawn: 6}}, hs.Strata)
	assert.Len(t, hs.Pairs, 30)
	assert.Equal(t, 100, hs.Pool, "the population drawn from")
	de := 0
	for _, q := range hs.Queries {
		if q >= "q060" {
			de++
		}
	}
	assert.Equal(t, 4, de)
	assert.Equal(t, hs, judge.SampleQueries(pool, 10, 1), "seeded: the same sample")
	assert.NotEqual(t, hs.Queries, judge.SampleQueries(pool, 10, 2).Queries, "another seed, another sample")
	// Largest remainder: 7 of 60/40 is 4.2 + 2.8 -> 4 + 3.
	hs7 := judge.SampleQueries(pool, 7, 1)
	assert.Equal(t, 3, hs7.Strata[0].Drawn)
	assert.Equal(t, 4, hs7.Strata[1].Drawn)
	// More than the pool: every query.
	all := judge.SampleQueries(pool, 1000, 1)
	assert.Len(t, all.Queries, 100)
	assert.Equal(t, 100, all.Asked)
}

func TestSheetRoundTrip(t *testing.T) {
	hs := judge.SampleQueries(samplePool(), 5, 3)
	var c, j bytes.Buffer
	require.NoError(t, judge.WriteSheetCSV(&c, hs))
	require.NoError(t, judge.WriteSheetJSONL(&j, hs))
	assert.True(t, strings.HasPrefix(c.String(), "query_id,locale,query,doc_id,document,grade\n"))
	assert.Contains(t, c.String(), `"'=text 0`+"\nline two\"", "a formula-like cell is escaped")
	assert.Contains(t, j.String(), `"document":"=text 0\nline two","grade":null}`)
	// Unfilled, both read as the same unlabelled queries.
	for _, in := range []string{c.String(), j.String()} {
		_, err := labelfile.ReadSheet(context.Background(), strings.NewReader(in), "sheet")
		require.ErrorContains(t, err, "no graded row")
	}
	// Filled in (every grade 2 in the CSV), read back with the ids intact.
	filled := strings.ReplaceAll(c.String(), "line two\",\n", "line two\",2\n")
	s, err := labelfile.ReadSheet(context.Background(), strings.NewReader(filled), "sheet.csv")
	require.NoError(t, err)
	require.Len(t, s.Rows, len(hs.Pairs))
	for i, r := range s.Rows {
		assert.Equal(t, hs.Pairs[i].QueryID, r.QueryID)
		assert.Equal(t, hs.Pairs[i].DocID, r.DocID)
		assert.Equal(t, 2, r.Grade)
	}
	filledJ := strings.ReplaceAll(j.String(), `"grade":null`, `"grade":1`)
	s, err = labelfile.ReadSheet(context.Background(), strings.NewReader(filledJ), "sheet.jsonl")
	require.NoError(t, err)
	require.Len(t, s.Rows, len(hs.Pairs))
}
