package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestMain lets testscript run this binary as the `retrieval-gate` command in
// its own process, wired to signals as main is.
func TestMain(m *testing.M) {
	testscript.Main(removeBinary{m}, map[string]func(){
		"retrieval-gate": func() { os.Exit(run()) },
		// fake-github serves GitHub's REST semantics on loopback for the action scripts.
		"fake-github": githubtest.Main,
		// fake-llm serves the OpenAI chat-completions protocol (a judge with a hidden relevance table, a query generator).
		"fake-llm": llmtest.Main,
	})
}

// removeBinary runs the tests, then removes the binary docBinary built.
type removeBinary struct{ m *testing.M }

func (r removeBinary) Run() int {
	// The built binary before the test binary's own `retrieval-gate` (testscript's
	// command directory, already on PATH): every end-to-end test runs it.
	if bin := docBinary(nil); binErr == nil {
		os.Setenv("PATH", filepath.Dir(bin)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	} else {
		fmt.Fprintln(os.Stderr, binErr)
		return 1
	}
	// A -race binary (the test binary, or the built one under RETRIEVAL_GATE_HEAVY_TESTS)
	// sleeps a second at exit by default (GORACE atexit_sleep_ms=1000): a second per
	// command run, and past the signal tests' 1 s deadline.
	if !strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	code := r.m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}

// TestScripts runs the end-to-end scripts in testdata/script: real processes on
// real files. Scripts see the repository root as $ROOT and the demo as $DEMO.
func TestScripts(t *testing.T) {
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", root)
			env.Setenv("DEMO", root+"/testdata/demo")
			for _, k := range []string{"CHROMA_URL", "CI"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			return nil
		},
		// [env:NAME] holds when the environment variable NAME is set and not empty.
		Condition: func(cond string) (bool, error) {
			if name, ok := strings.CutPrefix(cond, "env:"); ok {
				return os.Getenv(name) != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") == "1",
	})
}
