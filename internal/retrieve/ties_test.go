package retrieve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// TestTiesDoNotDependOnKBOrder: which chunks make the top k among tied scores
// does not depend on the KB's line order: every stage that cuts a ranking
// (the memory store's search, BM25, the hybrid fusion) keeps ties by chunk id,
// as the output orders them. The KB in its order, reversed and shuffled gives
// byte-identical output. (The audit's reproduction: six identical cards, k =
// 2, kept card-a and card-b, or card-e and card-f from the reversed KB.)
func TestTiesDoNotDependOnKBOrder(t *testing.T) {
	type card struct {
		ID     string `json:"id"`
		Locale string `json:"locale"`
		Title  string `json:"title"`
		Text   string `json:"text"`
	}
	type query struct {
		ID     string `json:"id"`
		Locale string `json:"locale"`
		Query  string `json:"query"`
	}
	six := make([]card, 0, 6)
	for _, x := range "abcdef" {
		six = append(six, card{ID: "card-" + string(x), Locale: "en", Title: "Refunds", Text: "Refunds are paid back within five days."})
	}
	// A larger KB whose cards repeat 12 texts (about 90 copies each: more
	// ties than hybrid's depth of 50) beside cards of their own.
	r := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields("refund invoice password reset account card payment delivery order return email login")
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	shared := make([]string, 12)
	for i := range shared {
		shared[i] = text(6)
	}
	var large []card
	locales := []string{"en", "pt-BR"}
	for i := range 1200 {
		c := card{ID: fmt.Sprintf("card-%04d", r.IntN(1_000_000)*10+i%10), Locale: locales[i%2], Title: "Help", Text: shared[i%len(shared)]}
		if i%5 == 0 {
			c.Text = text(8)
		}
		large = append(large, c)
	}
	var queries []query
	for i := range 40 {
		queries = append(queries, query{ID: fmt.Sprintf("q%d", i), Locale: locales[i%2], Query: text(3)})
	}
	write := func(t *testing.T, name string, lines any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		switch v := lines.(type) {
		case []card:
			for _, c := range v {
				require.NoError(t, enc.Encode(c))
			}
		case []query:
			for _, q := range v {
				require.NoError(t, enc.Encode(q))
			}
		}
		path := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		return path
	}
	for _, tc := range []struct {
		name    string
		kb      []card
		queries []query
		k       int
		want    string // the first query's chunks, for the six cards
	}{
		{"six identical cards", six, []query{{ID: "q1", Locale: "en", Query: "refunds"}}, 2, `[{"id": "card-a#c1", "parent_id": "card-a", `},
		{"a larger KB, k = 5", large, queries, 5, ""},
		{"a larger KB, k = 60", large, queries, 60, ""},
	} {
		for _, strategy := range retrieve.Strategies {
			t.Run(tc.name+"/"+strategy, func(t *testing.T) {
				cases := write(t, "cases.jsonl", tc.queries)
				run := func(kb []card) string {
					kbPath := write(t, "kb.jsonl", kb)
					casesIn, err := os.Open(cases)
					require.NoError(t, err)
					defer casesIn.Close()
					var out bytes.Buffer
					_, err = retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kbPath), Cases: casesIn, CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"},
						retrieve.RunOptions{Strategy: strategy, K: tc.k, Store: "memory", Embedder: "hash"})
					require.NoError(t, err)
					return out.String()
				}
				want := run(tc.kb)
				if tc.want != "" {
					assert.Contains(t, want, tc.want)
					assert.Contains(t, want, `{"id": "card-b#c1", "parent_id": "card-b", `)
				}
				reversed := slices.Clone(tc.kb)
				slices.Reverse(reversed)
				assert.Equal(t, want, run(reversed), "the KB reversed")
				shuffled := slices.Clone(tc.kb)
				r := rand.New(rand.NewPCG(1, 2))
				r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				assert.Equal(t, want, run(shuffled), "the KB shuffled")
			})
		}
	}
}
