package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func TestCheckFloorFlags(t *testing.T) {
	base := []string{"--cases", "c.jsonl", "--kb", "kb.jsonl"}
	tests := []struct {
		name    string
		args    []string
		inputs  map[string]string // Action inputs (GITHUB_ACTIONS=true when set)
		want    []string          // canonical floors
		wantErr string
	}{
		{"repeatable", []string{"--floor", "retrieval_ndcg_at_k=0.5", "--floor", "retrieval_hit_at_k@locale:ES-419=0.6"}, nil,
			[]string{"retrieval_ndcg_at_k@overall=0.5", "retrieval_hit_at_k@locale:es-419=0.6"}, ""},
		{"floors: one per line, blank lines and comments skipped", []string{"--floors", "retrieval_hit_at_k=0.7\n\n# per type\nretrieval_recall_at_k@type:golden=0.6\n"}, nil,
			[]string{"retrieval_hit_at_k@overall=0.7", "retrieval_recall_at_k@type:golden=0.6"}, ""},
		{"the floors Action input", nil, map[string]string{"INPUT_FLOORS": "retrieval_hit_at_k=0.7\nretrieval_hit_at_k@locale:en=0.8"},
			[]string{"retrieval_hit_at_k@overall=0.7", "retrieval_hit_at_k@locale:en=0.8"}, ""},
		{"shorthand and floor on another group", []string{"--min-hit", "0.7", "--floor", "retrieval_hit_at_k@locale:en=0.8"}, nil,
			[]string{"retrieval_hit_at_k@locale:en=0.8"}, ""},
		{"unknown measure", []string{"--floor", "hit=0.5"}, nil, nil,
			`check: --floor: "hit=0.5": unknown measure "hit" (measures: retrieval_hit_at_k, retrieval_recall_at_k, retrieval_ndcg_at_k)`},
		{"unknown group", []string{"--floor", "retrieval_hit_at_k@es=0.5"}, nil, nil,
			`check: --floor: "retrieval_hit_at_k@es=0.5": unknown group "es" (groups: overall, type:NAME, locale:TAG)`},
		{"two floors on one target", []string{"--floor", "retrieval_hit_at_k=0.5", "--floor", "retrieval_hit_at_k@overall=0.6"}, nil, nil,
			`check: --floor: two floors on retrieval_hit_at_k@overall (retrieval_hit_at_k@overall=0.5 and retrieval_hit_at_k@overall=0.6): give one`},
		{"--min-hit and a floor on the same target", []string{"--min-hit", "0.7", "--floor", "retrieval_hit_at_k=0.8"}, nil, nil,
			"check: --min-hit and --floor retrieval_hit_at_k@overall=0.8 both set a floor on retrieval_hit_at_k@overall; give one"},
		{"--min-recall and a floor on the same target", []string{"--min-recall", "0.7", "--floor", "retrieval_recall_at_k@overall=0.8"}, nil, nil,
			"check: --min-recall and --floor retrieval_recall_at_k@overall=0.8 both set a floor on retrieval_recall_at_k@overall; give one"},
		{"a bad Action input", nil, map[string]string{"INPUT_FLOORS": "retrieval_hit_at_k=2"}, nil,
			`action input "floors": "retrieval_hit_at_k=2": "retrieval_hit_at_k=2": 2 is outside [0,1] (the range of retrieval_hit_at_k)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _, _ := checkEnv("")
			if tt.inputs != nil {
				env.Getenv = func(k string) string {
					if k == "GITHUB_ACTIONS" {
						return "true"
					}
					return tt.inputs[k]
				}
			}
			o, err := parseCheck(env, append(append([]string{}, base...), tt.args...))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				assert.Equal(t, ExitInput, ExitCode(err))
				return
			}
			require.NoError(t, err)
			var got []string
			for _, s := range o.run.Floors {
				got = append(got, s.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCompareGateFlags(t *testing.T) {
	base := []string{"--qrels", "q.txt", "--run", "a=a.run", "--run", "b=b.run"}
	tests := []struct {
		name    string
		args    []string
		want    floor.List
		wantErr string
	}{
		{"floor and fail-if-beaten", []string{"--gate-strategy", "a", "--floor", "ndcg_at_k=0.4", "--fail-if-beaten"},
			floor.List{{Measure: "ndcg_at_k", Group: outcome.GroupOverall, Value: 0.4}}, ""},
		{"fail-if-beaten alone", []string{"--gate-strategy", "b", "--fail-if-beaten"}, nil, ""},
		{"floor without a strategy", []string{"--floor", "ndcg_at_k=0.4"}, nil,
			"compare: --floor and --fail-if-beaten need --gate-strategy NAME (the strategy you run in production)"},
		{"fail-if-beaten without a strategy", []string{"--fail-if-beaten"}, nil,
			"compare: --floor and --fail-if-beaten need --gate-strategy NAME (the strategy you run in production)"},
		{"a strategy and no gate", []string{"--gate-strategy", "a"}, nil,
			`compare: --gate-strategy "a" needs --floor MEASURE=F or --fail-if-beaten`},
		{"an unknown strategy", []string{"--gate-strategy", "c", "--fail-if-beaten"}, nil,
			`compare: --gate-strategy "c" is not the name of a --run (a,b)`},
		{"check's measure", []string{"--gate-strategy", "a", "--floor", "retrieval_hit_at_k=0.4"}, nil,
			`compare: --floor: "retrieval_hit_at_k=0.4": unknown measure "retrieval_hit_at_k" (measures: ` + strings.Join(metrics.GradedKeys, ", ") + `)`},
		{"a group", []string{"--gate-strategy", "a", "--floor", "ndcg_at_k@locale:en=0.4"}, nil,
			`compare: --floor: "ndcg_at_k@locale:en=0.4": unknown group "locale:en" (groups: overall)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _, _ := checkEnv("")
			o, err := parseCompare(env, append(append([]string{}, base...), tt.args...))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				assert.Equal(t, ExitInput, ExitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, o.run.Gate.Floors)
		})
	}
}

// --max-drop reads a group in the grammar of --floor, the quoted form
// included, and its help says so as --floor's does: a type name or locale tag
// with '=', surrounding space, a leading '"' or unprintable characters is
// written as a Go quoted string.
func TestCheckMaxDropQuotedGroup(t *testing.T) {
	base := []string{"--cases", "c.jsonl", "--kb", "kb.jsonl", "--baseline", "b.jsonl.gz"}
	for _, tt := range []struct {
		expr string
		want string // canonical, as floor.Spec.String writes it
	}{
		{`retrieval_hit_at_k@type:"a=b"=0.1`, `retrieval_hit_at_k@type:"a=b"=0.1`},
		{`retrieval_hit_at_k@type:" lead, with space"=0.1`, `retrieval_hit_at_k@type:" lead, with space"=0.1`},
		{`retrieval_hit_at_k@type:with space, comma=0.1`, `retrieval_hit_at_k@type:with space, comma=0.1`}, // bare: only '=', surrounding space, a leading '"' or unprintable characters need quotes
		{`retrieval_recall_at_k@locale:"x\ty"=0.2`, `retrieval_recall_at_k@locale:"x\ty"=0.2`},
	} {
		env, _, _ := checkEnv("")
		o, err := parseCheck(env, append(append([]string{}, base...), "--max-drop", tt.expr))
		require.NoError(t, err, tt.expr)
		require.Len(t, o.run.GroupMaxDrop, 1, tt.expr)
		assert.Equal(t, tt.want, o.run.GroupMaxDrop[0].String())
	}

	env, stdout, stderr := checkEnv("")
	Run(t.Context(), env, []string{"check", "--help"})
	help := stdout.String() + stderr.String()
	i := strings.Index(help, "-max-drop MEASURE[@GROUP]=F")
	require.GreaterOrEqual(t, i, 0, help)
	entry, _, _ := strings.Cut(help[i+1:], "\n  -") // up to the next flag
	assert.Contains(t, strings.Join(strings.Fields(entry), " "), `a NAME or TAG with '=', surrounding space, a leading '"' or unprintable characters is written as a Go quoted string: @type:"a=b"=0.5`, entry)
	assert.Contains(t, entry, "indicative only", entry)
}
