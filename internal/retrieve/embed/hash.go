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

// Fingerprint names the algorithm and dimension; the IDF weights are a function
// of the KB, which the collection fingerprint hashes separately.
func (h *Hash) Fingerprint() string { return fmt.Sprintf("hash-v1:dim=%d", h.dim) }

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

// IDF is the weight of term t.
func (h *Hash) IDF(t string) float64 {
	return math.Log(float64(h.n+1)/float64(h.df[t]+1)) + 1
}

// Vector embeds one document text. A text without terms gets the zero vector.
func (h *Hash) Vector(s string) []float32 { return h.vector(s, false) }

func (h *Hash) vector(s string, knownOnly bool) []float32 {
	return unit(h.weights(s, knownOnly))
}

// weights returns the signed, hashed term weights of s (before normalisation).
func (h *Hash) weights(s string, knownOnly bool) []float64 {
	tf := map[string]int{}
	for _, t := range text.Tokens(s) {
		if knownOnly && h.df[t] == 0 {
			continue
		}
		tf[t]++
	}
	// Terms in sorted order: when several land in one position, their float64
	// sum must not depend on map iteration order.
	terms := make([]string, 0, len(tf))
	for t := range tf {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	acc := make([]float64, h.dim)
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

// unit scales acc to unit length as float32 (the zero vector stays zero).
func unit(acc []float64) []float32 {
	norm := 0.0
	for _, v := range acc {
		norm += float64(v * v) // the conversion forbids a fused multiply-add (same sum on every CPU)
	}
	out := make([]float32, len(acc))
	if norm == 0 {
		return out
	}
	inv := 1 / math.Sqrt(norm)
	for i, v := range acc {
		out[i] = float32(v * inv)
	}
	return out
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
