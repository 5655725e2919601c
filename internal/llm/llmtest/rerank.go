package llmtest

import (
	"net/http"
	"strings"
	"unicode"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
)

// The offline reranker: POST /rerank speaks TEI's rerank protocol (Hugging
// Face text-embeddings-inference, "POST /rerank" in its OpenAPI document, as
// internal/retrieve/rerank's client speaks it): a body {"query", "texts"}
// answered by [{"index", "score"}] sorted by score, best first; more texts than
// TEI's default --max-client-batch-size (32) get 413, a malformed body 422
// (reranktest.Handler, the fake the client's tests use). It scores by a rule,
// not a cross-encoder: RerankScore.

// rerankMaxBatch is TEI's default --max-client-batch-size.
const rerankMaxBatch = 32

// serveRerank answers POST /rerank (405 for another method).
func (s *Server) serveRerank(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, `{"error":"Method Not Allowed","error_type":"Validation"}`, http.StatusMethodNotAllowed)
		return
	}
	reranktest.Handler(rerankMaxBatch, RerankScore)(w, r)
}

// RerankScore is the offline reranker's score of text for query: the share of
// the query's distinct words of 4+ letters (case-insensitive, letters and
// digits) that the text contains, in [0, 1]; 0 for a query without such words.
// It is the judge's Overlap rule as a number, so the reranked order agrees with
// the fake judge's grades by construction: a "reranker helps" seen against
// llmfake shows what the commands do, not what a reranker is worth.
func RerankScore(query, text string) float64 {
	words := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) >= 4 {
				out[w] = true
			}
		}
		return out
	}
	q, t := words(query), words(text)
	if len(q) == 0 {
		return 0
	}
	hit := 0
	for w := range q {
		if t[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(q))
}
