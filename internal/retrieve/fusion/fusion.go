// Package fusion merges rankings by reciprocal rank fusion (Cormack, Clarke and
// Büttcher, SIGIR 2009): score(d) = Σ over the rankings r that contain d of
// 1 / (K + rank_r(d)), ranks starting at 1, K = 60.
package fusion

import "sort"

// K is the RRF constant.
const K = 60

// Fused is one fused item.
type Fused struct {
	ID    string
	Score float64
}

// RRF fuses rankings (each best first; an id repeated within one ranking counts
// at its first rank only). The result is best first; ties are broken by the best
// single rank, then by id, so the output is deterministic.
func RRF(rankings ...[]string) []Fused {
	score := map[string]float64{}
	best := map[string]int{}
	for _, r := range rankings {
		seen := map[string]bool{}
		for i, id := range r {
			if seen[id] {
				continue
			}
			seen[id] = true
			rank := i + 1
			score[id] += 1 / float64(K+rank)
			if b, ok := best[id]; !ok || rank < b {
				best[id] = rank
			}
		}
	}
	out := make([]Fused, 0, len(score))
	for id, s := range score {
		out = append(out, Fused{ID: id, Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if best[a.ID] != best[b.ID] {
			return best[a.ID] < best[b.ID]
		}
		return a.ID < b.ID
	})
	return out
}
