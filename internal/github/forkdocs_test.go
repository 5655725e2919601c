package github

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The notices about a fork's read-only token link to the section that shows the
// workflow_run setup: the page and the anchor exist (GitHub's anchor of a heading
// is its text lowercased, spaces to hyphens, punctuation dropped).
func TestForkCommentsDocs(t *testing.T) {
	page, anchor, ok := strings.Cut(strings.TrimPrefix(ForkCommentsDocs, "https://github.com/retrieval-gate/retrieval-gate/blob/main/"), "#")
	require.True(t, ok, ForkCommentsDocs)
	data, err := os.ReadFile("../../" + page)
	require.NoError(t, err)
	var anchors []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(data), -1) {
		a := regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(strings.ToLower(m[1]), "")
		anchors = append(anchors, strings.ReplaceAll(a, " ", "-"))
	}
	assert.Contains(t, anchors, anchor)
	assert.Contains(t, Explain(&APIError{Kind: KindForbidden}), ForkCommentsDocs)
}
