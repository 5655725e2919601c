// Package e2etest runs the built binary for the end-to-end test packages: the
// repository root's own tests and those under internal/e2e, split so that no
// package runs past its time budget (issue 23) while `go test ./...` runs them
// side by side. Each package builds the binary once, as `go install` does, and
// puts it first on PATH.
package e2etest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/filelock"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/rogpeppe/go-internal/testscript"
)

// ModulePath is the module whose root Root finds.
const ModulePath = "github.com/retrieval-gate/retrieval-gate"

var (
	rootOnce sync.Once
	root     string
	rootErr  error

	binOnce sync.Once
	binPath string
	binErr  error
	binTemp string // the process's own directory when there is no user cache directory
)

// Root is the repository root: the nearest directory at or above the working
// directory whose go.mod declares ModulePath (examples/gotest has its own).
func Root() (string, error) {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "module "+ModulePath+"\n") {
				root = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("e2etest: no go.mod of " + ModulePath + " above the working directory")
				return
			}
			dir = parent
		}
	})
	return root, rootErr
}

// Binary builds the command once per test process and returns its path. With
// -race when the tests run with it: the build then reuses the tests' compiled
// packages (a non-race build of the module on a cold cache is 137 s of CPU,
// which pushed a package past its timeout on a loaded machine), and the race
// detector stays on the end-to-end processes; Main sets
// GORACE=atexit_sleep_ms=0 so no process sleeps a second at exit. Coverage
// instrumentation (GOFLAGS=-cover) is left out: it would warn on every run.
//
// The five end-to-end packages share one binary (sharedDir): each runs
// `go build -o` into the same path, one at a time (a lock file), and go build
// links only when the file there is not already what it would link (it
// compares build ids), so `go test ./...` links the binary once instead of
// five times (about 3 s of CPU each). A change to the sources relinks it; a
// process still running the old file keeps it (go build renames the new one
// into place).
func Binary() (string, error) {
	binOnce.Do(func() {
		r, err := Root()
		if err != nil {
			binErr = err
			return
		}
		args := []string{"build"}
		if racetest.Enabled {
			args = append(args, "-race")
		}
		var flags []string
		for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
			if !strings.HasPrefix(f, "-cover") {
				flags = append(flags, f)
			}
		}
		env := append(os.Environ(), "GOFLAGS="+strings.Join(flags, " "))
		dir, unlock, err := sharedDir(r, args, env)
		if errors.Is(err, errNoCache) {
			// No user cache directory ($HOME unset): a directory of this
			// process's own, removed when its tests end (Main).
			if dir, err = os.MkdirTemp("", "retrieval-gate-bin-"); err == nil {
				binTemp, unlock = dir, func() {}
			}
		}
		if err != nil {
			binErr = err
			return
		}
		defer unlock()
		binPath = filepath.Join(dir, "retrieval-gate")
		args = append(args, "-o", binPath, ".")
		cmd := exec.Command("go", args...)
		cmd.Dir = r
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	})
	return binPath, binErr
}

// errNoCache is sharedDir's error when the user has no cache directory.
var errNoCache = errors.New("e2etest: no user cache directory")

// binCacheAge is how long an unused shared binary is kept (sharedDir).
const binCacheAge = 24 * time.Hour

// sharedDir is the directory of the binary built from the checkout root with
// the go command's args and environment env, under the user's cache
// directory (retrieval-gate-e2e/KEY, KEY a hash of the root, the arguments and
// the environment variables that change what go build makes), locked until
// unlock is called. Directories unused for binCacheAge are removed, so clones
// that are gone do not leave their binaries behind.
func sharedDir(root string, args, env []string) (dir string, unlock func(), err error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", errNoCache, err)
	}
	base := filepath.Join(cache, "retrieval-gate-e2e")
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", root, strings.Join(args, " "))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); slices.Contains([]string{"GOFLAGS", "CGO_ENABLED", "GOOS", "GOARCH", "GOEXPERIMENT", "GOAMD64", "GOARM64", "GOTOOLCHAIN", "CC"}, k) {
			fmt.Fprintf(h, "%s\x00", kv)
		}
	}
	dir = filepath.Join(base, hex.EncodeToString(h.Sum(nil))[:20])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	lf, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, err
	}
	release, err := filelock.Lock(context.Background(), lf)
	if err != nil {
		lf.Close()
		return "", nil, err
	}
	unlock = func() {
		release()
		lf.Close()
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
	if entries, err := os.ReadDir(base); err == nil {
		for _, e := range entries {
			p := filepath.Join(base, e.Name())
			if fi, err := os.Stat(p); err == nil && p != dir && now.Sub(fi.ModTime()) > binCacheAge {
				_ = os.RemoveAll(p)
			}
		}
	}
	return dir, unlock, nil
}

// Main is an end-to-end package's TestMain: it builds the binary, puts it first
// on PATH (before testscript's own command directory), runs the tests with the
// extra commands cmds available to scripts and child processes (testscript.Main).
func Main(m *testing.M, cmds map[string]func()) {
	testscript.Main(runner{m}, cmds)
}

type runner struct{ m *testing.M }

func (r runner) Run() int {
	// The tests read the repository's files by paths from its root.
	if dir, err := Root(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	} else if err := os.Chdir(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin, err := Binary()
	defer func() {
		if binTemp != "" {
			_ = os.RemoveAll(binTemp)
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("PATH", filepath.Dir(bin)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	// A -race binary sleeps a second at exit by default (GORACE atexit_sleep_ms=1000):
	// a second per command run, and past the signal tests' 1 s deadline.
	if !strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	return r.m.Run()
}

// Scripts lists the end-to-end scripts of testdata/script that a package runs:
// those for which mine holds. The root package runs those for which no other
// package's predicate holds, so every script runs exactly once.
func Scripts(mine func(name string) bool) ([]string, error) {
	r, err := Root()
	if err != nil {
		return nil, err
	}
	all, err := filepath.Glob(filepath.Join(r, "testdata", "script", "*.txtar"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		if mine(filepath.Base(f)) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("e2etest: no script in testdata/script is this package's")
	}
	return out, nil
}

// CheckScript says whether a script is internal/e2e/checkscripts' (check's and
// history's, about half of the scripts' time) rather than the root package's.
func CheckScript(name string) bool {
	return strings.HasPrefix(name, "check_") || strings.HasPrefix(name, "history")
}

// ScriptParams are the testscript parameters every script package shares: the
// repository root as $ROOT, the demo as $DEMO, CHROMA_URL and CI passed through,
// and the [env:NAME] condition.
func ScriptParams(files []string) (testscript.Params, error) {
	r, err := Root()
	if err != nil {
		return testscript.Params{}, err
	}
	return testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", r)
			env.Setenv("DEMO", r+"/testdata/demo")
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
	}, nil
}

// ExitCode is the process exit code of a Wait error: 0 for nil, -1 when the
// process was killed by a signal or did not run.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
