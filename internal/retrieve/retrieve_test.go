package retrieve

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

var cards = []kbfile.Card{
	{ID: "en-reset", Locale: "en", Title: "Reset your password", Text: "Open the sign-in page and choose Forgot password.\n\nThe reset link expires after one hour."},
	{ID: "en-refunds", Locale: "en", Title: "Refunds", Text: "Refunds go back to the original payment method within 14 days."},
	{ID: "pt-reset", Locale: "pt-BR", Title: "Redefinir a senha", Text: "Abra a página de login e escolha Esqueci a senha. O link expira em uma hora."},
	{ID: "pt-refunds", Locale: "pt-BR", Title: "Reembolsos", Text: "O reembolso volta para o método de pagamento original (password irrelevant)."},
}

func build(t *testing.T, strategy string, opt Options) *Index {
	t.Helper()
	chunks := chunk.Split(cards, chunk.Params{})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	opt.Strategy = strategy
	if opt.K == 0 {
		opt.K = 10
	}
	var progressed int
	opt.Progress = func(done, total int) { progressed = done; assert.Equal(t, len(chunks), total) }
	ix, err := Build(context.Background(), chunks, embed.NewHash(256, texts), memory.New(2), false, opt)
	require.NoError(t, err)
	if strategy != Lexical {
		assert.Equal(t, len(chunks), progressed)
	}
	return ix
}

func TestStrategiesAndLocaleFilter(t *testing.T) {
	qs := []Query{
		{Text: "how do I reset my password", Locale: "en"},
		{Text: "esqueci a senha", Locale: "pt-BR"},
		{Text: "password", Locale: "pt-BR"},
		{Text: "refunds payment", Locale: ""},
	}
	for _, s := range Strategies {
		t.Run(s, func(t *testing.T) {
			res, err := build(t, s, Options{}).Search(context.Background(), qs)
			require.NoError(t, err)
			require.Len(t, res, 4)
			assert.Equal(t, "en-reset", res[0][0].ParentID)
			assert.Equal(t, "en-reset#c1", res[0][0].ID)
			assert.Equal(t, "pt-reset", res[1][0].ParentID)
			for _, r := range res[2] {
				assert.True(t, strings.HasPrefix(r.ParentID, "pt-"), "locale filter: %v", r)
			}
			assert.Equal(t, "pt-refunds", res[2][0].ParentID, "the only pt-BR card saying password")
			assert.Contains(t, []string{"en-refunds", "pt-refunds"}, res[3][0].ParentID)
			for _, rs := range res {
				for j := 1; j < len(rs); j++ {
					assert.GreaterOrEqual(t, rs[j-1].Score, rs[j].Score, "best first")
				}
			}
		})
	}
	t.Run("all locales", func(t *testing.T) {
		res, err := build(t, Lexical, Options{AllLocales: true}).Search(context.Background(), []Query{{Text: "password", Locale: "pt-BR"}})
		require.NoError(t, err)
		var parents []string
		for _, r := range res[0] {
			parents = append(parents, r.ParentID)
		}
		assert.Contains(t, parents, "en-reset")
	})
	t.Run("k cuts", func(t *testing.T) {
		res, err := build(t, Hybrid, Options{K: 1}).Search(context.Background(), []Query{{Text: "password"}})
		require.NoError(t, err)
		assert.Len(t, res[0], 1)
	})
}

func TestHybridIsRRFOfBoth(t *testing.T) {
	q := []Query{{Text: "reset link payment"}}
	d, err := build(t, Dense, Options{K: 50}).Search(context.Background(), q)
	require.NoError(t, err)
	l, err := build(t, Lexical, Options{K: 50}).Search(context.Background(), q)
	require.NoError(t, err)
	h, err := build(t, Hybrid, Options{K: 50}).Search(context.Background(), q)
	require.NoError(t, err)
	want := map[string]float64{}
	for i, r := range d[0] {
		want[r.ID] += 1 / float64(60+i+1)
	}
	for i, r := range l[0] {
		want[r.ID] += 1 / float64(60+i+1)
	}
	require.Len(t, h[0], len(want))
	for _, r := range h[0] {
		assert.Equal(t, RoundScore(want[r.ID]), r.Score, r.ID)
	}
}

// Scores are rounded to ScoreDigits significant digits, and results whose
// rounded scores are equal come in chunk id order, whatever the KB order, the
// store's internal order or the strategy.
func TestScoresRoundedAndTiesByChunkID(t *testing.T) {
	assert.Equal(t, 0.0327869, RoundScore(2.0/61))
	assert.Equal(t, 1234570.0, RoundScore(1234567.89))
	assert.Equal(t, 0.0, RoundScore(0))
	twins := []kbfile.Card{
		{ID: "b", Title: "Refunds", Text: "Refunds go back to the card."},
		{ID: "c", Title: "Refunds", Text: "Refunds go back to the card."},
		{ID: "a", Title: "Refunds", Text: "Refunds go back to the card."},
		{ID: "z", Title: "Other", Text: "Something else entirely, refunds aside."},
	}
	chunks := chunk.Split(twins, chunk.Params{})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	for _, strategy := range Strategies {
		t.Run(strategy, func(t *testing.T) {
			ix, err := Build(context.Background(), chunks, embed.NewHash(64, texts), memory.New(1), false, Options{Strategy: strategy, K: 4})
			require.NoError(t, err)
			res, err := ix.Search(context.Background(), []Query{{Text: "refunds card"}})
			require.NoError(t, err)
			var got []string
			for _, r := range res[0] {
				got = append(got, r.ID)
				assert.Equal(t, RoundScore(r.Score), r.Score)
			}
			assert.Equal(t, []string{"a#c1", "b#c1", "c#c1", "z#c1"}, got)
		})
	}
}

func TestRerankReorders(t *testing.T) {
	// A TEI-protocol reranker that prefers texts mentioning "Reembolsos".
	srv := httptest.NewServer(reranktest.Handler(0, func(_, text string) float64 {
		if strings.Contains(text, "Reembolsos") {
			return 0.9
		}
		return 0.1
	}))
	defer srv.Close()
	rr, err := rerank.New(srv.URL, nil, httpretry.DefaultPolicy)
	require.NoError(t, err)
	res, err := build(t, Hybrid, Options{K: 2, Reranker: rr}).Search(context.Background(), []Query{{Text: "password reset"}})
	require.NoError(t, err)
	require.Len(t, res[0], 2)
	assert.Equal(t, "pt-refunds", res[0][0].ParentID)
	assert.Equal(t, 0.9, res[0][0].Score)
}

func TestFingerprint(t *testing.T) {
	chunks := chunk.Split(cards, chunk.Params{})
	h := embed.NewHash(256, nil)
	base := Fingerprint(chunks, chunk.Params{}, h)
	assert.Equal(t, base, Fingerprint(chunk.Split(cards, chunk.Params{}), chunk.Params{}, embed.NewHash(256, nil)))
	changed := append([]kbfile.Card(nil), cards...)
	changed[1].Text += " Also by bank transfer."
	assert.NotEqual(t, base, Fingerprint(chunk.Split(changed, chunk.Params{}), chunk.Params{}, h), "KB text")
	assert.NotEqual(t, base, Fingerprint(chunks, chunk.Params{MaxRunes: 100}, h), "chunking")
	assert.NotEqual(t, base, Fingerprint(chunks, chunk.Params{}, embed.NewHash(512, nil)), "embedder")
}

// --- Integration with a real Chroma server ($CHROMA_URL) on the demo KB. ---

func demo(t *testing.T, kbDir string) ([]chunk.Chunk, *embed.Hash, []Query) {
	t.Helper()
	kb, err := kbfile.Load(context.Background(), kbDir)
	require.NoError(t, err)
	chunks := chunk.Split(kb.Cards, chunk.Params{})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	f, err := os.Open("../../testdata/demo/cases.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var qs []Query
	require.NoError(t, casefile.StreamCases(context.Background(), f, "cases.jsonl", func(c *casefile.Case) error {
		qs = append(qs, Query{Text: c.Query, Locale: c.Locale})
		return nil
	}))
	require.NotEmpty(t, qs)
	return chunks, embed.NewHash(embed.DefaultHashDim, texts), qs
}

func TestDemoMemoryAndChromaAgree(t *testing.T) {
	url := chromatest.URL(t)
	ctx := context.Background()
	chunks, emb, qs := demo(t, "../../testdata/demo/kb")
	for _, strategy := range []string{Dense, Hybrid} {
		t.Run(strategy, func(t *testing.T) {
			opt := Options{Strategy: strategy, K: 5}
			mem, err := Build(ctx, chunks, emb, memory.New(0), false, opt)
			require.NoError(t, err)
			cs, ready, err := chroma.Open(ctx, chroma.Config{URL: url, Fingerprint: Fingerprint(chunks, chunk.Params{}, emb), Chunks: len(chunks), BatchSize: 16})
			require.NoError(t, err)
			require.False(t, ready)
			require.Contains(t, chromatest.Collections(t, url), cs.Collection())
			chr, err := Build(ctx, chunks, emb, cs, false, opt)
			require.NoError(t, err)
			want, err := mem.Search(ctx, qs)
			require.NoError(t, err)
			got, err := chr.Search(ctx, qs)
			require.NoError(t, err)
			same := 0
			for i := range qs {
				require.NotEmpty(t, got[i], "query %d", i)
				if got[i][0].ID == want[i][0].ID {
					same++
				}
				if strategy == Dense {
					assert.InDelta(t, want[i][0].Score, got[i][0].Score, 1e-4, "query %d", i)
				}
				for _, r := range got[i] {
					assert.Equal(t, qs[i].Locale, localeOf(chunks, r.ID), "locale filter in chroma")
				}
			}
			// Exact vs HNSW on 38 vectors: the top results agree (ties aside).
			assert.GreaterOrEqual(t, float64(same)/float64(len(qs)), 0.97, "top-1 agreement %d/%d", same, len(qs))
			require.NoError(t, cs.Close(ctx))
			assert.NotContains(t, chromatest.Collections(t, url), cs.Collection(), "temporary collection deleted")
		})
	}
}

func localeOf(chunks []chunk.Chunk, id string) string {
	for _, c := range chunks {
		if c.ID == id {
			return c.Locale
		}
	}
	return "?"
}

func TestNamedCollectionRebuiltWhenKBChanges(t *testing.T) {
	url := chromatest.URL(t)
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../testdata/demo/kb")))
	name := "retrieval-gate-test-kb-" + strings.ReplaceAll(t.Name(), "/", "-")
	name = strings.ToLower(name)
	open := func() (*chroma.Store, bool, []chunk.Chunk, *embed.Hash) {
		chunks, emb, _ := demo(t, dir)
		cs, ready, err := chroma.Open(ctx, chroma.Config{URL: url, Collection: name, Fingerprint: Fingerprint(chunks, chunk.Params{}, emb), Chunks: len(chunks)})
		require.NoError(t, err)
		return cs, ready, chunks, emb
	}
	cs, ready, chunks, emb := open()
	if ready { // left over from an earlier run: start clean
		require.NoError(t, cs.Close(ctx))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "en", "zz-extra.md"), []byte("---\nid: zz-extra\nlocale: en\n---\nextra\n"), 0o644))
		cs, ready, _, _ = open()
		require.False(t, ready, "a KB with an extra card does not match the leftover collection")
		require.NoError(t, os.Remove(filepath.Join(dir, "en", "zz-extra.md")))
		require.NoError(t, cs.Close(ctx))
		cs, ready, chunks, emb = open()
	}
	require.False(t, ready)
	_, err := Build(ctx, chunks, emb, cs, ready, Options{Strategy: Dense, K: 3})
	require.NoError(t, err)
	require.NoError(t, cs.Close(ctx))

	cs, ready, _, _ = open()
	assert.True(t, ready, "unchanged KB: the collection is reused")
	require.NoError(t, cs.Close(ctx))

	// Change one card's text: the fingerprint no longer matches.
	p := filepath.Join(dir, "en", "en-refunds.md")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append(b, []byte("\nRefunds of gift cards are not possible.\n")...), 0o644))
	cs, ready, chunks, emb = open()
	assert.False(t, ready, "changed KB: the collection is rebuilt")
	ix, err := Build(ctx, chunks, emb, cs, ready, Options{Strategy: Dense, K: 3})
	require.NoError(t, err)
	res, err := ix.Search(ctx, []Query{{Text: "gift cards refunds", Locale: "en"}})
	require.NoError(t, err)
	assert.Equal(t, "en-refunds", res[0][0].ParentID, "the rebuilt collection has the new text")
	require.NoError(t, cs.Close(ctx))

	chromatest.DeleteCollection(t, url, name)
}

// TestCutRounded: the fused list is cut in the output's order, the results
// whose scores round alike at the cut kept by id.
func TestCutRounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Result
		n    int
		want []string
	}{
		{"no tie at the cut", []Result{{ID: "z", Score: 3}, {ID: "y", Score: 2}, {ID: "x", Score: 1}}, 2, []string{"z", "y"}},
		{"an exact tie", []Result{{ID: "z", Score: 3}, {ID: "y", Score: 2}, {ID: "x", Score: 2}, {ID: "a", Score: 1}}, 2, []string{"z", "x"}},
		{"a tie beyond the 6th digit", []Result{{ID: "c", Score: 0.03278690001}, {ID: "b", Score: 0.0327869}, {ID: "a", Score: 0.03278689999}, {ID: "0", Score: 0.01}}, 2, []string{"a", "b"}},
		{"shorter than n", []Result{{ID: "b", Score: 1}, {ID: "a", Score: 1}}, 5, []string{"b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range cutRounded(tc.in, tc.n) {
				got = append(got, r.ID)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
