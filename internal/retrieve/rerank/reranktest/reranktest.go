// Package reranktest is a fake cross-encoder for tests: an HTTP handler speaking
// the TEI /rerank protocol.
//
// It follows Hugging Face text-embeddings-inference (TEI) as its OpenAPI
// document ("POST /rerank", docs/openapi.json) and its router describe it: the
// request {"query", "texts", "truncate", "truncation_direction", "raw_scores",
// "return_text"}; the answer [{"index", "score"}] (with "text" when
// return_text), best first; the errors {"error": "...", "error_type": "..."}
// with TEI's statuses (413 for a validation error: a batch over
// --max-client-batch-size or an input over the model's max input length, 400
// for no texts, 422 for a body it cannot read).
package reranktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"unicode"
	"unicode/utf8"
)

// MaxInput is the fake model's max input length in tokens: a pair's query,
// text and three special tokens ([CLS] query [SEP] text [SEP]). 512 is the
// max_position_embeddings of the common cross-encoders (BAAI/bge-reranker-base
// and -large, cross-encoder/ms-marco-MiniLM-L-6-v2), which TEI takes as its
// max input length.
const MaxInput = 512

// pairSpecialTokens are the special tokens a BERT-style pair encoding adds.
const pairSpecialTokens = 3

// Handler answers POST {"query", "texts", ...} like TEI: [{"index", "score"}]
// sorted by score descending, each text scored by score(query, text). A request
// with more than maxBatch texts (when maxBatch > 0) gets 413, as TEI answers
// beyond its --max-client-batch-size. A pair of more than MaxInput tokens
// (Tokens) gets TEI's 413 "Input validation error: `inputs` must have less
// than 512 tokens. Given: N" unless the request says "truncate": true (TEI's
// --auto-truncate is off by default); with it, the pair is cut as TEI cuts it
// (the tokenizer's longest-first strategy: a token at a time from the longer of
// query and text, at the end for "truncation_direction" "Right", the default,
// at the start for "Left") and score sees what is left. No texts get 400, a
// malformed body 422.
func Handler(maxBatch int, score func(query, text string) float64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query               string   `json:"query"`
			Texts               []string `json:"texts"`
			Truncate            *bool    `json:"truncate"`
			TruncationDirection *string  `json:"truncation_direction"`
			ReturnText          bool     `json:"return_text"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			teiError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error(), "Tokenizer")
			return
		}
		left := false
		if d := req.TruncationDirection; d != nil {
			switch *d {
			case "Right":
			case "Left":
				left = true
			default:
				teiError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Failed to deserialize the JSON body into the target type: truncation_direction: unknown variant `%s`, expected `Left` or `Right`", *d), "Tokenizer")
				return
			}
		}
		if len(req.Texts) == 0 {
			teiError(w, http.StatusBadRequest, "`texts` cannot be empty", "Empty")
			return
		}
		if maxBatch > 0 && len(req.Texts) > maxBatch {
			teiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("batch size %d > maximum allowed batch size %d", len(req.Texts), maxBatch), "Validation")
			return
		}
		truncate := req.Truncate != nil && *req.Truncate
		type item struct {
			Index int     `json:"index"`
			Text  *string `json:"text,omitempty"`
			Score float64 `json:"score"`
		}
		items := make([]item, len(req.Texts))
		for i, tx := range req.Texts {
			q, t, n := fit(req.Query, tx, left)
			if n > MaxInput && !truncate {
				teiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Input validation error: `inputs` must have less than %d tokens. Given: %d", MaxInput, n), "Validation")
				return
			}
			items[i] = item{Index: i, Score: score(q, t)}
			if req.ReturnText {
				items[i].Text = &req.Texts[i]
			}
		}
		sort.SliceStable(items, func(a, b int) bool { return items[a].Score > items[b].Score })
		w.Header().Set("Content-Type", "application/json")
		_ = encoder(w).Encode(items)
	}
}

// teiError writes TEI's error answer: {"error": msg, "error_type": typ}.
func teiError(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = encoder(w).Encode(struct {
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}{msg, typ})
}

// encoder writes JSON as TEI's serde_json does: "<", ">" and "&" as they are.
func encoder(w http.ResponseWriter) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// fit returns the pair's length in tokens (special tokens included) and the
// query and text cut to MaxInput as the tokenizer's longest-first truncation
// cuts them (from the end, or from the start when left).
func fit(query, text string, left bool) (q, t string, n int) {
	qt, tt := Tokens(query), Tokens(text)
	n = len(qt) + len(tt) + pairSpecialTokens
	nq, nt := len(qt), len(tt)
	for excess := n - MaxInput; excess > 0; excess-- {
		if nq > nt {
			nq--
		} else {
			nt--
		}
	}
	return keep(query, qt, nq, left), keep(text, tt, nt, left), n
}

// keep is s with only n of its tokens toks: the first n, or the last n when left.
func keep(s string, toks [][2]int, n int, left bool) string {
	switch {
	case n >= len(toks):
		return s
	case n == 0:
		return ""
	case left:
		return s[toks[len(toks)-n][0]:]
	default:
		return s[:toks[n-1][1]]
	}
}

// Tokens are the fake tokenizer's tokens of s, as byte spans: a BERT-style
// pre-tokenization, where each CJK character (Han, kana, Hangul) is a token, a
// run of other letters and digits is one (a real WordPiece vocabulary may split
// a rare word into several: the fake counts at most as many tokens as such a
// tokenizer), and every other character but white space is one.
func Tokens(s string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		word := (unicode.IsLetter(r) || unicode.IsDigit(r)) && !cjk(r)
		if word {
			if start < 0 {
				start = i
			}
			i = next
			continue
		}
		if start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
		if !unicode.IsSpace(r) {
			out = append(out, [2]int{i, next})
		}
		i = next
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

func cjk(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
