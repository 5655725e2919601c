package trendtable_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// hostileHistory is two check runs on main whose hit@k means are ±1.7e308:
// their span overflows to +Inf (the sparkline's scaling panicked on it); a third
// run with a negative n (skipped).
const hostileHistory = `{"branch":"main","command":"check","commit":"aaaaaaa","document":{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":1.7e308,"n":3}}}},"fingerprint":{"digest":"sha256:1","inputs":{"kb":"sha256:a"},"params":{}},"schema":"retrieval-gate/history@1","time":"2026-01-01T00:00:00Z"}
{"branch":"main","command":"check","commit":"<b>\u202e@x","document":{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":-1.7e308,"n":3}}}},"fingerprint":{"digest":"sha256:2","inputs":{"kb":"sha256:b"},"params":{}},"schema":"retrieval-gate/history@1","time":"2026-01-02T00:00:00Z"}
{"branch":"main","command":"check","commit":"ccccccc","document":{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":0.5,"n":-3}}}},"schema":"retrieval-gate/history@1","time":"2026-01-03T00:00:00Z"}
`

// A history.jsonl (a --history file, or the branch's, which anyone who can push
// there writes) goes through the trend and both renderers: no panic, valid
// UTF-8, and nothing of the records reaches the Markdown unescaped.
func FuzzTrend(f *testing.F) {
	f.Add([]byte(hostileHistory))
	// A commit (shown by its first 7 characters) that is a workflow command.
	f.Add([]byte(strings.Replace(hostileHistory, `"commit":"<b>\u202e@x"`, `"commit":"\n::x::y ##[add-mask]m"`, 1)))
	f.Add([]byte(`{"branch":"main","command":"check","commit":"c","document":{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":0.5,"n":2}}}},"schema":"retrieval-gate/history@1","time":"2026-01-01T00:00:00Z"}` + "\n"))
	current := fastjson.MustParse(`{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":0.25,"n":4}}}}`)
	ms := []trend.Measure{{Group: "overall", Key: "retrieval_hit_at_k"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := func(fn func(history.Record, *fastjson.Value) error) error {
			return history.ScanReader(context.Background(), "h.jsonl", bytes.NewReader(data), fn)
		}
		tr, err := trend.Collect(src, current, history.Fingerprint{Digest: "sha256:now"}, trend.Options{Command: "check", Branch: "main", Limit: trend.MaxRuns, Measures: ms})
		if err != nil {
			return // a bad line is the reader's error, tested there
		}
		var md strings.Builder
		trendtable.Markdown(&md, tr, func(k string) string { return k })
		var text bytes.Buffer
		trendtable.Text(&text, tr, func(k string) string { return k }, format.SanitizeText)
		for _, out := range []string{md.String(), text.String()} {
			require.True(t, utf8.ValidString(out))
			require.NotContains(t, out, "\u202e")
		}
		// The text goes to the terminal or the CI log through the command's
		// guard, which escapes "##[" (anywhere in a line); what the renderer
		// must keep is every record's text on its line, so no line starts a
		// "::" command. The Markdown escapes '#' too: no command of either
		// syntax (runnertest reads them as the runner does).
		for _, c := range runnertest.Commands(text.String(), nil) {
			require.NotEqual(t, "::", c.Syntax, "the runner reads %+v in\n%s", c, &text)
		}
		require.Empty(t, runnertest.Commands(md.String(), nil), "%s", md.String())
		require.NotContains(t, md.String(), "<b>")
		require.NotContains(t, strings.ReplaceAll(md.String(), "&#64;", ""), "@")
	})
}
