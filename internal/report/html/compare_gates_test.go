package html_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// compare as a gate on the page: the gates' verdict above the decision, and
// the decision's sentence says that its strategy misses the floor too.
func TestCompareGatesBeforeDecision(t *testing.T) {
	var qr strings.Builder
	var ann, hybrid []trecfile.RunQuery
	for i := range 40 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&qr, "%s 0 g 3\n%s 0 j 0\n", id, id)
		ann = append(ann, trecfile.RunQuery{ID: id, Docs: []string{"j", "x", "y"}})
		hybrid = append(hybrid, trecfile.RunQuery{ID: id, Docs: []string{"g", "j", "x"}})
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	require.NoError(t, err)
	res, err := compare.Compare(q, []compare.Input{
		{Name: "ann", Run: &trecfile.Run{File: "a", Format: "trec", K: 3, Queries: ann}},
		{Name: "hybrid", Run: &trecfile.Run{File: "h", Format: "trec", K: 3, Queries: hybrid}},
	}, compare.Options{K: 3, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1,
		Gate: compare.GateOptions{Strategy: "ann", Floors: floor.List{{Measure: "precision_at_k", Group: outcome.GroupOverall, Value: 0.5}}}})
	require.NoError(t, err)
	require.Equal(t, outcome.Fail, res.Verdict())
	var b bytes.Buffer
	require.NoError(t, htmlreport.CompareHTML(&b, comparereport.New(res), res, nil))
	page := b.String()
	gates, decision := strings.Index(page, "<h2>Gates: fail</h2>"), strings.Index(page, `id="rg-decision"`)
	require.Positive(t, gates)
	require.Positive(t, decision)
	assert.Less(t, gates, decision, "the verdict above the decision")
	assert.Contains(t, page, "Decision: use hybrid. hybrid is below the gate&#39;s floor: precision@3 0.333 &lt; 0.500 (n = 40), so taking it alone does not pass the gate.")
}
