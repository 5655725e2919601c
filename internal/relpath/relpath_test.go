package relpath_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/relpath"
)

func TestRel(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	parent := filepath.Dir(wd)

	// A checkout reached through a link (a runner's /builds as a link), with
	// a file that exists and one that does not yet (an output).
	tmp := t.TempDir()
	real := filepath.Join(tmp, "real", "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "eval"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "eval", "cases.jsonl"), nil, 0o644))
	link := filepath.Join(tmp, "link")
	require.NoError(t, os.Symlink(filepath.Join(tmp, "real"), link))

	for _, tc := range []struct{ name, root, path, want string }{
		{"absolute under the root", "/builds/a/repo", "/builds/a/repo/eval/cases.jsonl", "eval/cases.jsonl"},
		{"absolute, unclean", "/builds/a/repo", "/builds/a/repo/eval/../eval/./cases.jsonl", "eval/cases.jsonl"},
		{"relative to the working directory", parent, "eval/cases.jsonl", filepath.Base(wd) + "/eval/cases.jsonl"},
		{"dot-dot from the working directory", parent, "../x/cases.jsonl", "x/cases.jsonl"},
		{"a relative root", ".", "./testdata/x.jsonl", "testdata/x.jsonl"},
		{"outside the root, absolute", "/builds/a/repo", "/data/cases.jsonl", "/data/cases.jsonl"},
		{"outside the root, relative", wd, "../x/cases.jsonl", "../x/cases.jsonl"},
		{"the root's sibling with its name as prefix", "/builds/a/repo", "/builds/a/repo2/cases.jsonl", "/builds/a/repo2/cases.jsonl"},
		{"the root itself", "/builds/a/repo", "/builds/a/repo", "."},
		{"no root", "", "./eval/cases.jsonl", "eval/cases.jsonl"},
		{"no root, doubled slash", "", "x//y.jsonl", "x/y.jsonl"},
		{"no path", "/builds/a/repo", "", "."},
		{"the root through a link, the path resolved", filepath.Join(link, "repo"), filepath.Join(real, "eval", "cases.jsonl"), "eval/cases.jsonl"},
		{"the path through a link, the root resolved", real, filepath.Join(link, "repo", "eval", "cases.jsonl"), "eval/cases.jsonl"},
		{"through a link, a file not yet written", real, filepath.Join(link, "repo", "out", "new", "agg.json"), "out/new/agg.json"},
		{"through a link, outside the root", real, filepath.Join(link, "other.jsonl"), filepath.Join(link, "other.jsonl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, relpath.Rel(tc.root, tc.path))
		})
	}
}

func TestResolve(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(tmp, "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "a"), 0o755))
	link := filepath.Join(tmp, "link")
	require.NoError(t, os.Symlink(real, link))
	for _, tc := range []struct{ name, path, want string }{
		{"an existing path through a link", filepath.Join(link, "a"), filepath.Join(real, "a")},
		{"a path not yet written, through a link", filepath.Join(link, "a", "new", "out.json"), filepath.Join(real, "a", "new", "out.json")},
		{"no link", filepath.Join(real, "a", "x"), filepath.Join(real, "a", "x")},
		{"a link to nowhere", filepath.Join(tmp, "nowhere", "x"), filepath.Join(tmp, "nowhere", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, relpath.Resolve(tc.path))
		})
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, relpath.Resolve(filepath.Join(wd, "x", "y")), relpath.Resolve("x/y"), "a relative path is taken from the working directory")
}
