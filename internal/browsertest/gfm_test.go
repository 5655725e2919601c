package browsertest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
)

func TestGitHubComment(t *testing.T) {
	page, err := browsertest.GitHubComment("t<", []byte("<!-- retrieval-gate:x -->\n## Title\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n> [!WARNING]\n> careful\n\n```mermaid\nxychart-beta\n```\n\n<details><summary>More</summary>\n\nhidden\n\n</details>\n"))
	require.NoError(t, err)
	s := string(page)
	assert.Contains(t, s, "<title>t&lt;</title>")
	assert.Contains(t, s, "default-src 'none'")
	assert.Contains(t, s, `<th style="text-align:right">b</th>`)
	assert.Contains(t, s, `<blockquote class="alert warning"><p class="alert-title">Warning</p>`)
	assert.Contains(t, s, `<div class="mermaid">`)
	assert.NotContains(t, s, "xychart-beta")
	assert.Contains(t, s, "<details><summary>More</summary>")
	assert.Contains(t, s, "<!-- retrieval-gate:x -->")
}
