package githubtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrieval-gate/retrieval-gate/cli"
	"github.com/retrieval-gate/retrieval-gate/github/githubtest"
)

// TestMain provides the two commands the action scripts need: the real binary's
// entry point and the fake GitHub API (main_test.go at the root can register
// githubtest.Main the same way; until then its run skips the script).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"retrieval-gate": func() { os.Exit(cli.Run(context.Background(), cli.OSEnv(), os.Args[1:])) },
		"fake-github":    githubtest.Main,
	})
}

// TestActionScripts runs testdata/script/action_comment.txtar with the fake API.
func TestActionScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Files: []string{"../../testdata/script/action_comment.txtar"},
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", "../..")
			return nil
		},
	})
}
