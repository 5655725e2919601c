// Package reranktest is a fake cross-encoder for tests: an HTTP handler speaking
// the TEI /rerank protocol.
package reranktest

import (
	"encoding/json"
	"net/http"
	"sort"
)

// Handler answers POST {"query", "texts"} like TEI: [{"index", "score"}] sorted
// by score descending, each text scored by score(query, text). A request with
// more than maxBatch texts (when maxBatch > 0) gets 413, as TEI answers beyond
// its --max-client-batch-size; a malformed body gets 422.
func Handler(maxBatch int, score func(query, text string) float64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":"malformed request","error_type":"Validation"}`, http.StatusUnprocessableEntity)
			return
		}
		if maxBatch > 0 && len(req.Texts) > maxBatch {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		type item struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		items := make([]item, len(req.Texts))
		for i, tx := range req.Texts {
			items[i] = item{i, score(req.Query, tx)}
		}
		sort.SliceStable(items, func(a, b int) bool { return items[a].Score > items[b].Score })
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(items)
	}
}
