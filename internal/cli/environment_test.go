package cli

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The process environment enters the binary in one place, the front end's
// adapter: OSEnv (cli.go) puts os.Getenv into the Env, and everything else
// receives values from the CLI: the run's provenance (provenance.go), the
// store's URL and keys and the embedder's key (retrieve.go), the chat
// server's API key (judge.go: llmAPIKey), the Action inputs. No package the binary links, and no package of the public library,
// reads the environment or runs a program: TestOnlyTheFrontEndReadsTheEnvironment
// parses their non-test files for every GOOS the project builds for.

const modulePath = "github.com/retrieval-gate/retrieval-gate"

// buildTargets are the GOOS the binary is built for (the container image's
// linux, and darwin and windows for `go install`).
var buildTargets = []string{"linux", "darwin", "windows"}

// envReaders are the functions that read the process environment or run a
// program, by import path and name; a reference counts as much as a call
// (Getenv: os.Getenv hands the environment on).
var envReaders = map[string][]string{
	"os":      {"Getenv", "LookupEnv", "Environ", "ExpandEnv", "Setenv", "Unsetenv", "Clearenv", "StartProcess"},
	"os/exec": {"Command", "CommandContext", "LookPath"},
	"syscall": {"Getenv", "Environ", "Exec", "ForkExec", "StartProcess"},
}

// envAllowed are the files that may use an envReader: the one adapter.
var envAllowed = map[string]string{
	"internal/cli/cli.go": "OSEnv: the process environment enters the Env here",
}

// getenvAllowed are the packages that may declare a getenv function (a field,
// parameter or function named getenv or Getenv): the environment handed on as
// a function. The front end holds it; the GitHub adapters read the Actions
// environment (GITHUB_*, INPUT_*, the token) that the CLI's Env hands them.
// An entry no longer needed fails the test, so the list only shrinks.
var getenvAllowed = map[string]string{
	"internal/cli":                 "the front end: its Env is where the environment enters",
	"internal/github":              "a GitHub adapter: the Actions environment (ReadActions)",
	"internal/publish":             "a GitHub adapter: the token, the run's URL, the Actions environment of what it publishes",
	"internal/baseline/ghartifact": "a GitHub adapter: the artifact lookup of --baseline auto (Auto)",
	"internal/history/ghbranch":    "a GitHub adapter: the history branch's writers' gating (WriteRun)",
}

// linked is every package of the module that one of roots imports, directly
// or not, for goos (non-test files, cgo off), by path relative to the module
// root, with its directory's files that build.
func linked(t *testing.T, root string, goos string, roots ...string) map[string][]string {
	t.Helper()
	ctxt := build.Default
	ctxt.GOOS, ctxt.CgoEnabled = goos, false
	out := map[string][]string{}
	var visit func(rel string)
	visit = func(rel string) {
		if _, ok := out[rel]; ok {
			return
		}
		pkg, err := ctxt.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
		require.NoError(t, err, "%s for %s", rel, goos)
		out[rel] = pkg.GoFiles
		for _, imp := range pkg.Imports {
			if sub, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				visit(sub)
			} else if imp == modulePath {
				visit(".")
			}
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return out
}

// isTestSupport: the project's test fakes and helpers are the packages whose
// path ends in "test" (browsertest, chromatest, llmtest, githubtest, e2etest,
// runnertest, racetest, codetest, registrytest, …).
func isTestSupport(rel string) bool { return strings.HasSuffix(path.Base(rel), "test") }

func TestOnlyTheFrontEndReadsTheEnvironment(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	envUsed, getenvUsed := map[string]bool{}, map[string]bool{}
	var problems []string
	for _, goos := range buildTargets {
		// The binary (main) and the public library (gate, report).
		pkgs := linked(t, root, goos, ".", "gate", "report")
		require.Contains(t, pkgs, "internal/cli", "the graph reaches the front end")
		require.Contains(t, pkgs, "internal/retrieve/store/chroma", "and the stores it registers")
		for rel, files := range pkgs {
			if isTestSupport(rel) {
				problems = append(problems, goos+": the binary or the library links the test package "+rel)
			}
			for _, name := range files {
				file := path.Join(rel, name)
				if rel == "." {
					file = name
				}
				for _, p := range envUses(t, filepath.Join(root, filepath.FromSlash(rel), name)) {
					if p.getenv {
						if _, ok := getenvAllowed[rel]; ok {
							getenvUsed[rel] = true
							continue
						}
					} else if _, ok := envAllowed[file]; ok {
						envUsed[file] = true
						continue
					}
					problems = append(problems, file+":"+strconv.Itoa(p.line)+": "+p.what)
				}
			}
		}
	}
	sort.Strings(problems)
	problems = slices.Compact(problems)
	if len(problems) > 0 {
		t.Errorf("only the front end's adapter (internal/cli, OSEnv) reads the environment; everything else gets values:\n%s", strings.Join(problems, "\n"))
	}
	for file := range envAllowed {
		assert.True(t, envUsed[file], "envAllowed lists %s, which no longer reads the environment: remove the entry", file)
	}
	for pkg := range getenvAllowed {
		assert.True(t, getenvUsed[pkg], "getenvAllowed lists %s, which no longer declares a getenv: remove the entry", pkg)
	}
}

// TestEnvironmentRulesFire: the parser finds each kind of use the rule is
// about, so the test above cannot pass by finding nothing.
func TestEnvironmentRulesFire(t *testing.T) {
	src := `package x

import (
	"os"
	run "os/exec"
	"syscall"
)

type Options struct{ Getenv func(string) string }

func f(getenv func(string) string) {
	_ = os.Getenv("A")
	v, _ := os.LookupEnv("B")
	_ = v
	g := os.Environ
	_ = g
	_ = run.Command("git", "rev-parse", "HEAD")
	_ = syscall.Environ()
}

func getenv(string) string { return "" }
`
	file := filepath.Join(t.TempDir(), "x.go")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
	var got []string
	for _, p := range envUses(t, file) {
		got = append(got, strconv.Itoa(p.line)+" "+p.what)
	}
	assert.Equal(t, []string{
		"9 declares Getenv, the environment as a function",
		"11 declares getenv, the environment as a function",
		"12 uses os.Getenv",
		"13 uses os.LookupEnv",
		"15 uses os.Environ",
		"17 uses os/exec.Command",
		"18 uses syscall.Environ",
		"21 declares getenv, the environment as a function",
	}, got)
}

// envUse is one use of the environment in a file.
type envUse struct {
	line   int
	what   string
	getenv bool // a declared getenv, not a reader's use
}

// envUses parses file and lists its uses of an envReader (through whatever
// name the file imports its package as) and its declarations named getenv.
func envUses(t *testing.T, file string) []envUse {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		if _, ok := envReaders[p]; !ok {
			continue
		}
		local := path.Base(p)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = p
	}
	var out []envUse
	declared := func(id *ast.Ident) {
		if id != nil && strings.EqualFold(id.Name, "getenv") {
			out = append(out, envUse{fset.Position(id.Pos()).Line, "declares " + id.Name + ", the environment as a function", true})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if p, ok := names[x.Name]; ok {
					for _, fn := range envReaders[p] {
						if n.Sel.Name == fn {
							out = append(out, envUse{fset.Position(n.Pos()).Line, "uses " + p + "." + fn, false})
						}
					}
				}
			}
		case *ast.FuncDecl:
			declared(n.Name)
		case *ast.Field:
			for _, id := range n.Names {
				declared(id)
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared(id)
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						declared(id)
					}
				}
			}
		}
		return true
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}
