// Package archtest holds the import rules of the repository as a test: the
// layering ARCHITECTURE.md states is what this test enforces, nothing more.
package archtest

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/retrieval-gate/retrieval-gate"

// leaf is the package at the bottom: number formatting and escaping. It
// imports nothing of ours, so every layer may use it. optionLeaf, the typed
// refusal of an option that domain packages return and the CLI words, imports
// nothing of ours either.
const (
	leaf       = "internal/format"
	optionLeaf = "internal/option"
)

// domain are the packages that compute results (numbers, decisions, codes):
// they and their subpackages import no renderer (internal/report/...) and no
// publisher (internal/publish); the packages themselves do not talk to GitHub
// (internal/github) or GitLab (internal/gitlab) either: only their adapters
// (baseline/ghartifact, baseline/glartifact, history/ghbranch) do.
var domain = []string{
	"internal/gate", "internal/baseline", "internal/compare", "internal/calibrate",
	"internal/judge", "internal/generate", "internal/retrieve", "internal/floor",
	"internal/metrics", "internal/outcome", "internal/history", "internal/trend",
	"internal/importer", "internal/input", "internal/evaluate",
}

// allowlist holds the violations that exist today, each with the issue item
// that removes it; an entry that is no longer needed fails the test, so the list
// only shrinks. Keys are "importer -> imported".
var allowlist = map[string]string{}

// packages maps each package of the module (its path relative to the module
// root) to its non-test imports of the module's packages.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root")
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module (tools, examples)
			}
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var ours []string
		for _, imp := range pkg.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				ours = append(ours, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
			}
		}
		out[rel] = ours
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, out, leaf)
	require.Contains(t, out, "internal/cli")
	return out
}

// under reports whether pkg is dir or one of its subpackages.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// violations lists every import that breaks a rule, as "importer -> imported: rule".
func violations(pkgs map[string][]string) []string {
	var out []string
	add := func(from, to, rule string) { out = append(out, from+" -> "+to+": "+rule) }
	for from, imps := range pkgs {
		for _, to := range imps {
			if under(from, "internal") && !under(from, "internal/cli") && under(to, "internal/cli") {
				add(from, to, "nothing under internal/ imports the CLI")
			}
			if from == leaf || from == optionLeaf {
				add(from, to, "the leaf imports nothing of ours")
			}
			if under(to, "internal/publish") && !under(from, "internal/cli") && !under(from, "internal/publish") {
				add(from, to, "only the CLI publishes (the library, the domain and the renderers hand it data)")
			}
			if under(from, "internal/report") && (under(to, "internal/publish") || under(to, "internal/github") || under(to, "internal/gitlab")) {
				add(from, to, "a renderer receives what it prints (the comment marker), it does not publish")
			}
			for _, d := range domain {
				if !under(from, d) {
					continue
				}
				if under(to, "internal/report") || under(to, "internal/publish") {
					add(from, to, "a domain package carries data; renderers and publishers are above it")
				}
				if from == d && (under(to, "internal/github") || under(to, "internal/gitlab")) {
					add(from, to, "a domain package does not talk to GitHub or GitLab (its gh* or gl* adapter subpackage does)")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestImportRules(t *testing.T) {
	pkgs := packages(t)
	var broken []string
	used := map[string]bool{}
	for _, v := range violations(pkgs) {
		edge, _, _ := strings.Cut(v, ": ")
		if _, ok := allowlist[edge]; ok {
			used[edge] = true
			continue
		}
		broken = append(broken, v)
	}
	assert.Empty(t, broken, "imports that break the rules of ARCHITECTURE.md")
	for edge, why := range allowlist {
		assert.True(t, used[edge], "allowlist entry %q (%s) is no longer needed: remove it", edge, why)
	}
}

// TestRulesCatchViolations runs the rules on a made-up graph: each rule fires on
// the import it forbids and not on its neighbours.
func TestRulesCatchViolations(t *testing.T) {
	tests := []struct {
		from, to string
		broken   bool
	}{
		{"internal/gate", "internal/cli", true},
		{"internal/report/html", "internal/cli", true},
		{"internal/cli/sub", "internal/cli", false},
		{"internal/format", "internal/outcome", true},
		{"internal/format", "internal/format/x", true},
		{"internal/gate", "internal/format", false},
		{"internal/floor", "internal/report/gatetable", true},
		{"internal/compare", "internal/report/comparereport", true},
		{"internal/input/casefile", "internal/report/checkreport", true},
		{"internal/calibrate", "internal/publish", true},
		{"internal/baseline", "internal/github", true},
		{"internal/baseline/ghartifact", "internal/github", false},
		{"internal/baseline", "internal/gitlab", true},
		{"internal/baseline/glartifact", "internal/gitlab", false},
		{"internal/report/junit", "internal/gitlab", true},
		{"internal/baseline/ghartifact", "internal/publish", true},
		{"internal/report/checkreport", "internal/publish", true},
		{"internal/report/checkreport", "internal/gate", false},
		{"internal/cli", "internal/report/checkreport", false},
		{"internal/cli", "internal/publish", false},
		{"internal/llm", "internal/github", false},
		{"internal/option", "internal/format", true},
		{"gate", "internal/publish", true},
		{"report", "internal/publish", true},
		{"internal/history/ghbranch", "internal/publish", true},
		{"internal/cli/registrytest", "internal/publish", false},
		{"internal/publish/runnertest", "internal/publish", false},
	}
	for _, tt := range tests {
		t.Run(tt.from+" -> "+tt.to, func(t *testing.T) {
			got := violations(map[string][]string{tt.from: {tt.to}})
			assert.Equal(t, tt.broken, len(got) > 0, "%v", got)
		})
	}
}

// TestDomainListExists keeps the rule's list in step with the tree: a renamed
// domain package must not silently drop out of the rule.
func TestDomainListExists(t *testing.T) {
	pkgs := packages(t)
	for _, d := range domain {
		assert.True(t, slices.ContainsFunc(keys(pkgs), func(p string) bool { return under(p, d) }), "domain package %s does not exist", d)
	}
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
