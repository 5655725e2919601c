package comparereport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// With compare --queries (issue 32 item 4), the JSON carries the listed
// queries' texts and the Markdown shows them beside the ids, escaped and
// shortened; a text forges no workflow command; read back, the document is
// the same, and a wrong list or text is refused at its line.
func TestQueryTexts(t *testing.T) {
	res := compareFixture(t, "ann", "hybrid")
	long := strings.Repeat("word ", 30) + "end"
	res.Queries = compare.Queries{
		"q1": {Text: "How do I reset my password?"},
		"q2": {Text: "x\n::error file=a::FORGED ##[warning]FORGED @team <b>|"},
		"q3": {Text: long},
		"q9": {Text: "not listed"},
	}
	doc := New(res)
	assert.Equal(t, map[string]string{"q1": "How do I reset my password?", "q2": res.Queries["q2"].Text, "q3": long}, doc.QueryTexts, "the listed queries' texts, in full")

	var md bytes.Buffer
	require.NoError(t, doc.Markdown(&md))
	m := md.String()
	best := doc.Strategies["hybrid"].BestQueries
	require.NotEmpty(t, best)
	assert.Contains(t, m, "- best by DCG@2:\n  - "+best[0]+": ")
	assert.Contains(t, m, "  - q1: How do I reset my password?\n")
	short, whole := format.Shorten(long, QueryCell)
	require.False(t, whole)
	assert.Contains(t, m, "  - q3: "+format.EscapeMarkdown(short)+"\n")
	assert.Contains(t, m, format.EscapeMarkdown(res.Queries["q2"].Text))
	assert.NotContains(t, m, "<b>")
	assert.NotContains(t, m, "@team")
	assert.Empty(t, runnertest.Commands(m, nil), "no line of the Markdown is a workflow command")

	// Without texts, the ids alone on one line, as before.
	res.Queries = nil
	var plain bytes.Buffer
	require.NoError(t, New(res).Markdown(&plain))
	assert.Contains(t, plain.String(), "- best by DCG@2: "+strings.Join(best, ", ")+"\n")

	// Read back, the same document.
	var js bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	assert.Contains(t, js.String(), `"query_texts": {`)
	back, err := Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, doc.QueryTexts, back.QueryTexts)
	assert.Equal(t, doc.Strategies["ann"].QueriesByMeasure, back.Strategies["ann"].QueriesByMeasure)
	var again bytes.Buffer
	require.NoError(t, back.WriteJSON(&again))
	assert.Equal(t, js.String(), again.String())

	for _, c := range []struct{ from, to, msg string }{
		{`"q1": "How do I reset my password?"`, `"q1": 7`, "query_texts.q1 is not a string: a query's text"},
		{`"queries_by_measure": {`, `"queries_by_measure": {"nope": {"best": [], "worst": []}, `, `"nope" is not a measure of compare`},
		{`"best": [`, `"best": [1, `, "is not a string: a query id"},
	} {
		bad := strings.Replace(js.String(), c.from, c.to, 1)
		require.NotEqual(t, js.String(), bad, c.from)
		_, err := Read(strings.NewReader(bad))
		require.ErrorContains(t, err, c.msg)
	}
}
