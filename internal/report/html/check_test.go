package html_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/cli"
)

const checkDemo = "../../../testdata/demo"

// runCheck runs the real check command with --html and returns the page.
func runCheck(t *testing.T, cases string, wantExit int) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "check.html")
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := cli.Run(context.Background(), env, []string{"check", "--cases", cases, "--kb", checkDemo + "/kb", "--html", out, "--comment", "never"})
	require.Equal(t, wantExit, code, "stderr: %s", stderr.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	return b
}

func TestCheckHTMLGolden(t *testing.T) {
	demo := runCheck(t, checkDemo+"/cases.jsonl", cli.ExitOK)
	golden(t, "check-demo.html", demo)
	assert.Equal(t, demo, runCheck(t, checkDemo+"/cases.jsonl", cli.ExitOK), "same input, same bytes")
	s := string(demo)
	assert.Contains(t, s, "indicative only, not significance-tested")
	assert.Contains(t, s, "<details><summary>Show the 34 missed cases</summary>")
	broken := runCheck(t, checkDemo+"/broken/cases.jsonl", cli.ExitGateFailed)
	golden(t, "check-broken.html", broken)
	assert.Contains(t, string(broken), "gold ids are not cards of the knowledge base")
}

// The check report in Chromium: 6 bars (overall, 2 types, 3 locales), nothing
// wider than the page, with the missed cases expanded.
func TestCheckHTMLInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	for _, c := range []struct {
		name, cases string
		exit, bars  int
	}{
		{"check-demo", checkDemo + "/cases.jsonl", cli.ExitOK, 6},
		{"check-broken", checkDemo + "/broken/cases.jsonl", cli.ExitGateFailed, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.name+".html")
			require.NoError(t, os.WriteFile(path, runCheck(t, c.cases, c.exit), 0o644))
			marks := map[string]int{}
			if c.bars >= 0 {
				marks[`rect[data-mark="bar"]`] = c.bars
			}
			browsertest.Check(t, b, browsertest.Page{Name: c.name, Path: path, Widths: []int{390, 850, 1400}, OpenDetails: true, Marks: marks})
		})
	}
}
