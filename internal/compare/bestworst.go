package compare

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Ranked are a strategy's best and worst queries by one measure: the Handful
// highest and the Handful lowest by the measure's direction (best first,
// worst first), ties by query id; queries the measure does not count (NaN)
// are not ranked.
type Ranked struct {
	Best, Worst []string
}

// rankQueries fills s.ByMeasure from s.Values: for every measure, its best
// and worst queries (the primary's are Best and Worst). One pass per measure
// keeps the Handful best and worst rows (rows are in query id order, so the
// first seen wins a tie).
func (r *Result) rankQueries(s *Strategy) {
	const M = metrics.NumGraded
	n := len(r.QueryIDs)
	for m := range M {
		higher := metrics.QueryMeasures[m].HigherIsBetter
		// better reports whether a ranks before b by the measure's direction.
		better := func(a, b float64) bool {
			if higher {
				return a > b
			}
			return a < b
		}
		best := make([]int, 0, Handful)
		worst := make([]int, 0, Handful)
		for i := range n {
			v := s.Values[i*M+m]
			if math.IsNaN(v) {
				continue
			}
			best = keep(best, i, func(j int) bool { return better(v, s.Values[j*M+m]) })
			worst = keep(worst, i, func(j int) bool { return better(s.Values[j*M+m], v) })
		}
		ids := func(rows []int) []string {
			out := make([]string, len(rows))
			for k, i := range rows {
				out[k] = r.QueryIDs[i]
			}
			return out
		}
		s.ByMeasure[m] = Ranked{Best: ids(best), Worst: ids(worst)}
	}
}

// keep inserts row i into the ordered list rows (at most Handful) before the
// first row it ranks before (before(j)); a row that ranks before none goes
// last while there is room. Earlier rows win ties.
func keep(rows []int, i int, before func(j int) bool) []int {
	at := len(rows)
	for k, j := range rows {
		if before(j) {
			at = k
			break
		}
	}
	if at == Handful {
		return rows
	}
	if len(rows) < Handful {
		rows = append(rows, 0)
	}
	copy(rows[at+1:], rows[at:len(rows)-1])
	rows[at] = i
	return rows
}
