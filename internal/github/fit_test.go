package github

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncate(t *testing.T) {
	note := "\n\n> [!NOTE]\n> Truncated.\n"
	long := Marker("k") + "\n## report\n<details><summary>Missed</summary>\n\n" + strings.Repeat("| case | ü é |\n", 10000)
	tests := []struct {
		name  string
		md    string
		limit int
	}{
		{name: "fits: unchanged", md: "short", limit: 100},
		{name: "long report", md: long, limit: MaxCommentBytes},
		{name: "one long line of multibyte text", md: Marker("k") + strings.Repeat("ü", 40000), limit: 1001},
		{name: "limit smaller than the note", md: long, limit: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.md, tc.limit, note)
			assert.LessOrEqual(t, len(got), tc.limit)
			assert.True(t, utf8.ValidString(got))
			if len(tc.md) <= tc.limit {
				assert.Equal(t, tc.md, got)
				return
			}
			if tc.limit > 100 {
				assert.True(t, strings.HasPrefix(got, Marker("k")), "the marker survives")
				assert.True(t, strings.HasSuffix(got, note))
				assert.Equal(t, strings.Count(got, "<details>"), strings.Count(got, "</details>"))
			}
		})
	}
}

func TestCut(t *testing.T) {
	assert.Equal(t, "", cut("héllo", 0))
	assert.Equal(t, "h", cut("héllo", 2), "never splits é")
	assert.Equal(t, "hé", cut("héllo", 3))
	assert.Equal(t, "héllo", cut("héllo", 99))
}
