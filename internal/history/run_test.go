package history_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

func TestNewRecordFromEnvironment(t *testing.T) {
	env := map[string]string{"GITHUB_SHA": "abc", "GITHUB_HEAD_REF": "feature", "GITHUB_REF_NAME": "1/merge", "GITHUB_BASE_REF": "main", "SOURCE_DATE_EPOCH": "86400"}
	getenv := func(k string) string { return env[k] }
	rec, err := history.NewRecord(context.Background(), getenv, "check", nil, map[string]string{"k": "5"}, []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "check", rec.Command)
	assert.Equal(t, "abc", rec.Commit)
	assert.Equal(t, "feature", rec.Branch)
	assert.Equal(t, "1970-01-02T00:00:00Z", rec.Time)
	assert.Equal(t, "main", history.BaseBranch(context.Background(), getenv))

	delete(env, "GITHUB_HEAD_REF")
	delete(env, "GITHUB_BASE_REF")
	assert.Equal(t, "1/merge", history.RunBranch(context.Background(), getenv))
	assert.Equal(t, "1/merge", history.BaseBranch(context.Background(), getenv), "no pull request: the run's own branch")

	env["GITHUB_SHA"] = " def \n"
	assert.Equal(t, "def", history.HeadCommit(context.Background(), getenv))

	env["SOURCE_DATE_EPOCH"] = "yesterday"
	_, err = history.NewRecord(context.Background(), getenv, "check", nil, nil, nil)
	require.ErrorContains(t, err, `--history: SOURCE_DATE_EPOCH="yesterday" is not a number of seconds`)
}
