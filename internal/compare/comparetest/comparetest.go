// Package comparetest builds comparisons for the tests of compare and of its
// reports.
package comparetest

import (
	"context"
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// ConstantDifference is 40 queries whose documents the judge grades a 2 or 3
// (alternating) and b 1; strategy A ranks a first, B ranks b first. People
// grade a 2 and b 1 on the first 20, so every labelled query's human
// difference B − A is the same while the judge's vary: λ̂ = 0, and the
// corrected differences have standard error 0 and a nonzero estimate. With
// clusters, the queries come in clusters of four (Options.Queries). The
// options are k = 2, the exp gain, relevant at 2, 200 resamples, seed 1.
func ConstantDifference(clusters bool) (*trecfile.Qrels, []compare.Input, compare.Options, error) {
	var qr, sh strings.Builder
	var qa, qb []trecfile.RunQuery
	qs := compare.Queries{}
	sh.WriteString("query_id,doc_id,grade\n")
	for i := range 40 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&qr, "%s 0 a %d\n%s 0 b 1\n", id, 2+i%2, id)
		if i < 20 {
			fmt.Fprintf(&sh, "%s,a,2\n%s,b,1\n", id, id)
		}
		qa = append(qa, trecfile.RunQuery{ID: id, Docs: []string{"a", "b"}})
		qb = append(qb, trecfile.RunQuery{ID: id, Docs: []string{"b", "a"}})
		qs[id] = compare.Query{Cluster: fmt.Sprintf("c%02d", i/4)}
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	if err != nil {
		return nil, nil, compare.Options{}, err
	}
	s, err := labelfile.ReadSheet(context.Background(), strings.NewReader(sh.String()), "sheet.csv")
	if err != nil {
		return nil, nil, compare.Options{}, err
	}
	o := compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1, HumanSheet: s}
	if clusters {
		o.Queries = qs
	}
	return q, []compare.Input{
		{Name: "A", Run: &trecfile.Run{File: "a", Format: "trec", K: 10, Queries: qa}},
		{Name: "B", Run: &trecfile.Run{File: "b", Format: "trec", K: 10, Queries: qb}},
	}, o, nil
}
