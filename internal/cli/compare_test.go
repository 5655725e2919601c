package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompareExitCodes: compare has no gate; it exits 0 whatever the results and 2
// on a usage or input error, leaving no report.
func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	qrels := write("qrels.trec", "q1 0 d1 3\nq2 0 d2 2\n")
	good := write("good.trec", "q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 2.0 t\n")
	worse := write("worse.trec", "q1 Q0 d7 1 2.0 t\nq2 Q0 d9 1 2.0 t\n")
	bad := write("bad.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2\n")
	badRel := write("badrel.trec", "q1 0 d1 3\nq1 0 d2 300\n")
	other := write("other.trec", "x1 Q0 d1 1 2.0 t\n")
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"results never fail", []string{"--qrels", qrels, "--run", "a=" + good, "--run", "b=" + worse}, ExitOK, ""},
		{"malformed run line", []string{"--qrels", qrels, "--run", "a=" + bad}, ExitInput, "bad.trec:2: malformed run line"},
		{"relevance outside the scale", []string{"--qrels", badRel, "--run", "a=" + good}, ExitInput, "badrel.trec:2: relevance 300 is outside the accepted range -128..127"},
		{"no query in common", []string{"--qrels", qrels, "--run", "a=" + other}, ExitInput, "has no query in common"},
		{"duplicate --run names", []string{"--qrels", qrels, "--run", "a=" + good, "--run", "a=" + worse}, ExitInput, `duplicate strategy name "a"`},
		{"--k out of range", []string{"--qrels", qrels, "--run", "a=" + good, "--k", "0"}, ExitInput, "--k must be between"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := filepath.Join(dir, "out.json"+string(rune('a'+i)))
			env, _, _ := checkEnv("")
			err := NewCmdCompare(NewFactory(env), nil).Run(context.Background(), append(tt.args, "--bootstrap", "100", "--json", js))
			assert.Equal(t, tt.code, ExitCode(err), "%v", err)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.NoFileExists(t, js)
			} else {
				assert.FileExists(t, js)
			}
		})
	}
}
