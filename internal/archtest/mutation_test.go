package archtest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mutate reads the module again with one more file in dir (module-relative)
// importing the module's package imp; build is the file's //go:build
// expression ("" for none).
func mutate(t *testing.T, dir, pkgName, build, imp string) []config {
	t.Helper()
	root := moduleRoot(t)
	src := ""
	if build != "" {
		src = "//go:build " + build + "\n\n"
	}
	src += "package " + pkgName + "\n\nimport _ \"" + module + "/" + imp + "\"\n"
	abs := filepath.Join(root, filepath.FromSlash(dir))
	tr := tree{root: root, overlay: map[string]string{filepath.Join(abs, "zz_archtest_mutation.go"): src}}
	cfgs := moduleConfigs(t)
	require.NoError(t, tr.reload(cfgs, abs))
	return cfgs
}

func findViolation(r result, from, to string) *violation {
	for i, v := range r.violations {
		if v.from == from && v.to == to {
			return &r.violations[i]
		}
	}
	return nil
}

// mutations are issue 31's imports that compiled and passed the earlier
// forbid-list: each added as a file to dir (package name, //go:build build),
// importing imp; configs are where the edge is read (nil: everywhere).
var mutations = []struct {
	dir, name, build, imp string
	configs               []string
}{
	{dir: "gate", name: "gate", imp: "internal/cli"},
	{dir: "internal/baseline", name: "baseline", build: "!linux", imp: "internal/report/gatetable",
		configs: []string{"darwin/amd64", "darwin/arm64", "freebsd/amd64", "windows/386", "windows/amd64", allFiles}},
	{dir: "internal/llm", name: "llm", imp: "internal/report/html"},
	{dir: "internal/check", name: "check", imp: "internal/github"},
	{dir: "internal/compare", name: "compare", imp: "internal/baseline/ghartifact"},
}

// TestMutationsAreRefused: each import of issue 31's list compiled and passed
// the earlier forbid-list test; added to a copy of the real module (as a real
// file, read by the same loader), each is refused, in every configuration
// that builds the file. The !linux file is one linux/amd64 never reads, as
// the earlier test, reading the machine's own platform, did not.
func TestMutationsAreRefused(t *testing.T) {
	for _, tt := range mutations {
		t.Run(tt.dir+" -> "+tt.imp, func(t *testing.T) {
			before := findViolation(check(moduleConfigs(t), allowlist), tt.dir, tt.imp)
			require.Nil(t, before, "the edge is not in the module itself")
			r := check(mutate(t, tt.dir, tt.name, tt.build, tt.imp), allowlist)
			v := findViolation(r, tt.dir, tt.imp)
			require.NotNil(t, v, "the mutation is refused")
			want := tt.configs
			if want == nil {
				want = append(slices.Clone(platforms), allFiles)
			}
			assert.Equal(t, want, v.configs)
			assert.False(t, r.ok())
			t.Log(v)
		})
	}
}

// moved are the sideways imports of issue 31's misplaced helpers, gone since
// each helper moved (check's ParentFromID and trecfile's TopKIdentities to
// casefile, llm's EndpointURL to httpretry, ghartifact's WriteEvent to
// github, trend's StrategyGroup to outcome).
var moved = []struct{ dir, name, imp string }{
	{"internal/check", "check", "internal/importer"},
	{"internal/llm", "llm", "internal/retrieve/embed"},
	{"internal/baseline/ghartifact", "ghartifact", "internal/history/ghbranch"},
	{"internal/input/trecfile", "trecfile", "internal/metrics"},
	{"internal/trend", "trend", "internal/compare"},
}

// TestMovedHelpersEdgesAreRefused: put back, each sideways import of a moved
// helper is refused everywhere.
func TestMovedHelpersEdgesAreRefused(t *testing.T) {
	for _, tt := range moved {
		t.Run(tt.dir+" -> "+tt.imp, func(t *testing.T) {
			require.Nil(t, findViolation(check(moduleConfigs(t), allowlist), tt.dir, tt.imp), "the edge is not in the module itself")
			v := findViolation(check(mutate(t, tt.dir, tt.name, "", tt.imp), allowlist), tt.dir, tt.imp)
			require.NotNil(t, v, "the import is refused")
			assert.Equal(t, append(slices.Clone(platforms), allFiles), v.configs)
		})
	}
}

// A renderer that reaches the publisher through a third package is refused:
// the third package's import breaks its own layer's row, and the renderers
// that would reach the publisher through it are named.
func TestReachThroughAThirdPackageIsRefused(t *testing.T) {
	r := check(mutate(t, "internal/retrieve/text", "text", "", "internal/publish"), allowlist)
	v := findViolation(r, "internal/retrieve/text", "internal/publish")
	require.NotNil(t, v)
	assert.Contains(t, v.reachers, "internal/report/summary", "summary -> retrieve -> text")
	assert.Contains(t, v.reachers, "gate", "the library reaches it through retrieve")
	assert.NotContains(t, v.reachers, "internal/cli", "the CLI may import the publisher")
	for _, p := range v.reachers {
		assert.NotEqual(t, "publisher", layersOf(p)[0], p)
	}
}

// A package no layer names is refused, and so is one two layers name.
func TestNewPackageMustBeAssigned(t *testing.T) {
	r := check(mutate(t, "internal/archtestnew", "archtestnew", "", "internal/format"), allowlist)
	assert.Equal(t, []string{"internal/archtestnew"}, r.unassigned)
	saved := layers
	t.Cleanup(func() { layers = saved })
	layers = slices.Clone(layers)
	layers[0].pkgs = append(slices.Clone(layers[0].pkgs), "internal/metrics")
	r = check(moduleConfigs(t), allowlist)
	require.Len(t, r.ambiguous, 1)
	assert.True(t, strings.HasPrefix(r.ambiguous[0], "internal/metrics (leaf, math)"), r.ambiguous[0])
}

// An allowlist entry that exempts nothing is reported, so the list only shrinks.
func TestUnneededAllowlistEntryIsReported(t *testing.T) {
	allow := map[string]string{"internal/format -> internal/cli": "issue 0 (nobody): never there"}
	for k, v := range allowlist {
		allow[k] = v
	}
	r := check(moduleConfigs(t), allow)
	assert.Equal(t, []string{"internal/format -> internal/cli"}, r.unused)
}

// A test helper under a family's directory is test support, not the family's.
func TestTestHelperInAFamilyIsTestSupport(t *testing.T) {
	assert.Equal(t, []string{"testsupport"}, layersOf("internal/input/inputtest"))
	assert.Equal(t, []string{"reader"}, layersOf("internal/input/casefile"))
	assert.Equal(t, []string{"testsupport"}, layersOf("internal/retrieve/store/chroma/chromatest"))
	assert.Equal(t, []string{"retrieval"}, layersOf("internal/retrieve/store/chroma"))
}
