package history_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// A measure value of the wrong JSON type in a record's document is an input
// error at the record's line, in report --from's words (a mean given as a
// string was skipped: a run missing from the chart and the trend, without a
// word). What the documents write on purpose stays accepted: a null mean or
// delta (undefined, n = 0), null bounds of ci95, and groups, metrics or ci95
// that are absent or null.
func TestMeasureTypes(t *testing.T) {
	hit := func(m string) string { return `{"overall":{"metrics":{"retrieval_hit_at_k":` + m + `},"n":3}}` }
	for _, tc := range []struct{ name, doc, want string }{
		// Refused: the path of the value, what it is, what it must be.
		{"mean a string", hit(`{"mean":"0.5","n":3}`), "document.overall.metrics.retrieval_hit_at_k.mean is a string, not a number"},
		{"mean an object", hit(`{"mean":{},"n":3}`), "document.overall.metrics.retrieval_hit_at_k.mean is object, not a number"},
		{"mean an array", hit(`{"mean":[0.5],"n":3}`), "document.overall.metrics.retrieval_hit_at_k.mean is array, not a number"},
		{"mean a boolean", hit(`{"mean":true,"n":3}`), "document.overall.metrics.retrieval_hit_at_k.mean is true, not a number"},
		{"n a string", hit(`{"mean":0.5,"n":"3"}`), "document.overall.metrics.retrieval_hit_at_k.n is a string, not a number"},
		{"n null", hit(`{"mean":0.5,"n":null}`), "document.overall.metrics.retrieval_hit_at_k.n is null, not a number"},
		{"group n null", `{"overall":{"metrics":{},"n":null}}`, "document.overall.n is null, not a number"},
		{"ci95 a string", hit(`{"mean":0.5,"ci95":"[0,1]"}`), "document.overall.metrics.retrieval_hit_at_k.ci95 is a string, not an interval [lower, upper]"},
		{"ci95 of one bound", hit(`{"mean":0.5,"ci95":[0]}`), "document.overall.metrics.retrieval_hit_at_k.ci95 is array, not an interval [lower, upper]"},
		{"ci95 bound a string", hit(`{"mean":0.5,"ci95":[0,"1"]}`), "document.overall.metrics.retrieval_hit_at_k.ci95[1] is a string, not a number"},
		{"measure a number", hit(`0.5`), "document.overall.metrics.retrieval_hit_at_k is 0.5, not an object"},
		{"metrics a string", `{"overall":{"metrics":"x"}}`, "document.overall.metrics is a string, not an object"},
		{"group an array", `{"by_type":{"golden":[]}}`, "document.by_type.golden is array, not an object"},
		{"groups a string", `{"by_locale":"en"}`, "document.by_locale is a string, not an object"},
		{"locale group", `{"by_locale":{"en":{"metrics":{"retrieval_hit_at_k":{"mean":"0.5"}}}}}`, "document.by_locale.en.metrics.retrieval_hit_at_k.mean is a string, not a number"},
		{"strategy", `{"strategies":{"bm25":{"metrics":{"dcg_at_k":{"mean":null,"n":"2"}}}}}`, "document.strategies.bm25.metrics.dcg_at_k.n is a string, not a number"},
		{"a name quoted", `{"strategies":{"my run":{"metrics":{"dcg_at_k":{"mean":"1"}}}}}`, `document.strategies."my run".metrics.dcg_at_k.mean is a string, not a number`},
		{"baseline delta", `{"baseline":{"overall":{"metrics":{"retrieval_hit_at_k":{"delta":"-0.1","n":3}}}}}`, "document.baseline.overall.metrics.retrieval_hit_at_k.delta is a string, not a number"},
		{"baseline a string", `{"baseline":"none"}`, "document.baseline is a string, not an object"},
		{"the first in the document's order", `{"by_locale":{"en":{"metrics":{"m":{"mean":"1"}}}},"overall":{"metrics":{"m":{"mean":"2"}}}}`, "document.by_locale.en.metrics.m.mean is a string, not a number"},
		// Accepted.
		{"numbers", hit(`{"ci95":[0.1,0.9],"mean":0.5,"n":3}`), ""},
		{"mean null", hit(`{"ci95":[null,null],"mean":null,"n":0}`), ""},
		{"no n, no ci95", hit(`{"mean":0.5}`), ""},
		{"ci95 null", hit(`{"ci95":null,"mean":0.5}`), ""},
		{"measure null", hit(`null`), ""},
		{"metrics null", `{"overall":{"metrics":null,"n":0}}`, ""},
		{"groups null", `{"by_locale":null,"by_type":null,"overall":null,"strategies":null}`, ""},
		{"baseline null", `{"baseline":null}`, ""},
		{"baseline unavailable", `{"baseline":{"by_locale":null,"by_type":null,"overall":{"metrics":null,"n":0},"reason":"no artifact","status":"unavailable"}}`, ""},
		{"delta null", `{"baseline":{"overall":{"metrics":{"retrieval_hit_at_k":{"current":null,"delta":null,"n":0}}}}}`, ""},
		{"other keys are not measures", `{"k":5,"gates":[{"value":"x"}],"cases":{"total":"3"},"overall":{"metrics":{"m":{"mean":1,"ci95_method":7}}}}`, ""},
		{"not a check or compare document", `{"a":"x","b":[1,"2"]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, end := range []string{"\n", ""} { // a last line without newline is no torn line
				var got []int
				var torn []int
				err := history.ScanReader(context.Background(), "h.jsonl", strings.NewReader(recordLine(t, `{}`)+strings.TrimSuffix(recordLine(t, tc.doc), "\n")+end),
					func(rec history.Record, _ *fastjson.Value) error { got = append(got, rec.Line); return nil },
					history.OnTorn(func(_ string, line int) { torn = append(torn, line) }))
				assert.Empty(t, torn)
				if tc.want == "" {
					require.NoError(t, err)
					assert.Equal(t, []int{1, 2}, got)
					continue
				}
				require.Error(t, err)
				assert.Contains(t, err.Error(), "h.jsonl:2: "+tc.want)
				assert.Equal(t, []int{1}, got, "the records before it were read")
			}
		})
	}
}
