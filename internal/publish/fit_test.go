package publish

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarker(t *testing.T) {
	assert.True(t, ValidKey("default"))
	assert.True(t, ValidKey("docs/en-1.2_x"))
	assert.False(t, ValidKey(""))
	assert.False(t, ValidKey("a -->"))
	assert.False(t, ValidKey(strings.Repeat("a", 101)))
	assert.Equal(t, "<!-- retrieval-gate:a_--_ -->", Marker("a -->"))
	assert.Equal(t, "<!-- retrieval-gate:default -->", Marker(""))
	assert.Equal(t, "<!-- retrieval-gate:x -->", MarkerOf("\n<!-- retrieval-gate:x -->\n# r"))
	assert.Empty(t, MarkerOf("# r\n<!-- retrieval-gate:x -->"))
	assert.Empty(t, MarkerOf("<!-- retrieval-gate:x --> --> -->"))
}

// report is a check-like report: verdict, a groups table of types rows, the gates
// with reasons, the integrity summary, a missed-cases list of listed rows.
func report(types, listed int) string {
	var b strings.Builder
	b.WriteString(Marker("default") + "\n## ❌ retrieval-gate: fail\n\n**Verdict: fail** · k = 5\n\n| group | n | hit@5 |\n|---|---:|---:|\n| **overall** | 3000 | 0.5 |\n")
	for i := 0; i < types; i++ {
		fmt.Fprintf(&b, "| type: t-%04d-%s | 1 | 1.000 [1.000, 1.000] |\n", i, strings.Repeat("x", 40))
	}
	b.WriteString("\n### Gates\n\n| gate | status | reason |\n|---|---|---|\n| integrity | ❌ fail | 2 gold ids are not cards |\n| min_hit | ❌ fail | hit 0.5 below 0.7 |\n\n")
	b.WriteString("### Integrity problems (2)\n\nEach gold id below is not a card.\n\n")
	b.WriteString("<details><summary>Missed cases</summary>\n\n| case | query |\n|---|---|\n")
	for i := 0; i < listed; i++ {
		fmt.Fprintf(&b, "| c%d | %s |\n", i, strings.Repeat("q", 60))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// Issue 10 item 8: a report cut at the limit keeps the verdict, the gates with
// their reasons and the integrity summary; the tables are shortened first and the
// cut is stated.
func TestFitKeepsVerdictAndGates(t *testing.T) {
	const note = "\n\n> [!NOTE]\n> shortened\n"
	md := report(3000, 200)
	require.Greater(t, len(md), MaxCommentBytes)
	render := func(n int) string { return report(3000, max(n, 0)) }
	for name, fn := range map[string]func(int) string{"with a shorter rendering": render, "without": nil} {
		t.Run(name, func(t *testing.T) {
			got := Fit(md, fn, MaxCommentBytes, note)
			assert.LessOrEqual(t, len(got), MaxCommentBytes)
			assert.True(t, strings.HasPrefix(got, Marker("default")+"\n"))
			for _, want := range []string{"**Verdict: fail**", "### Gates", "| integrity | ❌ fail | 2 gold ids are not cards |",
				"| min_hit | ❌ fail | hit 0.5 below 0.7 |", "### Integrity problems (2)", "more rows not shown (cut to fit the size limit)", "</details>"} {
				assert.Contains(t, got, want)
			}
			assert.True(t, strings.HasSuffix(got, note), "the cut is stated")
		})
	}
	assert.Equal(t, md, Fit(md, render, len(md), note), "a fitting report is unchanged")
}

func TestShortenTablesKeepsSmallTables(t *testing.T) {
	md := "x\n\n| a |\n|---|\n| 1 |\n| 2 |\n| 3 |\n\n| b |\n|---|\n" + strings.Repeat("| long row |\n", 100)
	got := ShortenTables(md, 200)
	assert.Contains(t, got, "| 1 |\n| 2 |\n| 3 |\n")
	assert.Contains(t, got, "| … ")
	assert.LessOrEqual(t, len(got), 200)
}

// FuzzTruncate: the result fits the limit, stays valid UTF-8, and is unchanged when
// the input fits.
func FuzzTruncate(f *testing.F) {
	f.Add(Marker("k")+"\n<details>\nü\n", 12, "\nnote\n")
	f.Add("abc", 100, "")
	f.Add(strings.Repeat("é", 100), 7, "…")
	f.Add("| a |\n|---|\n| 1 |\n| 2 |\n| 3 |\n| 4 |\n| 5 |\n", 30, "")
	f.Add(Marker("k")+"\n<details>\n"+strings.Repeat("a line of text\n", 20), 120, "\n(cut)\n")
	f.Add(Marker("k")+"\nsome prose "+strings.Repeat("ü", 60)+"\n", 60, "…")
	f.Fuzz(func(t *testing.T, md string, limit int, note string) {
		if !utf8.ValidString(md) || !utf8.ValidString(note) || limit < 0 || limit > 1<<20 {
			return
		}
		got := Fit(md, nil, limit, note)
		if len(got) > limit && len(md) > limit {
			t.Fatalf("len %d > limit %d", len(got), limit)
		}
		if len(md) <= limit && got != md {
			t.Fatal("a fitting text was changed")
		}
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
		const closing = "\n</details>\n"
		if len(md) <= limit || limit-len(note)-len(closing) <= 0 {
			return
		}
		// A cut text says so (note at its end) and keeps the marker line that
		// starts it (where the comment is found again) when there is room.
		if !strings.HasSuffix(got, note) {
			t.Fatalf("cut %q does not end with the note %q", got, note)
		}
		body := strings.TrimSuffix(got, note)
		if first, _, ok := strings.Cut(md, "\n"); ok && MarkerOf(first) == first && len(first)+1 <= limit-len(note)-len(closing) && !strings.HasPrefix(body, first+"\n") {
			t.Fatalf("the marker line %q is lost: %q", first, got)
		}
		// Without a table (nothing to shorten), the text is a prefix of md, a
		// <details> it leaves open closed.
		if !strings.Contains(md, "|") {
			open := func(s string) bool {
				return strings.Count(s, "<details>")+strings.Count(s, "<details ") > strings.Count(s, "</details>")
			}
			if strings.HasPrefix(md, body) {
				if open(body) {
					t.Fatalf("a <details> left open: %q", got)
				}
			} else if prefix := strings.TrimSuffix(body, closing); !strings.HasPrefix(md, prefix) || !open(prefix) {
				t.Fatalf("%q is not a prefix of %q with a <details> to close", prefix, md)
			}
			// The cut is at a line end when the last quarter of the room has one.
			if budget := limit - len(note) - len(closing); strings.Contains(md[budget*3/4:min(budget, len(md))], "\n") && !strings.HasSuffix(strings.TrimSuffix(body, closing), "\n") {
				t.Fatalf("cut inside a line: %q", got)
			}
		}
	})
}
