package jsonobj

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

func TestSet(t *testing.T) {
	ms := []Member{{"retrieved", []byte(`[{"id":"a#c1"}]`)}, {"retrieval", []byte(`{"k":1}`)}}
	tests := []struct{ name, in, want string }{
		{"append spaced", `{"id": "x", "query": "q"}`, `{"id": "x", "query": "q", "retrieved": [{"id":"a#c1"}], "retrieval": {"k":1}}`},
		{"append compact", `{"id":"x","n":1}`, `{"id":"x","n":1,"retrieved":[{"id":"a#c1"}],"retrieval":{"k":1}}`},
		{"replace in place", `{"id": "x", "retrieved": ["old", {"id": "}]"}], "z": null}`, `{"id": "x", "retrieved": [{"id":"a#c1"}], "z": null, "retrieval": {"k":1}}`},
		{"replace both keeps order", `{"retrieval": 5, "id": "x", "retrieved": []}`, `{"retrieval": {"k":1}, "id": "x", "retrieved": [{"id":"a#c1"}]}`},
		{"empty object", `{}`, `{"retrieved": [{"id":"a#c1"}], "retrieval": {"k":1}}`},
		{"whitespace kept", "  { \"id\" :\t\"x\" }  ", "  { \"id\" :\t\"x\", \"retrieved\": [{\"id\":\"a#c1\"}], \"retrieval\": {\"k\":1} }  "},
		{"escaped key matched", `{"id": "x", "retri\u0065ved": 0}`, `{"id": "x", "retri\u0065ved": [{"id":"a#c1"}], "retrieval": {"k":1}}`},
		{"strings with braces", `{"q": "a \"}\" {[", "id": "y"}`, `{"q": "a \"}\" {[", "id": "y", "retrieved": [{"id":"a#c1"}], "retrieval": {"k":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Set([]byte(tt.in), ms)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestSetErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":tru}`, `{"a":"x}`,
		// Issue 10 item 1: a repeated key (also the last member) is an error, not a panic.
		`{"id":"a","retrieved":[],"retrieved":[]}`, `{"id":"a","retrieval":{},"retrieval":{}}`, `{"k":1,"k":2}`} {
		_, err := Set([]byte(in), []Member{{"k", []byte(`1`)}})
		assert.Error(t, err, in)
	}
}

func FuzzSet(f *testing.F) {
	f.Add([]byte(`{"id": "x", "retrieved": ["a"], "q": {"n": [1, 2]}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"id":"a","retrieved":[],"retrieved":[]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Set(in, []Member{{"retrieved", []byte(`[]`)}, {"retrieval", []byte(`{"k":10}`)}})
		var obj map[string]json.RawMessage
		if json.Unmarshal(in, &obj) != nil {
			return // not an object: Set may fail
		}
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) && se.Dup {
			return // a repeated key is refused
		}
		if err != nil {
			t.Fatalf("valid object %q: %v", in, err)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("output %q of %q is not JSON: %v", got, in, err)
		}
		assert.JSONEq(t, `[]`, string(out["retrieved"]))
		assert.JSONEq(t, `{"k":10}`, string(out["retrieval"]))
		for k, v := range obj {
			if k != "retrieved" && k != "retrieval" {
				assert.Equal(t, string(v), string(out[k]), "key %q", k)
			}
		}
	})
}

func TestSetDuplicateNamesKey(t *testing.T) {
	_, err := Set([]byte(`{"id":"a","retrieved":[],"retrieved":[]}`), []Member{{"retrieved", []byte(`[]`)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `duplicate key "retrieved"`)
}
