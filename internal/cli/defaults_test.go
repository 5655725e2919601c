package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// Each documented default and refusal of a retrieval and a check, through both
// front ends: the CLI's parse (retrieve's and evaluate's flags, resolved by
// retrieve's Resolve) and the library's (gate.LiveOptions.Resolve, the same
// function). The resolved options must agree, and so must the refusals, each
// named by its own front end.
func TestDefaultsAgreeInBothFrontEnds(t *testing.T) {
	type resolved struct {
		Strategy             string
		K                    int
		Store, URL, Embedder string
	}
	required := []string{"--kb", "kb", "--cases", "c.jsonl", "--out", "o.jsonl"}
	for _, tc := range []struct {
		name    string
		args    []string         // retrieve's flags
		lib     gate.LiveOptions // the same settings in the library
		want    resolved         // when it is not refused
		err     string           // the option refused ("" with refused: a rule between options)
		refused bool
	}{
		{name: "the defaults", want: resolved{"hybrid", 10, "memory", "", "hash"}},
		{name: "a store URL implies chroma", args: []string{"--chroma-url", "http://c:8000"}, lib: gate.LiveOptions{StoreURL: "http://c:8000"},
			want: resolved{"hybrid", 10, "chroma", "http://c:8000", "hash"}},
		{name: "strategy and k", args: []string{"--strategy", "lexical", "--k", "3"}, lib: gate.LiveOptions{Strategy: "lexical", Retrieve: 3},
			want: resolved{"lexical", 3, "memory", "", "hash"}},
		{name: "openai defaults to OpenAI's URL, which needs a model", args: []string{"--embedder", "openai"}, lib: gate.LiveOptions{Embedder: "openai"},
			err: "embedder-model", refused: true},
		{name: "openai at OpenAI's URL with a model", args: []string{"--embedder", "openai", "--embedder-model", "text-embedding-3-small"},
			lib: gate.LiveOptions{Embedder: "openai", EmbedderModel: "text-embedding-3-small"}, want: resolved{"hybrid", 10, "memory", "", "openai"}},
		{name: "openai's URL checked", args: []string{"--embedder", "openai", "--embedder-url", "ftp://x"},
			lib: gate.LiveOptions{Embedder: "openai", EmbedderURL: "ftp://x"}, err: "embedder-url", refused: true},
		{name: "ollama needs a model", args: []string{"--embedder", "ollama"}, lib: gate.LiveOptions{Embedder: "ollama"}, err: "embedder-model", refused: true},
		{name: "an unknown strategy", args: []string{"--strategy", "bm25"}, lib: gate.LiveOptions{Strategy: "bm25"}, err: "strategy", refused: true},
		{name: "an unknown store", args: []string{"--store", "redis"}, lib: gate.LiveOptions{Store: "redis"}, err: "store", refused: true},
		{name: "a collection needs chroma", args: []string{"--collection", "c"}, lib: gate.LiveOptions{Collection: "c"}, refused: true}, // a rule between options
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli, cerr := parseRetrieve(&Env{Getenv: func(string) string { return "" }}, append(append([]string{}, required...), tc.args...))
			lib, lerr := tc.lib.Resolve()
			if tc.refused {
				require.Error(t, cerr)
				require.Error(t, lerr)
				var lo *option.Error
				require.ErrorAs(t, lerr, &lo)
				assert.Equal(t, tc.err, lo.Option, "the option refused: %v", lerr)
				t.Logf("%v\n%v", cerr, lerr)
				assert.Equal(t, ExitInput, ExitCode(cerr))
				assert.True(t, strings.HasPrefix(cerr.Error(), "retrieve: "), cerr.Error())
				assert.True(t, strings.HasPrefix(lerr.Error(), "gate: "), lerr.Error())
				for flag, field := range map[string]string{"embedder-model": "EmbedderModel", "embedder-url": "EmbedderURL", "strategy": "Strategy", "store": "Store", "collection": "Collection"} {
					if strings.Contains(cerr.Error(), "--"+flag) {
						assert.Contains(t, lerr.Error(), "LiveOptions."+field, "each names the option its way: %v / %v", cerr, lerr)
					}
				}
				assert.NotRegexp(t, `--[a-z]`, strings.ReplaceAll(lerr.Error(), "LiveOptions.", ""), "the library names its fields, not flags")
				return
			}
			require.NoError(t, cerr)
			require.NoError(t, lerr)
			r := cli.run
			assert.Equal(t, tc.want, resolved{r.Strategy, r.K, r.Store, r.StoreURL, r.Embedder}, "the CLI")
			assert.Equal(t, tc.want, resolved{string(lib.Strategy), lib.Retrieve, string(lib.Store), lib.StoreURL, string(lib.Embedder)}, "the library")
			assert.Equal(t, r.EmbedderURL, lib.EmbedderURL, "openai's URL left to the embedder's default in both")
		})
	}

	// evaluate's retrieve stages take retrieve's defaults.
	o, _ := planFor(t, nil)
	lib, err := gate.LiveOptions{}.Resolve()
	require.NoError(t, err)
	assert.Equal(t, resolved{Store: string(lib.Store), K: lib.Retrieve, Embedder: string(lib.Embedder)}, resolved{Store: o.Retrieval.Store, K: o.K, Embedder: o.Retrieval.Embedder})

	// check's reference locale.
	co, err := parseCheck(&Env{Getenv: func(string) string { return "" }}, []string{"--cases", "c.jsonl", "--kb", "kb"})
	require.NoError(t, err)
	assert.Equal(t, "en", co.run.ReferenceLocale)
	assert.Equal(t, co.run.ReferenceLocale, lib.Check.ReferenceLocale)
}

// check's k, resolved from the data by the one check.ResolveK: the k the
// cases record, else 5, in both front ends.
func TestCheckKAgreesInBothFrontEnds(t *testing.T) {
	dir := t.TempDir()
	kbPath := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kbPath, []byte(`{"id": "a", "text": "x"}`+"\n"), 0o600))
	kb, err := gate.LoadKB(context.Background(), kbPath)
	require.NoError(t, err)
	for _, tc := range []struct {
		cases string
		k     int
	}{
		{`{"id": "q", "query": "x", "must_cite_one_of": ["a"], "retrieved": [{"id": "a"}]}` + "\n", 5},
		{`{"id": "q", "query": "x", "must_cite_one_of": ["a"], "retrieved": [{"id": "a"}], "retrieval": {"k": 3}}` + "\n", 3},
	} {
		path := filepath.Join(dir, "cases.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(tc.cases), 0o600))
		js := filepath.Join(dir, "c.json")
		env, _, _ := checkEnv("")
		require.NoError(t, NewCmdCheck(NewFactory(env), nil).Run(context.Background(), []string{"--cases", path, "--kb", kbPath, "--json", js, "--comment", "never"}))
		b, err := os.ReadFile(js)
		require.NoError(t, err)
		var doc struct{ K int }
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.Equal(t, tc.k, doc.K, "the CLI")

		rep, err := gate.Check(context.Background(), strings.NewReader(tc.cases), kb, gate.Options{})
		require.NoError(t, err)
		var lb bytes.Buffer
		require.NoError(t, rep.WriteJSON(&lb))
		require.NoError(t, json.Unmarshal(lb.Bytes(), &doc))
		assert.Equal(t, tc.k, doc.K, "the library")
	}
}
