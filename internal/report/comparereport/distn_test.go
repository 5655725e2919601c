package comparereport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// The relevance distribution carries the n of top-k documents its shares are
// of (compare.Strategy.Retrieved): in the JSON as relevance_distribution_n and
// in the text and Markdown tables as the "n documents" column. A document
// written before the key reads back and renders the shares without the
// column, never with a made-up count.
func TestRelevanceDistributionN(t *testing.T) {
	res := compareFixture(t, "ann", "hybrid")
	d := New(res)
	var js bytes.Buffer
	require.NoError(t, d.WriteJSON(&js))
	var doc struct {
		Strategies map[string]map[string]json.RawMessage `json:"strategies"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	for _, s := range res.Strategies {
		require.Positive(t, s.Retrieved)
		assert.Equal(t, fmt.Sprint(s.Retrieved), string(doc.Strategies[s.Name]["relevance_distribution_n"]), s.Name)
	}
	render := func(d *Document) (text, md string) {
		var tb, mb bytes.Buffer
		require.NoError(t, d.Text(&tb))
		require.NoError(t, d.Markdown(&mb))
		return tb.String(), mb.String()
	}
	text, md := render(d)
	assert.Contains(t, md, "| of which unjudged | n documents | failed queries |")
	assert.Contains(t, text, "n documents")
	for _, s := range res.Strategies {
		_, unjudged := s.Distribution()
		cell := fmt.Sprintf(" | %s | %d | %d | ", format.Pct(unjudged), s.Retrieved, len(s.Failed))
		assert.Contains(t, md, cell, s.Name)
	}

	// Without the key (a report written before it): no column, no count.
	var m map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	for _, s := range m["strategies"].(map[string]any) {
		delete(s.(map[string]any), "relevance_distribution_n")
	}
	old, err := json.Marshal(m)
	require.NoError(t, err)
	back, err := Read(bytes.NewReader(old))
	require.NoError(t, err)
	for _, s := range back.Strategies {
		assert.Nil(t, s.RelevanceDistributionN)
	}
	text, md = render(back)
	assert.NotContains(t, md, "n documents")
	assert.NotContains(t, text, "n documents")
	assert.Contains(t, md, "| of which unjudged | failed queries |")
}
