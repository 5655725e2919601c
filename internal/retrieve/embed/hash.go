package embed

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/text"
)

// DefaultHashDim is the default dimension of the hash embedder.
const DefaultHashDim = 1024

// Hash is the built-in offline embedder: feature hashing of terms (text.Tokens:
// lower-cased Unicode letters/digits, Latin accents folded). A term's weight is
// (1 + ln tf) · idf, idf = ln((N+1)/(df+1)) + 1 over the documents it was fitted on
// (the KB chunks); it is added at position fnv64a(term) mod dim with the sign of
// the hash's top bit (signed hashing, so collisions cancel in expectation), and
// the vector is scaled to unit length. It is lexical, not semantic: cosine
// similarity of these vectors is TF-IDF overlap of words, blind to synonyms and
// translations.
type Hash struct {
	dim int
	n   int
	df  map[string]int
}

// NewHash fits the IDF weights on docs. dim <= 0 means DefaultHashDim.
func NewHash(dim int, docs []string) *Hash {
	if dim <= 0 {
		dim = DefaultHashDim
	}
	h := &Hash{dim: dim, n: len(docs), df: map[string]int{}}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, t := range text.Tokens(d) {
			if !seen[t] {
				seen[t] = true
				h.df[t]++
			}
		}
	}
	return h
}

func (h *Hash) Name() string { return "hash" }

// Fingerprint names the algorithm, the terms' version (text.Version) and the
// dimension; the IDF weights are a function of the KB, which the collection
// fingerprint hashes separately. A kept collection whose vectors were made
// from other terms is rebuilt.
func (h *Hash) Fingerprint() string {
	return fmt.Sprintf("hash-v1:text=%d:dim=%d", text.Version, h.dim)
}

// Dim is the vector dimension.
func (h *Hash) Dim() int { return h.dim }

func (h *Hash) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i&0xff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = h.Vector(t)
	}
	return out, nil
}

// EmbedQueries embeds queries like documents, except that terms the KB never
// uses are left out: they cannot match any chunk, and would only add noise
// through hash collisions.
func (h *Hash) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i&0xff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = h.vector(t, h.n > 0)
	}
	return out, nil
}

// EmbedDocumentsInto writes the vectors of texts into dst (len(texts)*Dim()
// floats, row-major), the same vectors as EmbedDocuments, reusing one set of
// buffers for all texts instead of allocating per text.
func (h *Hash) EmbedDocumentsInto(ctx context.Context, texts []string, dst []float32) error {
	if len(dst) != len(texts)*h.dim {
		return fmt.Errorf("hash embedder: %d floats for %d texts of dimension %d", len(dst), len(texts), h.dim)
	}
	var sc scratch
	for i, t := range texts {
		if i&0xff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		unitInto(h.weightsInto(t, false, &sc), dst[i*h.dim:(i+1)*h.dim])
	}
	return nil
}

// IDF is the weight of term t.
func (h *Hash) IDF(t string) float64 {
	return math.Log(float64(h.n+1)/float64(h.df[t]+1)) + 1
}

// Vector embeds one document text. A text without terms gets the zero vector.
func (h *Hash) Vector(s string) []float32 { return h.vector(s, false) }

func (h *Hash) vector(s string, knownOnly bool) []float32 {
	out := make([]float32, h.dim)
	unitInto(h.weightsInto(s, knownOnly, &scratch{}), out)
	return out
}

// scratch holds the buffers of weightsInto, reused from text to text.
type scratch struct {
	tf    map[string]int
	terms []string
	acc   []float64
}

// weightsInto returns the signed, hashed term weights of s (before
// normalisation) in sc.acc, valid until the next call with sc.
func (h *Hash) weightsInto(s string, knownOnly bool, sc *scratch) []float64 {
	if sc.tf == nil {
		sc.tf = map[string]int{}
	}
	tf := sc.tf
	clear(tf)
	for _, t := range text.Tokens(s) {
		if knownOnly && h.df[t] == 0 {
			continue
		}
		tf[t]++
	}
	// Terms in sorted order: when several land in one position, their float64
	// sum must not depend on map iteration order.
	terms := sc.terms[:0]
	for t := range tf {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	sc.terms = terms
	if len(sc.acc) != h.dim {
		sc.acc = make([]float64, h.dim)
	}
	acc := sc.acc
	clear(acc)
	for _, t := range terms {
		w := (1 + math.Log(float64(tf[t]))) * h.IDF(t)
		x := fnv64a(t)
		if x>>63 == 1 {
			w = -w
		}
		acc[x%uint64(len(acc))] += w
	}
	return acc
}

// unitInto writes acc scaled to unit length as float32 into out (len(acc));
// the zero vector stays zero.
func unitInto(acc []float64, out []float32) {
	norm := 0.0
	for _, v := range acc {
		norm += float64(v * v) // the conversion forbids a fused multiply-add (same sum on every CPU)
	}
	if norm == 0 {
		clear(out)
		return
	}
	inv := 1 / math.Sqrt(norm)
	for i, v := range acc {
		out[i] = float32(v * inv)
	}
}

// fnv64a is the 64-bit FNV-1a hash of s (as hash/fnv computes it).
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
