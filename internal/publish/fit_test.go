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
			got := Fit(md, fn, MaxCommentBytes, note, "")
			assert.LessOrEqual(t, len(got), MaxCommentBytes)
			assert.True(t, strings.HasPrefix(got, Marker("default")+"\n"))
			for _, want := range []string{"**Verdict: fail**", "### Gates", "| integrity | ❌ fail | 2 gold ids are not cards |",
				"| min_hit | ❌ fail | hit 0.5 below 0.7 |", "### Integrity problems (2)", "more rows not shown (cut to fit the size limit)", "</details>"} {
				assert.Contains(t, got, want)
			}
			assert.True(t, strings.HasSuffix(got, note), "the cut is stated")
		})
	}
	assert.Equal(t, md, Fit(md, render, len(md), note, ""), "a fitting report is unchanged")
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
	f.Add(Marker("k")+"\n<details>\n"+strings.Repeat("a line of text\n", 40)+"</details>\n\n<sub>method · provenance</sub>\n", 300, "\n(cut)\n")
	f.Add(Marker("k")+"\n"+strings.Repeat("wordy ", 200)+"\n\nclosing line\n", 400, "\n(cut)\n")
	f.Fuzz(func(t *testing.T, md string, limit int, note string) {
		if !utf8.ValidString(md) || !utf8.ValidString(note) || limit < 0 || limit > 1<<20 {
			return
		}
		got := Fit(md, nil, limit, note, "")
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
		// <details> it leaves open closed, then md's closing paragraph when it
		// has room, after a blank line.
		if !strings.Contains(md, "|") {
			budget := limit - len(note) - len(closing)
			heads := []string{body}
			if tail := ClosingParagraph(md); tail != "" && len(tail)+1 <= budget/2 {
				if !strings.HasSuffix(body, "\n"+tail) {
					t.Fatalf("the closing paragraph %q is lost: %q", tail, got)
				}
				budget -= len(tail) + 1
				head := strings.TrimSuffix(body, "\n"+tail)
				heads = []string{head, strings.TrimSuffix(head, "\n")} // a line end is added before the blank line
			}
			open := func(s string) bool {
				return strings.Count(s, "<details>")+strings.Count(s, "<details ") > strings.Count(s, "</details>")
			}
			matched := -1
			for i, head := range heads {
				if strings.HasPrefix(md, head) && !open(head) {
					matched = i
				} else if prefix := strings.TrimSuffix(head, closing); prefix != head && strings.HasPrefix(md, prefix) && open(prefix) {
					matched = i
				}
				if matched >= 0 {
					// The cut is at a line end when the last quarter of the room has one.
					cutAt := strings.TrimSuffix(head, closing)
					if strings.Contains(md[budget*3/4:min(budget, len(md))], "\n") && (matched > 0 || !strings.HasSuffix(cutAt, "\n")) {
						t.Fatalf("cut inside a line: %q", got)
					}
					break
				}
			}
			if matched < 0 {
				t.Fatalf("%q is not a prefix of %q, with a <details> it leaves open closed", body, md)
			}
		}
	})
}

// proseReport is a report too long for limit with nothing to shorten (no
// table, no shorter rendering), so only the last-resort cut fits it: the
// marker, a verdict, prose, an open <details>, and compare's closing line (the
// method and provenance) after a blank line.
func proseReport(limit int) string {
	var b strings.Builder
	b.WriteString(Marker("compare") + "\n## ❌ retrieval-gate compare: fail\n\n**Verdict: fail**\n\n<details><summary>Failed, best and worst queries</summary>\n\n")
	for i := 0; b.Len() <= limit; i++ {
		fmt.Fprintf(&b, "- failed (%d): q-%06d, and a query text that goes on: %s\n", i, i, strings.Repeat("ü", 40))
	}
	b.WriteString("</details>\n\n<sub>Stratified bootstrap, 2000 resamples, seed 1; run on main@0123abc.</sub>\n")
	return b.String()
}

// A report cut to a platform's limit keeps, whatever is cut: the marker on its
// first line (where the comment is found again), its closing line, the note
// that says so, and the publisher's footer (the run's link) last and whole.
// Before, the footer was part of the text cut and was the first thing lost.
func TestFitKeepsFooter(t *testing.T) {
	const closingLine = "<sub>Stratified bootstrap, 2000 resamples, seed 1; run on main@0123abc.</sub>\n"
	footer := "\n<sub>retrieval-gate · [workflow run](https://github.com/octo/repo/actions/runs/4242)</sub>\n"
	tests := []struct {
		name   string
		limit  int
		footer string
	}{
		// GitHub's REST API refuses a comment body over 65,536 characters (422
		// "body is too long"; "Create an issue comment" documents no number).
		{"PR comment", MaxCommentBytes, footer},
		// GitLab's "Notes API": a note's body is at most 1,000,000 characters.
		{"MR note", MaxNoteBytes, "\n<sub>retrieval-gate · [CI job](https://gitlab.example.com/g/p/-/jobs/5)</sub>\n"},
		// GitHub's REST API, "Create a check run": output.summary at most 65,535 characters.
		{"check-run summary", MaxCheckSummaryBytes, ""},
		// GitHub's "Workflow commands for GitHub Actions", "Adding a job summary": 1 MiB a step.
		{"job summary", MaxSummaryBytes, ""},
	}
	const note = "\n\n> [!NOTE]\n> shortened\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := proseReport(tt.limit)
			require.Greater(t, len(md), tt.limit)
			got := Fit(md, nil, tt.limit, note, tt.footer)
			assert.LessOrEqual(t, len(got), tt.limit)
			assert.True(t, utf8.ValidString(got))
			assert.Equal(t, Marker("compare"), MarkerOf(got), "the marker stays findable")
			assert.True(t, strings.HasSuffix(got, "\n</details>\n\n"+closingLine+note+tt.footer), "the closing line, the note, then the footer: %q", got[len(got)-300:])
			assert.Equal(t, 1, strings.Count(got, "</details>"), "the open <details> is closed once")
			if tt.footer != "" {
				assert.True(t, runLink.MatchString(got), "the run link is whole: --comment-mode changes compares without it")
			}
			// A report that fits is itself and the footer.
			assert.Equal(t, "x\n"+tt.footer, Fit("x\n", nil, tt.limit, note, tt.footer))
		})
	}
}

func TestClosingParagraph(t *testing.T) {
	tests := []struct{ name, md, want string }{
		{"a line after a blank line", "a\n\nb\n\n<sub>m</sub>\n", "<sub>m</sub>\n"},
		{"no line end at the end", "a\n\nlast", "last"},
		{"trailing blank lines are its own", "a\n\nlast\n\n\n", "last\n\n\n"},
		{"no blank line", "a\nb\n", ""},
		{"a table row", "a\n\n| x |\n|---|\n| 1 |\n", ""},
		{"a details tag", "a\n\n</details>\n", ""},
		{"a code fence", "a\n\n```\nx\n```\n", ""},
		{"too long", "a\n\n" + strings.Repeat("x", maxClosing+1), ""},
		{"too many lines", "a\n\n" + strings.Repeat("x\n", 21), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ClosingParagraph(tt.md))
		})
	}
}
