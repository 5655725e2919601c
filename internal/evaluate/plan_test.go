package evaluate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

func validOptions() Options {
	return Options{KB: "kb.jsonl", Out: "out", JudgeURL: "http://judge:8000", JudgeModel: "jm", K: 10, PerLocale: 20, Repeat: 1, Concurrency: 4, Bootstrap: 1000}
}

// Validate refuses each bad value with the option that holds it, in the order
// the stages would, and fills the generator's defaults from the judge's.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(o *Options)
		want   option.Error
	}{
		{"kb", func(o *Options) { o.KB = "" }, option.Error{Option: "kb", Required: true}},
		{"k", func(o *Options) { o.K = 1001 }, option.Error{Option: "k", Rule: "must be between 1 and 1000"}},
		{"per-locale", func(o *Options) { o.PerLocale = 0 }, option.Error{Option: "per-locale", Rule: "must be at least 1"}},
		{"repeat", func(o *Options) { o.Repeat = 11 }, option.Error{Option: "repeat", Rule: "must be between 1 and 10"}},
		{"concurrency", func(o *Options) { o.Concurrency = 0 }, option.Error{Option: "concurrency", Rule: "must be between 1 and 256"}},
		{"max-requests", func(o *Options) { o.MaxRequests = -1 }, option.Error{Option: "max-requests", Rule: "must be 0 (no limit) or more"}},
		{"out", func(o *Options) { o.Out = "" }, option.Error{Option: "out", Required: true, Arg: "DIR"}},
		{"judge-url", func(o *Options) { o.JudgeURL = "" }, option.Error{Option: "judge-url", Required: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := validOptions()
			tc.mutate(&o)
			var oe *option.Error
			require.ErrorAs(t, o.Validate(), &oe)
			assert.Equal(t, tc.want, *oe)
		})
	}
	o := validOptions()
	o.Price = "x"
	var oe *option.Error
	require.ErrorAs(t, o.Validate(), &oe)
	assert.Equal(t, "price-per-1k", oe.Option)
	require.Error(t, oe.Err)

	o = validOptions()
	require.NoError(t, o.Validate())
	assert.Equal(t, [2]string{"http://judge:8000", "jm"}, [2]string{o.GeneratorURL, o.GeneratorModel})
}

// The plan's stages read the files the earlier stages write.
func TestPlanChainsTheStages(t *testing.T) {
	o := validOptions()
	require.NoError(t, o.Validate())
	p := NewPlan(&o)
	require.NotNil(t, p.Generate)
	require.Len(t, p.Retrieves, 3)
	for i, r := range p.Retrieves {
		assert.Equal(t, p.Generate.Out, r.Cases)
		assert.Equal(t, r.Out, p.Judge.Runs[i].Path)
		assert.Equal(t, r.Out, p.Compare.Files.Runs[i].Path)
	}
	assert.Equal(t, p.Judge.QrelsOut, p.Compare.Files.Qrels)
	assert.Equal(t, p.Generate.Out, p.Compare.Files.Queries, "the generated cases are the comparison's queries")
	assert.Equal(t, []string{"dense", "lexical", "hybrid"}, p.Names())
	args := p.Args(&o, "--comment", "never")
	require.Len(t, args, 6, "generate, three retrieves, judge, compare")
	assert.Contains(t, args[5], "never", "the caller's flags are on compare's line")

	stages := p.Stages(&o, "--comment", "never")
	var names []string
	for i, s := range stages {
		assert.Equal(t, args[i], s.Args, s.Name)
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"generate", "retrieve", "retrieve", "retrieve", "judge", "compare"}, names)
}

// A server URL given with credentials (user information; a key as a query
// parameter, as Gemini's API takes it besides its x-goog-api-key header:
// ai.google.dev/gemini-api/docs/api-key) is not written into the stages'
// command lines (stages.txt, the stage shown as it starts): *** instead.
func TestStagesHideURLCredentials(t *testing.T) {
	const pw, key, tok = "pw-Wn3Kd7Fh1Sx5", "AIzaTg6Bp2Lc8Mv4", "tok-Yr9Qe3Uj7Ho1"
	o := validOptions()
	o.JudgeURL = "https://user:" + pw + "@judge.example/v1"
	o.GeneratorURL = "https://gen.example/v1?key=" + key
	o.ChromaURL = "https://" + tok + "@chroma.example"
	o.RerankURL = "http://user:" + pw + "@rerank:8080"
	o.Retrieval.EmbedderURL = "http://embed.example/v1?api_key=" + key
	require.NoError(t, o.Validate())
	p := NewPlan(&o)
	var all strings.Builder
	for _, s := range p.Stages(&o) {
		all.WriteString(s.String() + "\n")
	}
	for _, s := range []string{pw, key, tok} {
		assert.NotContains(t, all.String(), s[:8])
	}
	assert.Contains(t, all.String(), "https://***@judge.example/v1")
	assert.Contains(t, all.String(), "https://gen.example/v1?key=***")
	assert.Contains(t, all.String(), "--judge-model jm", "the rest as it was")
}
