// Package archtest holds the import rules of the repository as a test: every
// package of the module belongs to one layer, each layer may import the
// layers its row names and nothing else. The import-rule section of
// ARCHITECTURE.md states this table and what the test checks, nothing more
// (claims_test.go compares the two).
package archtest

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layer is a set of packages and the layers they may import, directly or
// through other packages.
type layer struct {
	name string
	// pkgs are the layer's packages: a path relative to the module root; DIR/*
	// for every package one level under DIR but a *test one; *test for every
	// package whose last path element ends in "test" (a test's fake or helper,
	// wherever it lives).
	pkgs []string
	may  []string // the layers its packages may import (itself only if listed)
	what string   // what the layer is, one line
}

// layers is the architecture, from the bottom up. The table is closed: a layer
// may import whatever the layers it may import may (TestLayersAreClosed), so
// a package reaches only what its own layer may import.
var layers = []layer{
	{"leaf", []string{"internal/format", "internal/guard", "internal/option", "internal/offheap", "internal/filelock", "internal/relpath", "internal/jsoncap"}, nil,
		"the presentation policy, the output guard, the option refusal, memory outside the Go heap, the file lock, the checkout-relative path, the capped JSON scanner"},
	{"math", []string{"internal/metrics", "internal/outcome"}, []string{"leaf"},
		"pure math and the gate outcome, no I/O"},
	{"reader", []string{"internal/input", "internal/input/*", "internal/gitread"}, []string{"leaf", "reader"},
		"what reads an input: the file families, the pure-Go git reader"},
	{"transport", []string{"internal/httpretry"}, []string{"leaf"},
		"the one HTTP policy of every client"},
	{"output", []string{"internal/atomicfile", "internal/progress", "internal/ctxwrite"}, []string{"leaf"},
		"what writes a command's files, its progress and its streams: the front end's"},
	{"llm", []string{"internal/llm"}, []string{"leaf", "transport"},
		"the LLM clients"},
	{"forge", []string{"internal/github", "internal/gitlab"}, []string{"leaf", "transport"},
		"the CI hosts: the Actions environment and GitHub's REST API, GitLab's"},
	{"retrieval", []string{"internal/retrieve/*", "internal/retrieve/store/*", "internal/retrieve/internal/*"}, []string{"leaf", "reader", "transport", "retrieval"},
		"retrieve's parts: chunking, embedders, stores and their registries, BM25, fusion, rerank"},
	{"decision", []string{"internal/floor", "internal/gate", "internal/baseline", "internal/history", "internal/trend"}, []string{"leaf", "math", "reader", "decision"},
		"the decisions and records the commands share: floors, check's scoring, the baseline, the history and its trend"},
	{"pipeline", []string{"internal/check", "internal/compare", "internal/calibrate", "internal/judge", "internal/importer", "internal/retrieve"}, []string{"leaf", "math", "reader", "transport", "llm", "retrieval", "decision"},
		"one command's pipeline each; none imports another"},
	{"composite", []string{"internal/generate", "internal/evaluate"}, []string{"leaf", "math", "reader", "transport", "llm", "retrieval", "decision", "pipeline", "composite"},
		"a pipeline over others: generate (judge's LLM calls and batches, retrieve's index), evaluate (every stage)"},
	{"artifact", []string{"internal/baseline/ciartifact"}, []string{"leaf", "transport", "forge"},
		"what the baseline's adapters to a CI host share: the artifact's file, its caps, the reasons, its verification"},
	{"adapter", []string{"internal/baseline/ghartifact", "internal/baseline/glartifact", "internal/history/ghbranch"}, []string{"leaf", "math", "reader", "transport", "forge", "decision", "artifact"},
		"the baseline's and the history's adapters to a CI host; none imports another"},
	{"renderer", []string{"internal/report/*"}, []string{"leaf", "math", "reader", "transport", "llm", "retrieval", "decision", "pipeline", "composite", "renderer"},
		"the words and documents of the results"},
	{"publisher", []string{"internal/publish"}, []string{"leaf", "math", "reader", "transport", "llm", "retrieval", "decision", "pipeline", "forge"},
		"what a command hands to its CI host (GitHub, GitLab); the words are handed to it"},
	{"library", []string{"gate", "report"}, []string{"leaf", "math", "reader", "transport", "llm", "retrieval", "decision", "pipeline", "composite", "renderer"},
		"the public Go packages, the library front end"},
	{"cli", []string{"internal/cli"}, []string{"leaf", "math", "reader", "transport", "output", "llm", "forge", "retrieval", "decision", "pipeline", "composite", "artifact", "adapter", "renderer", "publisher", "library"},
		"the command-line front end"},
	{"main", []string{"."}, []string{"leaf", "math", "reader", "transport", "output", "llm", "forge", "retrieval", "decision", "pipeline", "composite", "artifact", "adapter", "renderer", "publisher", "library", "cli"},
		"the binary"},
	{"testsupport", []string{"*test", "internal/e2e/*", "internal/browsertest/*"}, []string{"leaf", "math", "reader", "transport", "output", "llm", "forge", "retrieval", "decision", "pipeline", "composite", "artifact", "adapter", "renderer", "publisher", "library", "cli", "testsupport"},
		"fakes and helpers of tests, never in the binary"},
	{"devcmd", []string{"cmd/*"}, []string{"leaf", "math", "reader", "transport", "output", "llm", "forge", "retrieval", "decision", "pipeline", "composite", "artifact", "adapter", "renderer", "publisher", "library", "cli", "testsupport"},
		"the development commands (cmd/llmfake serves a test fake)"},
}

// allowlist holds the known violations, each with the item that removes it;
// an entry that is no longer needed fails the test, so the list only shrinks.
// Keys are "importer -> imported".
var allowlist = map[string]string{}

func layerByName(name string) *layer {
	for i := range layers {
		if layers[i].name == name {
			return &layers[i]
		}
	}
	return nil
}

// matches reports whether pattern (a layer's entry) names pkg.
func matches(pattern, pkg string) bool {
	switch {
	case pattern == "*test":
		return strings.HasSuffix(path.Base(pkg), "test") && pkg != "."
	case strings.HasSuffix(pattern, "/*"):
		dir := strings.TrimSuffix(pattern, "/*")
		return path.Dir(pkg) == dir && !matches("*test", pkg)
	}
	return pattern == pkg
}

// layersOf are the layers whose entries name pkg (one, when the table is right).
func layersOf(pkg string) []string {
	var out []string
	for _, l := range layers {
		for _, p := range l.pkgs {
			if matches(p, pkg) {
				out = append(out, l.name)
				break
			}
		}
	}
	return out
}

// may reports whether a package of layer from may import one of layer to.
func may(from, to string) bool {
	l := layerByName(from)
	return l != nil && slices.Contains(l.may, to)
}

// violation is an import the table refuses, with the configurations that
// read it and the packages it makes reach a layer theirs may not.
type violation struct {
	from, to string
	rule     string
	configs  []string
	reachers []string // other packages that reach to through from, whose layer may not
}

func (v violation) edge() string { return v.from + " -> " + v.to }

func (v violation) String() string {
	s := v.edge() + ": " + v.rule + " [" + strings.Join(v.configs, ", ") + "]"
	if len(v.reachers) > 0 {
		s += "; through it " + strings.Join(v.reachers, ", ") + " would reach " + v.to + " too"
	}
	return s
}

// result is what the rules find in a module's import graphs.
type result struct {
	unassigned []string // packages no layer names
	ambiguous  []string // packages two layers name
	violations []violation
	unused     []string // allowlist entries no configuration needs
}

func (r result) ok() bool {
	return len(r.unassigned)+len(r.ambiguous)+len(r.violations)+len(r.unused) == 0
}

// check applies the layers to every configuration's graph; allow exempts
// the edges it names (and is reported where an entry exempts nothing).
func check(cfgs []config, allow map[string]string) result {
	var r result
	seen := map[string]bool{}
	byEdge := map[string]*violation{}
	used := map[string]bool{}
	for _, c := range cfgs {
		for _, pkg := range slices.Sorted(maps.Keys(c.g)) {
			if seen[pkg] {
				continue
			}
			seen[pkg] = true
			switch ls := layersOf(pkg); len(ls) {
			case 0:
				r.unassigned = append(r.unassigned, pkg)
			case 1:
			default:
				r.ambiguous = append(r.ambiguous, pkg+" ("+strings.Join(ls, ", ")+")")
			}
		}
	}
	for _, c := range cfgs {
		layerOf := func(pkg string) string {
			if ls := layersOf(pkg); len(ls) == 1 {
				return ls[0]
			}
			return ""
		}
		// The edges the table refuses, exempted ones aside.
		exempt := func(from, to string) bool {
			_, ok := allow[from+" -> "+to]
			return ok
		}
		for _, from := range slices.Sorted(maps.Keys(c.g)) {
			lf := layerOf(from)
			for _, to := range c.g[from] {
				if exempt(from, to) {
					used[from+" -> "+to] = true
					continue
				}
				lt := layerOf(to)
				if lf == "" || lt == "" || may(lf, lt) {
					continue
				}
				key := from + " -> " + to
				v := byEdge[key]
				if v == nil {
					v = &violation{from: from, to: to, rule: fmt.Sprintf("layer %s may not import layer %s", lf, lt)}
					byEdge[key] = v
				}
				v.configs = append(v.configs, c.name)
			}
		}
		// Who reaches each refused edge: every package that reaches its
		// importer, over the edges not exempted, and whose layer may not
		// import the imported package's.
		users := reverse(c.g, exempt)
		for _, v := range byEdge {
			if !slices.Contains(v.configs, c.name) {
				continue
			}
			lt := layerOf(v.to)
			for _, p := range ancestors(users, v.from) {
				if lp := layerOf(p); lp != "" && !may(lp, lt) && !slices.Contains(v.reachers, p) {
					v.reachers = append(v.reachers, p)
				}
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(byEdge)) {
		v := byEdge[key]
		sort.Strings(v.reachers)
		r.violations = append(r.violations, *v)
	}
	for _, edge := range slices.Sorted(maps.Keys(allow)) {
		if !used[edge] {
			r.unused = append(r.unused, edge)
		}
	}
	return r
}

// reverse is g's edges backwards (imported -> importers), exempt ones left out.
func reverse(g graph, exempt func(from, to string) bool) map[string][]string {
	out := map[string][]string{}
	for from, tos := range g {
		for _, to := range tos {
			if !exempt(from, to) {
				out[to] = append(out[to], from)
			}
		}
	}
	return out
}

// ancestors are the packages that import pkg directly or through others.
func ancestors(users map[string][]string, pkg string) []string {
	var out []string
	seen := map[string]bool{pkg: true}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, u := range users[p] {
			if !seen[u] {
				seen[u] = true
				out = append(out, u)
				queue = append(queue, u)
			}
		}
	}
	return out
}

// loadModule reads the module's import graphs once per test binary.
var loaded struct {
	cfgs []config
	err  error
	done bool
}

func moduleConfigs(t *testing.T) []config {
	t.Helper()
	if !loaded.done {
		loaded.cfgs, loaded.err = tree{root: moduleRoot(t)}.load()
		loaded.done = true
	}
	require.NoError(t, loaded.err)
	return clone(loaded.cfgs)
}

func TestImportRules(t *testing.T) {
	cfgs := moduleConfigs(t)
	require.Len(t, cfgs, len(platforms)+1)
	for _, c := range cfgs {
		require.Contains(t, c.g, "internal/cli", c.name)
		require.Contains(t, c.g, "internal/format", c.name)
	}
	r := check(cfgs, allowlist)
	assert.Empty(t, r.unassigned, "packages no layer names: add each to its layer (ARCHITECTURE.md's table too)")
	assert.Empty(t, r.ambiguous, "packages two layers name")
	var broken []string
	for _, v := range r.violations {
		broken = append(broken, v.String())
	}
	assert.Empty(t, broken, "imports the layers refuse (ARCHITECTURE.md, import rules)")
	for _, edge := range r.unused {
		assert.Fail(t, "allowlist entry no longer needed: remove it", "%s (%s)", edge, allowlist[edge])
	}
}

// TestLayersAreClosed: what a layer may import, the layers it may import may
// too, so no package reaches through another what its own layer may not
// import; and every layer the table names exists.
func TestLayersAreClosed(t *testing.T) {
	for _, l := range layers {
		for _, m := range l.may {
			ml := layerByName(m)
			require.NotNil(t, ml, "layer %s may import %s, which is no layer", l.name, m)
			for _, mm := range ml.may {
				if mm == ml.name {
					continue
				}
				assert.True(t, slices.Contains(l.may, mm), "layer %s may import %s, which may import %s: so must %s", l.name, m, mm, l.name)
			}
		}
	}
	names := map[string]bool{}
	for _, l := range layers {
		assert.False(t, names[l.name], "layer %s twice", l.name)
		names[l.name] = true
	}
}

// TestLayersNameExistingPackages: every exact package of the table exists and
// every pattern names at least one, so a renamed package cannot silently
// drop out of its layer.
func TestLayersNameExistingPackages(t *testing.T) {
	g := moduleConfigs(t)[len(platforms)].g // all files
	for _, l := range layers {
		for _, p := range l.pkgs {
			found := false
			for pkg := range g {
				if matches(p, pkg) {
					found = true
					break
				}
			}
			assert.True(t, found, "layer %s names %s, which matches no package", l.name, p)
		}
	}
}

// TestAllowlistNamesItsRemoval: each known violation says what removes it.
func TestAllowlistNamesItsRemoval(t *testing.T) {
	for edge, why := range allowlist {
		assert.Regexp(t, `^issue \d+ \([a-z-]+\): .+`, why, edge)
	}
}
