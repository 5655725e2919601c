package metrics

// HolmWithin is Holm's adjustment applied separately within each family: p[i]
// belongs to family[i], and adj[i] is Holm(p of that family)[its position]. For
// compare's recommendation the family of the primary measure is its strategies
// (one test per strategy against the baseline); each secondary measure is its own
// family across the same strategies. len(family) must equal len(p).
func HolmWithin(p []float64, family []string) []float64 {
	if len(family) != len(p) {
		panic("metrics: HolmWithin needs one family per p-value")
	}
	idx := map[string][]int{}
	var order []string
	for i, f := range family {
		if _, ok := idx[f]; !ok {
			order = append(order, f)
		}
		idx[f] = append(idx[f], i)
	}
	adj := make([]float64, len(p))
	for _, f := range order {
		is := idx[f]
		sub := make([]float64, len(is))
		for j, i := range is {
			sub[j] = p[i]
		}
		for j, a := range Holm(sub) {
			adj[is[j]] = a
		}
	}
	return adj
}
