package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
