package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command's run is replaceable (NewCmdX(f, runF)): the parsing is tested
// alone, with what the run would have been given, and nothing runs.
func TestNewCmdRunsRunF(t *testing.T) {
	env, _, _ := checkEnv("")
	f := NewFactory(env)
	var co *checkOptions
	require.NoError(t, NewCmdCheck(f, func(_ context.Context, o *checkOptions) error { co = o; return nil }).
		Run(context.Background(), []string{"--cases", "c.jsonl", "--kb", "kb", "--k", "3", "--min-hit", "0.5"}))
	require.NotNil(t, co)
	assert.Equal(t, "c.jsonl", co.cases)
	assert.Equal(t, 3, co.k, "--k as given; check.ResolveK makes it the run's k")
	assert.InDelta(t, 0.5, co.run.MinHit.Value, 0)

	var cmp *compareOptions
	require.NoError(t, NewCmdCompare(f, func(_ context.Context, o *compareOptions) error { cmp = o; return nil }).
		Run(context.Background(), []string{"--qrels", "q.txt", "--run", "a=a.txt", "--run", "b=b.txt", "--k", "5"}))
	require.NotNil(t, cmp)
	assert.Equal(t, "q.txt", cmp.files.Qrels)
	assert.Len(t, cmp.files.Runs, 2)
	assert.Equal(t, 5, cmp.run.K)

	var ro *reportOptions
	require.NoError(t, NewCmdReport(f, func(_ context.Context, o *reportOptions) error { ro = o; return nil }).
		Run(context.Background(), []string{"--history", "h", "--html", "page.html", "--measure", "delta:retrieval_hit_at_k"}))
	require.NotNil(t, ro)
	assert.Equal(t, "h", ro.path)
	assert.Equal(t, "page.html", ro.htmlOut)
	assert.Equal(t, "delta:retrieval_hit_at_k", ro.measure)
	assert.Empty(t, ro.from.from)
	require.NoError(t, NewCmdReport(f, func(_ context.Context, o *reportOptions) error { ro = o; return nil }).
		Run(context.Background(), []string{"--from", "r.json", "--markdown", "r.md", "--comment-key", "nightly"}))
	require.NotNil(t, ro.from.src)
	assert.Equal(t, fromOptions{from: "r.json", markdownOut: "r.md", commentKey: "nightly", src: ro.from.src}, ro.from)

	err := NewCmdReport(f, func(context.Context, *reportOptions) error { t.Fatal("ran"); return nil }).
		Run(context.Background(), []string{"--history", "h"})
	require.EqualError(t, err, "report: --html is required")
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, shortUsage("report"), ue.Usage, "report's usage errors carry its usage, as every command's")

	err = NewCmdCheck(f, func(context.Context, *checkOptions) error { t.Fatal("ran"); return nil }).
		Run(context.Background(), []string{"--kb", "kb"})
	require.EqualError(t, err, "check: --cases is required")
}
