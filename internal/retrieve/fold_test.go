package retrieve

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// TestOtherSpellingRetrieved: a query finds the card that writes its word
// another way a reader calls the same word (docs/retrieve.md, "Embedders":
// the terms of BM25 and of the hash embedder), with every strategy, and not
// the card of another word that folding made its term. The card sought is
// "b"; "a" shares no term with the query, or one only when two words are
// wrongly one term, so that when the query's word and the card's are
// different terms, lexical returns nothing or "a", and dense ranks "a" first
// (equal scores come in chunk id order).
func TestOtherSpellingRetrieved(t *testing.T) {
	tests := []struct {
		name, card, other, query string
	}{
		{"greek capitals without accents", "ΛΟΓΟΣ ΚΑΙ ΠΡΑΞΗ", "Ο ΚΑΙΡΟΣ ΣΗΜΕΡΑ", "λόγος"},
		// ɨ (i with stroke, which Unicode does not decompose) typed as i.
		{"a stroke letter typed without its stroke", "Ɨvy pytã", "Mba'éichapa", "ivy"},
		// A nukta written decomposed (ज + U+093C) in the card and precomposed
		// (U+095B) in the query: "ज़रा रुकिए" (wait a little).
		{"nukta precomposed and decomposed", "\u091c\u093cरा रुकिए", "बाद में", "\u095bरा"},
		// मेरा (my) is not मरा (died): the vowel sign े (U+0947) is a
		// nonspacing mark that spells the word.
		{"hindi vowel sign", "मेरा घर", "वह मरा", "मेरा"},
		// प्रकार (kind) is not परकार (compass): the virama spells the word.
		{"hindi virama", "किस प्रकार", "परकार से", "प्रकार"},
		// பல் (tooth) is not பல (many).
		{"tamil pulli", "பல் வலி", "பல நாட்கள்", "பல்"},
		// Russian text mostly writes ё as е: the card's "Еще раз" (once
		// more) from the query "ещё" typed with ё.
		{"cyrillic yo typed", "Еще раз", "Новый пароль", "ещё"},
		// A soft hyphen (&shy; in the HTML the card came from) inside the
		// card's word.
		{"soft hyphen inside a word", "Pass\u00adwort ändern", "Konto löschen", "Passwort"},
		// An Arabic card gives the year in Arabic-Indic digits, the query in
		// ASCII ones.
		{"arabic-indic digits", "تقرير ٢٠٢٤", "تقرير سنوي", "2024"},
		// An Arabic query typed without the hamza on the alef: "أسئلة"
		// (questions) as "اسئلة".
		{"arabic alef without its hamza", "أسئلة شائعة", "تسجيل الدخول", "اسئلة"},
		// A justified Arabic card stretches its words with tatweels.
		{"arabic tatweel", "شـــروط الاستخدام", "تسجيل الدخول", "شروط"},
		// Chinese writes no spaces: the card's sentence "如何重置密码"
		// (how to reset the password) has the query's word 密码.
		{"chinese word inside a sentence", "如何重置密码。", "发票在哪里下载？", "密码"},
		// A Japanese query in another phrasing: パスワード (password) in
		// "パスワードを忘れた場合" (if you forgot your password).
		{"japanese word inside a sentence", "パスワードを忘れた場合", "請求書の確認", "パスワード"},
		// A card extracted from a PDF keeps the "fi" ligature (U+FB01).
		{"ligature from a pdf", "Con\ufb01gure the \ufb01rewall", "Open a ticket", "configure"},
		// A Japanese card writes the product's name in fullwidth Latin.
		{"fullwidth latin", "ＡＰＩ キー の 作成", "請求書", "API"},
	}
	for _, tt := range tests {
		cards := []kbfile.Card{{ID: "a", Title: "a", Text: tt.other}, {ID: "b", Title: "b", Text: tt.card}}
		chunks := chunk.Split(cards, chunk.Params{})
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		for _, strategy := range Strategies {
			t.Run(tt.name+"/"+strategy, func(t *testing.T) {
				ix, err := Build(context.Background(), chunks, embed.NewHash(256, texts), memory.New(1), false, Options{Strategy: strategy, K: 2})
				require.NoError(t, err)
				res, err := ix.Search(context.Background(), []Query{{Text: tt.query}})
				require.NoError(t, err)
				require.NotEmpty(t, res[0], "no result for %q", tt.query)
				assert.Equal(t, "b", res[0][0].ParentID)
			})
		}
	}
}
