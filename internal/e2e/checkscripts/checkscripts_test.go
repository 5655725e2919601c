// Package checkscripts runs check's and history's end-to-end scripts of
// testdata/script (e2etest.CheckScript), beside the root package's share, so
// that neither package runs past its time budget.
package checkscripts

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestMain builds the binary and puts it first on PATH; the fakes run as
// commands of this test binary.
func TestMain(m *testing.M) {
	e2etest.Main(m, map[string]func(){
		"fake-github": githubtest.Main,
		"fake-llm":    llmtest.Main,
	})
}

// TestScripts runs the scripts: real processes on real files, the repository
// root as $ROOT and the demo as $DEMO.
func TestScripts(t *testing.T) {
	files, err := e2etest.Scripts(e2etest.CheckScript)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e2etest.ScriptParams(files)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, p)
}
