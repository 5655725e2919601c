package compare

import (
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// FloorGrammar is what compare's floors may name: its registered measures
// (metrics.QueryMeasures) over all the evaluated queries.
var FloorGrammar = floor.Grammar{Measures: queryInfos()}

func queryInfos() []metrics.Info {
	out := make([]metrics.Info, len(metrics.QueryMeasures))
	for i, m := range metrics.QueryMeasures {
		out[i] = m.Info
	}
	return out
}
