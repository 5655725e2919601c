package comparereport

import (
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// PerQuery writes one JSONL line per strategy and evaluated query,
// {"judged_at_k", "metrics": {…}, "query_id", "strategy"} (keys sorted;
// judged_at_k null when the query has no document in the run), strategies in run
// order, queries by id, values under the one JSON float policy. When the
// queries come in clusters each line begins with "cluster": the query's
// cluster as the statistics count it (null: a cluster of its own), so the
// cluster-level figures can be recomputed from the file; without clusters
// the lines are as before. It streams from the domain result: the per-query
// values are not part of the document.
func PerQuery(w io.Writer, r *compare.Result) error {
	var line []byte
	for si := range r.Strategies {
		s := &r.Strategies[si]
		name := format.AppendJSONString(nil, s.Name)
		for i, qid := range r.QueryIDs {
			line = append(line[:0], '{')
			if c, listed, in := r.QueryCluster(i); in {
				line = append(line, `"cluster":`...)
				if listed {
					line = format.AppendJSONString(line, c)
				} else {
					line = append(line, "null"...)
				}
				line = append(line, ',')
			}
			line = append(line, `"judged_at_k":`...)
			line = format.AppendFloat(line, s.Judged.PerQuery[i])
			line = append(line, `,"metrics":{`...)
			for j, m := range metrics.GradedSorted {
				if j > 0 {
					line = append(line, ',')
				}
				line = append(line, '"')
				line = append(line, metrics.GradedKeys[m]...)
				line = append(line, `":`...)
				line = format.AppendFloat(line, s.Values[i*metrics.NumGraded+m])
			}
			line = append(line, `},"query_id":`...)
			line = format.AppendJSONString(line, qid)
			line = append(line, `,"strategy":`...)
			line = append(line, name...)
			line = append(line, "}\n"...)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}
