package html_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// hostileRuns are check runs whose means and intervals are near ±MaxFloat64
// (the axis's span overflowed and its tick loop never ended), a negative n and
// a commit with markup and a bidi override.
const hostileRuns = `{"branch":"main","command":"check","commit":"<i>\u202eabc","document":{"verdict":"pass","overall":{"n":3,"metrics":{"retrieval_hit_at_k":{"mean":1.7e308,"n":3,"ci95":[-1.7e308,1.7e308]}}}},"schema":"retrieval-gate/history@1","time":"2026-01-01T00:00:00Z"}
{"branch":"main","command":"check","commit":"b","document":{"verdict":"fail","overall":{"n":-5,"metrics":{"retrieval_hit_at_k":{"mean":-1.7e308,"n":-5,"ci95":[-1.7e308,1.7e308]}}}},"schema":"retrieval-gate/history@1","time":"2026-01-02T00:00:00Z"}
{"branch":"main","command":"check","commit":"c","document":{"verdict":"pass","overall":{"n":3,"metrics":{"retrieval_hit_at_k":{"mean":1e300,"n":3,"ci95":[1e300,1e300]}}}},"schema":"retrieval-gate/history@1","time":"2026-01-03T00:00:00Z"}
`

// A history file goes through the history page: it finishes, the page is
// valid UTF-8, and no markup, bidi character or non-number coordinate of the
// records reaches it.
func FuzzHistoryPage(f *testing.F) {
	f.Add([]byte(hostileRuns))
	f.Add([]byte(`{"branch":"main","command":"check","commit":"c","document":{"overall":{"n":2,"metrics":{"retrieval_hit_at_k":{"mean":0.5,"n":2,"ci95":[0.1,0.9]}}}},"schema":"retrieval-gate/history@1","time":"2026-01-01T00:00:00Z"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := rhtml.NewHistory("h.jsonl", "check", "retrieval_hit_at_k")
		err := history.ScanReader(context.Background(), "h.jsonl", bytes.NewReader(data), func(rec history.Record, doc *fastjson.Value) error {
			return b.Add(rec, doc)
		})
		if err != nil {
			return
		}
		var page bytes.Buffer
		require.NoError(t, rhtml.History(&page, b.View()))
		s := page.String()
		require.True(t, utf8.ValidString(s))
		require.NotContains(t, s, "\u202e")
		require.NotContains(t, s, "<i>")
		require.NotContains(t, s, "NaN")
		require.NotContains(t, strings.ToLower(s), "<script")
	})
}
