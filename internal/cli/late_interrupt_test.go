package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// cancellingTarget is a CI host where the run's end (SIGINT, SIGTERM) comes
// while the command publishes: Publish cancels the run's context and gives up,
// as the real publishers do when their calls end with it.
type cancellingTarget struct{ cancel context.CancelFunc }

func (c cancellingTarget) Publish(context.Context, publish.Publication) []publish.Warning {
	c.cancel()
	return nil
}

func (cancellingTarget) Fail(publish.Failure) bool { return false }

// A run that a signal ends while it publishes exits 2 with the words of an
// interruption (it exited 0, or 1 when a gate failed, with only the
// publisher's warning), after its files were written.
func TestSignalWhilePublishingExits2(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cases string
	}{
		{"a passing run", "../../testdata/demo/cases.jsonl"},
		{"a failing gate", "../../testdata/demo/regressed.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb bytes.Buffer
			f := NewFactory(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			f.publisher = cancellingTarget{cancel}
			js := filepath.Join(t.TempDir(), "r.json")
			args := []string{"check", "--cases", tc.cases, "--kb", "../../testdata/demo/kb", "--json", js, "--comment", "never"}
			if strings.Contains(tc.cases, "regressed") {
				args = append(args, "--baseline", "../../testdata/demo/baseline.jsonl.gz")
			}
			code := RunFactory(ctx, f, args)
			assert.Equal(t, ExitInput, code, errb.String())
			assert.Contains(t, errb.String(), "retrieval-gate: check: interrupted after its files were written: what it publishes to the CI host (a comment, a check run, the job summary, its outputs) may be missing: context canceled")
			assert.FileExists(t, js)
		})
	}
}

// recordingTarget is a CI host that records the failure it is given.
type recordingTarget struct{ got *[]publish.Failure }

func (recordingTarget) Publish(context.Context, publish.Publication) []publish.Warning { return nil }

func (r recordingTarget) Fail(f publish.Failure) bool {
	*r.got = append(*r.got, f)
	return true
}

// The failure a CI host reports is marked Interrupted when a signal stopped
// the run (its context cancelled), before its files or while it published,
// and not for an input error: the host titled both "input error".
func TestFailureInterrupted(t *testing.T) {
	demo := "../../testdata/demo"
	for _, tc := range []struct {
		name        string
		cases       string
		cancel      bool // before the run
		late        bool // while it publishes
		interrupted bool
	}{
		{"input error", "", false, false, false}, // a cases file with a line that is not JSON
		{"interrupted", demo + "/cases.jsonl", true, false, true},
		{"interrupted while publishing", demo + "/cases.jsonl", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			if tc.cases == "" {
				tc.cases = filepath.Join(t.TempDir(), "cases.jsonl")
				require.NoError(t, os.WriteFile(tc.cases, []byte("{not json\n"), 0o644))
			}
			var out, errb bytes.Buffer
			f := NewFactory(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			var got []publish.Failure
			rec := recordingTarget{&got}
			f.publisher = rec
			if tc.late {
				f.publisher = lateTarget{cancellingTarget{cancel}, rec}
			}
			code := RunFactory(ctx, f, []string{"check", "--cases", tc.cases, "--kb", demo + "/kb", "--json", filepath.Join(t.TempDir(), "r.json"), "--comment", "never"})
			assert.Equal(t, ExitInput, code, errb.String())
			if assert.Len(t, got, 1, errb.String()) {
				assert.Equal(t, tc.interrupted, got[0].Interrupted, got[0].Message)
			}
		})
	}
}

// lateTarget cancels the run as it publishes (cancellingTarget) and records
// the failure (recordingTarget).
type lateTarget struct {
	c cancellingTarget
	r recordingTarget
}

func (l lateTarget) Publish(ctx context.Context, p publish.Publication) []publish.Warning {
	return l.c.Publish(ctx, p)
}

func (l lateTarget) Fail(f publish.Failure) bool { return l.r.Fail(f) }
