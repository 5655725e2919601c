package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
)

// TestLibraryDocsNameEveryFlag: docs/library.md says, for each flag of check
// and retrieve, what the library has for it (a field of Options or
// LiveOptions, a method of the report) or that it is the CLI's alone, so a
// flag the library cannot reach is documented as such (it omitted retrieve's
// --rerank-url, --all-locales and --exact-check, and most of check's).
func TestLibraryDocsNameEveryFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "library.md"))
	require.NoError(t, err)
	// Flags are written `--name` or `--name VALUE`; reflowed text may join
	// lines, so the page is read with its newlines as spaces.
	page := strings.ReplaceAll(string(data), "\n", " ")
	for _, command := range []string{"check", "retrieve"} {
		for _, f := range helpFlagsOf(t, command) {
			named := strings.Contains(page, "`--"+f.name+"`") || strings.Contains(page, "`--"+f.name+" ")
			assert.True(t, named, "docs/library.md does not name %s's --%s (its library counterpart, or that it is the CLI's)", command, f.name)
		}
	}
}

// goBlock is a ```go block of a page.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestLibraryDocsGoExamplesRun builds and runs each Go example of
// docs/library.md as a reader pastes it into a module of their own: a whole
// file (the page's examples lacked the package clause and most imports, and
// one used undeclared variables), in a module that requires this checkout as
// examples/gotest does. A test file's tests pass on the demo's cases and KB at
// the paths it names (testdata/cases.jsonl, testdata/kb), on the in-process
// store; a main package runs to exit 0 beside a saved check --json report
// (retrieval-gate.json).
func TestLibraryDocsGoExamplesRun(t *testing.T) {
	requireHeavy(t, "builds and runs docs/library.md's Go examples with the go command")
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "library.md"))
	require.NoError(t, err)
	blocks := goBlock.FindAllSubmatchIndex(page, -1)
	require.GreaterOrEqual(t, len(blocks), 2, "docs/library.md shows a gate in a Go test and the rendering of a saved report")

	mod := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "examples", "gotest", "go.mod"))
	require.NoError(t, err)
	gomod = bytes.Replace(gomod, []byte("=> ../.."), []byte("=> "+root), 1)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), gomod, 0o644))
	gosum, err := os.ReadFile(filepath.Join(root, "examples", "gotest", "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.sum"), gosum, 0o644))

	// The saved report the rendering example reads.
	ctx := context.Background()
	kb, err := gate.LoadKB(ctx, filepath.Join(root, "testdata", "demo", "kb"))
	require.NoError(t, err)
	cases, err := os.Open(filepath.Join(root, "testdata", "demo", "cases.jsonl"))
	require.NoError(t, err)
	defer cases.Close()
	rep, err := gate.Check(ctx, cases, kb, gate.Options{})
	require.NoError(t, err)
	var saved bytes.Buffer
	require.NoError(t, rep.WriteJSON(&saved))

	for i, b := range blocks {
		src := page[b[2]:b[3]]
		line := bytes.Count(page[:b[2]], []byte("\n")) + 1
		t.Run(fmt.Sprintf("library.md:%d", line), func(t *testing.T) {
			pkg := regexp.MustCompile(`(?m)^package (\w+)\n`).FindSubmatch(src)
			require.NotNil(t, pkg, "docs/library.md:%d: a Go example is a whole file, its package clause and imports included, so that it runs as pasted", line)
			dir := filepath.Join(mod, fmt.Sprintf("example%d", i+1))
			require.NoError(t, copyTree(filepath.Join(root, "testdata", "demo", "kb"), filepath.Join(dir, "testdata", "kb")))
			data, err := os.ReadFile(filepath.Join(root, "testdata", "demo", "cases.jsonl"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "testdata", "cases.jsonl"), data, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "retrieval-gate.json"), saved.Bytes(), 0o644))

			name, args := "example_test.go", []string{"test", "-count=1", "-v", "."}
			if string(pkg[1]) == "main" {
				name, args = "main.go", []string{"run", "."}
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), src, 0o644))
			// The module's requirements are examples/gotest's, read only
			// (GOFLAGS as the tests', so the build cache is theirs); no
			// network; the in-process store whatever CHROMA_URL says.
			cmd := exec.Command("go", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOPROXY=off", "CHROMA_URL=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "docs/library.md:%d: go %s:\n%s%s", line, strings.Join(args, " "), stdout.Bytes(), stderr.Bytes())
			out := stdout.Bytes()
			if name == "main.go" {
				assert.True(t, bytes.HasPrefix(out, []byte("<!-- retrieval-gate:default -->\n")), "the Markdown report on standard output:\n%s", out)
				html, err := os.ReadFile(filepath.Join(dir, "retrieval-gate.html"))
				require.NoError(t, err)
				assert.True(t, bytes.HasPrefix(html, []byte("<!doctype html>\n")), "check's HTML report in retrieval-gate.html")
				return
			}
			assert.Regexp(t, `(?m)^--- PASS: Test`, string(out), "the example's tests ran")
		})
	}
}

// copyTree copies the directory src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}
