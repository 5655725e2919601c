package github

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listReport renders a header and n list entries of the given size, listing at most
// maxListed of them (all when negative), like the check report's case lists.
func listReport(n, entry int) Render {
	return func(maxListed int) (string, error) {
		var b strings.Builder
		b.WriteString(Marker("k") + "\n## report\n")
		shown := n
		if maxListed >= 0 && maxListed < n {
			shown = maxListed
		}
		for i := 0; i < shown; i++ {
			fmt.Fprintf(&b, "- case %05d %s\n", i, strings.Repeat("é", entry/2))
		}
		if shown < n {
			fmt.Fprintf(&b, "- … %d more\n", n-shown)
		}
		return b.String(), nil
	}
}

func TestFit(t *testing.T) {
	note := ShortenedNote("comment", "GitHub's 65,536-character limit", "The job summary has the full report.")
	tests := []struct {
		name          string
		render        Render
		limit         int
		wantListed    int
		wantTruncated bool
	}{
		{name: "fits whole", render: listReport(10, 20), limit: MaxCommentBytes, wantListed: -1},
		{name: "3000 cases are shortened to the longest list that fits", render: listReport(3000, 60), limit: MaxCommentBytes, wantListed: 500},
		{name: "entries too large for any list go down to none", render: listReport(100, 20000), limit: MaxCommentBytes, wantListed: 0},
		{name: "a header alone too long is cut", render: Static(Marker("k") + strings.Repeat("ü", 40000)), limit: MaxCommentBytes, wantListed: 0, wantTruncated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Fit(tc.render, tc.limit, note)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(got.Markdown), tc.limit)
			assert.True(t, utf8.ValidString(got.Markdown))
			assert.True(t, strings.HasPrefix(got.Markdown, Marker("k")), "the marker survives")
			assert.Equal(t, tc.wantListed, got.Listed)
			assert.Equal(t, tc.wantTruncated, got.Truncated)
			assert.Equal(t, tc.wantListed >= 0, got.Shortened())
			if got.Shortened() {
				assert.Contains(t, got.Markdown, "were shortened to at most")
			} else {
				assert.NotContains(t, got.Markdown, "shortened")
			}
		})
	}
	t.Run("render errors pass through", func(t *testing.T) {
		_, err := Fit(func(int) (string, error) { return "", fmt.Errorf("boom") }, 10, note)
		require.EqualError(t, err, "boom")
	})
}

func TestCut(t *testing.T) {
	assert.Equal(t, "", cut("héllo", 0))
	assert.Equal(t, "h", cut("héllo", 2), "never splits é")
	assert.Equal(t, "hé", cut("héllo", 3))
	assert.Equal(t, "héllo", cut("héllo", 99))
}
