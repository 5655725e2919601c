package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
)

// refScores reads a TEI /rerank answer for n texts apart from the client,
// through encoding/json's token stream with numbers read by strconv: an array
// of objects, each with an integer "index" in 0..n-1 (each once) and a number
// "score" (keys matched up to case, as encoding/json does); ok is false for
// anything else, or an object with two keys equal up to case.
func refScores(data []byte, n int) ([]float64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	// Keys twice (exactly or up to case) are looked for in the bytes with a
	// second token pass: Decode into a map keeps only the last.
	if ambiguousKeys(data) {
		return nil, false
	}
	items, isArr := v.([]any)
	if !isArr {
		return nil, false
	}
	out := make([]float64, n)
	seen := make([]bool, n)
	for _, it := range items {
		obj, isObj := it.(map[string]any)
		if !isObj {
			return nil, false
		}
		var idx, score json.Number
		for k, x := range obj {
			num, isNum := x.(json.Number)
			switch {
			case strings.EqualFold(k, "index"):
				if !isNum {
					return nil, false
				}
				idx = num
			case strings.EqualFold(k, "score"):
				if !isNum {
					return nil, false
				}
				score = num
			}
		}
		i, err := strconv.Atoi(string(idx))
		if err != nil || i < 0 || i >= n || seen[i] {
			return nil, false
		}
		s, err := strconv.ParseFloat(string(score), 64)
		if err != nil {
			return nil, false
		}
		out[i], seen[i] = s, true
	}
	for _, ok := range seen {
		if !ok {
			return nil, false
		}
	}
	return out, true
}

// ambiguousKeys reports an object of data with two keys equal up to case.
func ambiguousKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   []string
		key    bool // the next string is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, isStr := tok.(string); isStr && top != nil && top.object && top.key {
			for _, p := range top.keys {
				if strings.EqualFold(p, s) {
					return true
				}
			}
			top.keys = append(top.keys, s)
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a key or '}' is next
		}
	}
}

// FuzzRerankAnswer holds the reranker client to a reader of TEI's /rerank
// answer written apart from it (refScores): an accepted answer is one that
// reader accepts, with the same score for each text; one it refuses (not an
// array of {"index", "score"}, an index missing, repeated or out of range, a
// text without a score, two keys that differ only in case) is refused.
func FuzzRerankAnswer(f *testing.F) {
	for _, s := range []struct {
		body string
		n    uint8
	}{
		{`[{"index":1,"score":0.9},{"index":0,"score":-1.5e-3}]`, 2},
		{`[{"index":0,"score":1,"text":"x"}]`, 1},
		{`[{"index":0,"score":1},{"index":0,"score":2}]`, 2},
		{`[{"index":0,"score":1},{"index":1,"score":2},{"index":0,"score":3}]`, 2},
		{`[{"index":0}]`, 1},
		{`[{"index":0,"score":null}]`, 1},
		{`[{"index":2,"score":1}]`, 1},
		{`[{"index":0.0,"score":1}]`, 1},
		{`[{"index":0,"score":1e400}]`, 1},
		{`[{"index":0,"score":1,"Score":2}]`, 1},
		{`[{"index":0,"score":1,"score":2}]`, 1},
		{`{"error":"overloaded"}`, 1},
		{`[] []`, 1},
	} {
		f.Add([]byte(s.body), s.n)
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		texts := make([]string, (int(n)+2)%3+1) // n texts for n in 1..3
		for i := range texts {
			texts[i] = "t" + strconv.Itoa(i)
		}
		c, err := New("http://rerank.test", jsontest.AnswerClient(body), httpretry.Policy{Attempts: 1})
		require.NoError(t, err)
		got, err := c.Scores(context.Background(), "q", texts)
		want, ok := refScores(body, len(texts))
		jsontest.Agree(t, body, want, ok, got, err)
	})
}

// An answer item with two keys that differ only in case (or one key twice)
// can be read two ways; the reranker refuses it, as the chat client does.
func TestScoresRefusesFoldedKeys(t *testing.T) {
	for _, body := range []string{
		`[{"index":0,"score":1,"Score":2}]`,
		`[{"index":0,"score":1,"score":2}]`,
		`[{"index":1,"INDEX":0,"score":1}]`,
	} {
		c, err := New("http://rerank.test", jsontest.AnswerClient([]byte(body)), httpretry.Policy{Attempts: 1})
		require.NoError(t, err)
		_, err = c.Scores(context.Background(), "q", []string{"a"})
		assert.ErrorContains(t, err, "malformed response", body)
	}
}
