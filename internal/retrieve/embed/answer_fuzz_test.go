package embed

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
)

// refVector is a JSON array of numbers as float32s, each read with strconv;
// null is 0 (encoding/json leaves the element zero). ok is false for anything
// else, or a number out of float32's range.
func refVector(v any) ([]float32, bool) {
	if v == nil {
		return nil, true
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, false
	}
	out := make([]float32, len(arr))
	for i, x := range arr {
		if x == nil {
			continue
		}
		num, isNum := x.(json.Number)
		if !isNum {
			return nil, false
		}
		f, err := strconv.ParseFloat(string(num), 32)
		if err != nil {
			return nil, false
		}
		out[i] = float32(f)
	}
	return out, true
}

// refValid is the batching's rule on the vectors: one per text, none empty or
// all zero, one dimension.
func refValid(vecs [][]float32, n int) bool {
	if len(vecs) != n {
		return false
	}
	for _, v := range vecs {
		if len(v) == 0 || allZero(v) || len(v) != len(vecs[0]) {
			return false
		}
	}
	return true
}

// refList decodes an answer for n texts whose object holds its list at key,
// and returns the list's items (nil when the key is missing or null). done
// reports that the answer is decided without them, ok then telling whether a
// strict reader takes it: not JSON, two readings, a list that is not one
// (refused); null for no texts (taken).
func refList(data []byte, n int, key string) (items []any, done, ok bool) {
	v, ok, ambiguous := jsontest.Decode(data)
	if !ok || ambiguous {
		return nil, true, false
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil, true, v == nil && n == 0
	}
	list := jsontest.Field(obj, key)
	items, isArr := list.([]any)
	if list != nil && !isArr {
		return nil, true, false
	}
	return items, false, true
}

// refOpenAI reads an /v1/embeddings answer for n texts apart from the client:
// {"data": [{"index": I, "embedding": [...]}, ...]}, each index 0..n-1 once (a
// missing or null index is 0, as encoding/json leaves it). ok is false when a
// strict reader must refuse it.
func refOpenAI(data []byte, n int) ([][]float32, bool) {
	items, done, ok := refList(data, n, "data")
	if done {
		return nil, ok
	}
	out := make([][]float32, len(items))
	filled := make([]bool, len(items))
	for _, it := range items {
		var item map[string]any
		if it != nil {
			if item, ok = it.(map[string]any); !ok {
				return nil, false
			}
		}
		// Every item names its text: an item without "index" (or with a
		// null one) is refused, not read as text 0.
		num, isNum := jsontest.Field(item, "index").(json.Number)
		if !isNum {
			return nil, false
		}
		idx, err := strconv.Atoi(string(num))
		if err != nil {
			return nil, false
		}
		e := jsontest.Field(item, "embedding")
		vec, ok := refVector(e)
		if !ok || idx < 0 || idx >= len(items) || filled[idx] {
			return nil, false
		}
		out[idx], filled[idx] = vec, true
	}
	return out, refValid(out, n)
}

// refOllama reads an /api/embed answer for n texts apart from the client:
// {"embeddings": [[...], ...]}, one vector per text in order.
func refOllama(data []byte, n int) ([][]float32, bool) {
	items, done, ok := refList(data, n, "embeddings")
	if done {
		return nil, ok
	}
	out := make([][]float32, len(items))
	for i, it := range items {
		if out[i], ok = refVector(it); !ok {
			return nil, false
		}
	}
	return out, refValid(out, n)
}

// fuzzAnswerSeeds are answers for one to three texts, valid and not.
var fuzzAnswerSeeds = []struct {
	body string
	n    uint8
}{
	{`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-2e-3]}],"model":"m"}`, 1},
	{`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, 2},
	{`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, 2},
	{`{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[3]}]}`, 2},
	{`{"data":[{"index":0,"embedding":[0,0]}]}`, 1},
	{`{"data":[{"embedding":[1]}]}`, 1},
	{`{"data":[{"index":null,"embedding":[1]},{"index":1,"embedding":[2]}]}`, 2},
	{`{"data":[{"index":0,"embedding":[1e39]}]}`, 1},
	{`{"data":[{"index":0,"embedding":[1]}],"DATA":[{"index":0,"embedding":[2]}]}`, 1},
	{`{"data":[{"index":0,"embedding":[1],"Embedding":[2]}]}`, 1},
	{`{"embeddings":[[1,2],[3,4],[5,6]]}`, 3},
	{`{"embeddings":[[1,2]],"Embeddings":[[3,4]]}`, 1},
	{`{"embeddings":[[1,2],[3]]}`, 2},
	{`{"embeddings":[[1,null]]}`, 1},
	{`{"embeddings":[[1,2],[0,-0]]}`, 2},
	{`{"data":[]} {}`, 1},
	{`{"data":[{"index":0,"embedding":[1]}],"data":[{"index":0,"embedding":[2]}]}`, 1},
	{`{"data":[{"index":0,"embedding":[1]}],"daſa":1}`, 1},
	{`[]`, 1},
	{`null`, 1},
}

// FuzzOpenAIAnswer holds the OpenAI-compatible embeddings client (OpenAI, TEI,
// vLLM) to a reader of the answer written apart from it (generic JSON,
// numbers read with strconv): an accepted answer is one that reader accepts
// too, with the same vector for each text; an answer it refuses (malformed,
// an item without an index, indexes not 0..n-1 once each, a vector empty, all zero or of another
// dimension, two keys that differ only in case) is refused.
func FuzzOpenAIAnswer(f *testing.F) {
	for _, s := range fuzzAnswerSeeds {
		f.Add([]byte(s.body), s.n)
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		texts := make([]string, (int(n)+2)%3+1) // n texts for n in 1..3
		for i := range texts {
			texts[i] = "t" + strconv.Itoa(i)
		}
		e, err := NewOpenAI(OpenAIConfig{URL: "http://embed.test", Batching: Batching{Size: len(texts)},
			HTTP: jsontest.AnswerClient(body), Policy: httpretry.Policy{Attempts: 1}})
		require.NoError(t, err)
		got, err := e.EmbedDocuments(context.Background(), texts)
		want, ok := refOpenAI(body, len(texts))
		jsontest.Agree(t, body, want, ok, got, err)
	})
}

// FuzzOllamaAnswer holds the Ollama embeddings client to a reader of the
// /api/embed answer written apart from it, as FuzzOpenAIAnswer does.
func FuzzOllamaAnswer(f *testing.F) {
	for _, s := range fuzzAnswerSeeds {
		f.Add([]byte(s.body), s.n)
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		texts := make([]string, (int(n)+2)%3+1) // n texts for n in 1..3
		for i := range texts {
			texts[i] = "t" + strconv.Itoa(i)
		}
		e, err := NewOllama(OllamaConfig{URL: "http://embed.test", Model: "m", Batching: Batching{Size: len(texts)},
			HTTP: jsontest.AnswerClient(body)})
		require.NoError(t, err)
		got, err := e.EmbedDocuments(context.Background(), texts)
		want, ok := refOllama(body, len(texts))
		jsontest.Agree(t, body, want, ok, got, err)
	})
}
