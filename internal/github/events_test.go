package github

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The history writer's and the baseline's one list: the four events of the
// default branch's own runs, nothing else.
func TestWriteEvent(t *testing.T) {
	for _, ev := range []string{"push", "schedule", "workflow_dispatch", "repository_dispatch"} {
		assert.True(t, WriteEvent(ev), ev)
	}
	for _, ev := range []string{"pull_request", "pull_request_target", "issue_comment", "workflow_run", "merge_group", "release", "Push", ""} {
		assert.False(t, WriteEvent(ev), ev)
	}
}
