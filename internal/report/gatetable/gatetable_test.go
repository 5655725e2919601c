package gatetable

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name string
		es   []Entry
		want string
	}{
		{"none", nil, ""},
		{
			"a floor that fails, with its reason as a note",
			[]Entry{{Name: "min_hit", Group: "overall", Measure: "retrieval_hit_at_k", Status: outcome.Fail, N: 4, Threshold: ptr(0.9), Value: ptr(0.75), Reason: "below the floor"}},
			Header + "| min\\_hit<br><sub>overall · retrieval\\_hit\\_at\\_k</sub> | ❌ fail [1] | 0.900 | 0.750 | 4 |\n\n[1] **min\\_hit**: below the floor\n",
		},
		{
			"integrity and lock gates have no second line; n = 0 and absent numbers are the missing glyph",
			[]Entry{
				{Name: "integrity", Status: outcome.Pass, N: 5},
				{Name: "lock", Status: outcome.Fail, Reason: "the lock changed since origin/main"},
			},
			Header + "| integrity | ✅ pass | — | — | 5 |\n| lock | ❌ fail [1] | — | — | — |\n\n[1] **lock**: the lock changed since origin/main\n",
		},
		{
			"a group without a measure shows the missing glyph for it; notes are numbered in order, one per line",
			[]Entry{
				{Name: "non_empty", Group: "overall", Status: outcome.Pass, N: 4},
				{Name: "min_recall", Group: "overall", Measure: "retrieval_recall_at_k", Status: outcome.Off, N: 4, Threshold: ptr(math.NaN()), Value: ptr(0.625)},
				{Name: "a", Status: outcome.Fail, Reason: "first"},
				{Name: "b", Status: outcome.Fail, Reason: "second"},
			},
			Header + "| non\\_empty<br><sub>overall · —</sub> | ✅ pass | — | — | 4 |\n" +
				"| min\\_recall<br><sub>overall · retrieval\\_recall\\_at\\_k</sub> | off | — | 0.625 | 4 |\n" +
				"| a | ❌ fail [1] | — | — | — |\n| b | ❌ fail [2] | — | — | — |\n\n[1] **a**: first  \n[2] **b**: second\n",
		},
		{
			"user-controlled names, groups and reasons are escaped",
			[]Entry{{Name: "floor:x@locale:a|b", Group: "locale:a|b", Measure: "m", Status: outcome.Fail, N: 3, Threshold: ptr(0.5), Value: ptr(0.25), Reason: "<script> @team"}},
			Header + "| " + format.EscapeMarkdown("floor:x@locale:a|b") + "<br><sub>locale:a\\|b · m</sub> | ❌ fail [1] | 0.500 | 0.250 | 3 |\n\n[1] **" +
				format.EscapeMarkdown("floor:x@locale:a|b") + "**: &lt;script&gt; &#64;&#8203;team\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			Markdown(&b, tt.es)
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// Every field of an entry reaches the Markdown (nothing of the terminal table is
// lost): name, group, measure, status, threshold, value, n and reason.
func TestMarkdownKeepsEveryField(t *testing.T) {
	e := Entry{Name: "max_drop_recall", Group: "overall", Measure: "retrieval_recall_at_k", Status: outcome.Fail, N: 132,
		Threshold: ptr(0.01), Value: ptr(0.085), Reason: "overall mean dropped 0.085"}
	var md, txt strings.Builder
	Markdown(&md, []Entry{e})
	Text(&txt, []Entry{e})
	for _, field := range strings.Fields(txt.String())[8:] { // the terminal row's fields, after its header
		assert.Contains(t, strings.ReplaceAll(md.String(), "\\_", "_"), field)
	}
}
