package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

const demo = "../../testdata/demo"

func demoIn(t *testing.T, cases string) In {
	t.Helper()
	kb, err := kbfile.Load(context.Background(), demo+"/kb")
	require.NoError(t, err)
	f, err := os.Open(cases)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return In{Cases: f, CasesName: cases, KB: kb}
}

// TestRunBaseline: the regressed demo against the demo's baseline fails its
// regression gate; the baseline written by one run, read by the next, pairs
// every case with no difference.
func TestRunBaseline(t *testing.T) {
	ctx := context.Background()
	in := demoIn(t, demo+"/regressed.jsonl")
	base, err := os.Open(demo + "/baseline.jsonl.gz")
	require.NoError(t, err)
	defer base.Close()
	in.Baseline, in.BaselineName = base, "baseline.jsonl.gz"
	var casesOut bytes.Buffer
	in.CasesOut = &casesOut
	o := Options{K: 5, ReferenceLocale: "en", MaxDrop: map[string]baseline.Tolerance{"retrieval_hit_at_k": {Set: true, Value: 0.01}}}
	res, err := Run(ctx, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Comparison)
	assert.True(t, res.Comparison.Available)
	assert.Equal(t, outcome.Fail, res.Comparison.Regression)
	assert.Equal(t, int64(strings.Count(casesOut.String(), "\n")), res.Gate.Total, "one --cases-out line a case")
	assert.NotEmpty(t, res.KBFingerprint)

	// Write a baseline of the demo, then compare the demo with it.
	var body bytes.Buffer
	in = demoIn(t, demo+"/cases.jsonl")
	in.BaselineBody = &body
	res, err = Run(ctx, in, o)
	require.NoError(t, err)
	assert.Nil(t, res.Comparison, "writing a baseline compares with none")
	var file bytes.Buffer
	require.NoError(t, baseline.WriteFile(&file, &baseline.Header{K: 5, Cases: res.Gate.Total, KBFingerprint: res.KBFingerprint, Aggregates: []byte("{}")}, &body))
	in = demoIn(t, demo+"/cases.jsonl")
	in.Baseline, in.BaselineName = &file, "written"
	res, err = Run(ctx, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Comparison)
	assert.Equal(t, outcome.Pass, res.Comparison.Regression)
	assert.Equal(t, res.Gate.WithGold, res.Comparison.Paired)
	assert.Zero(t, res.Comparison.NewlyMissedTotal+res.Comparison.NewlyFoundTotal+res.Comparison.RankDropsTotal)
}

func TestRunUnavailableAndErrors(t *testing.T) {
	ctx := context.Background()
	in := demoIn(t, demo+"/cases.jsonl")
	in.BaselineUnavailable = &baseline.Unavailability{Code: baseline.NotInActions}
	res, err := Run(ctx, in, Options{K: 5})
	require.NoError(t, err)
	require.NotNil(t, res.Comparison)
	assert.False(t, res.Comparison.Available)

	// A bad baseline is an input error naming it; nothing is scored.
	in = demoIn(t, demo+"/cases.jsonl")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = io.WriteString(zw, "{\n")
	require.NoError(t, zw.Close())
	in.Baseline, in.BaselineName = &gz, "bad.jsonl.gz"
	_, err = Run(ctx, in, Options{K: 5})
	require.ErrorContains(t, err, "bad.jsonl.gz:1:")
}
