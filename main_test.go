package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab/gitlabtest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestMain builds the binary (e2etest.Main puts it first on PATH: every
// end-to-end test runs it) and lets testscript run this test binary as the
// `retrieval-gate` command too, wired to signals as main is (the git-guard
// test runs it where PATH holds nothing else).
func TestMain(m *testing.M) {
	e2etest.Main(m, map[string]func(){
		"retrieval-gate": func() { os.Exit(run()) },
		// fake-github serves GitHub's REST semantics on loopback for the action scripts.
		"fake-github": githubtest.Main,
		// fake-gitlab serves GitLab's REST semantics (notes, artifacts) on loopback for the GitLab scripts.
		"fake-gitlab": gitlabtest.Main,
		// fake-llm serves the OpenAI chat-completions protocol (a judge with a hidden relevance table, a query generator).
		"fake-llm": llmtest.Main,
	})
}

// TestScripts runs the end-to-end scripts in testdata/script that no other
// package runs (internal/e2e/checkscripts runs check's and history's): real
// processes on real files. Scripts see the repository root as $ROOT and the
// demo as $DEMO.
func TestScripts(t *testing.T) {
	files, err := e2etest.Scripts(func(name string) bool { return !e2etest.CheckScript(name) })
	if err != nil {
		t.Fatal(err)
	}
	p, err := e2etest.ScriptParams(files)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, p)
}
