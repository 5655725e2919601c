package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/retrieval-gate/retrieval-gate"

// platforms are the GOOS/GOARCH pairs whose import graphs are read: every
// port `go tool dist list` marks first class (TestPlatformsCoverFirstClassPorts
// checks that), which include the release image's linux/amd64 and linux/arm64,
// and freebsd/amd64, which the code's build constraints name (the mmap path of
// internal/retrieve). Each is read as `go build` would read it, without cgo
// (the release builds with CGO_ENABLED=0); whether the module compiles there
// is not this test's question.
var platforms = []string{
	"darwin/amd64", "darwin/arm64", "freebsd/amd64",
	"linux/386", "linux/amd64", "linux/arm", "linux/arm64",
	"windows/386", "windows/amd64",
}

// allFiles names the reading of every non-test file whatever its build
// constraint, but a file only the tag ignore could select (a generator run
// by hand): an import that no platform above builds (a race-only file, a
// port not listed) is still an import.
const allFiles = "all files"

// graph maps each package of the module (its path relative to the module
// root, "." for the root) to the packages of the module it imports, sorted.
type graph map[string][]string

// config is the import graph of the module as one build configuration reads it.
type config struct {
	name string // a platform, or allFiles
	g    graph
}

// tree is the module's source as the loader reads it: the files on disk, with
// overlay (absolute path -> content) added or replacing files, so a test can
// read the module with a file it does not have.
type tree struct {
	root    string
	overlay map[string]string
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root")
	require.Contains(t, string(b), "module "+module+"\n")
	return root
}

// dirs lists the directories of the module that may hold a package: not
// testdata, not hidden or _-prefixed, not another module (tools, examples).
func (tr tree) dirs() ([]string, error) {
	var out []string
	err := filepath.WalkDir(tr.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != tr.root {
			name := d.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		out = append(out, path)
		return nil
	})
	return out, err
}

// rel is dir as a package path relative to the module root ("." for the root).
func (tr tree) rel(dir string) string {
	r, err := filepath.Rel(tr.root, dir)
	if err != nil {
		panic(err)
	}
	return filepath.ToSlash(r)
}

type fileInfo struct {
	name string
	size int64
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.size }
func (f fileInfo) Mode() fs.FileMode  { return 0o644 }
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return false }
func (f fileInfo) Sys() any           { return nil }

// readDir lists dir as go/build reads it: the files on disk and the overlay's.
func (tr tree) readDir(dir string) ([]fs.FileInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && tr.overlayDir(dir)) {
		return nil, err
	}
	var out []fs.FileInfo
	for _, e := range ents {
		if _, over := tr.overlay[filepath.Join(dir, e.Name())]; over {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	for path, src := range tr.overlay {
		if filepath.Dir(path) == dir {
			out = append(out, fileInfo{name: filepath.Base(path), size: int64(len(src))})
		}
	}
	slices.SortFunc(out, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// overlayDir reports whether the overlay has a file in dir.
func (tr tree) overlayDir(dir string) bool {
	for path := range tr.overlay {
		if filepath.Dir(path) == dir {
			return true
		}
	}
	return false
}

func (tr tree) isDir(dir string) bool {
	if tr.overlayDir(dir) {
		return true
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

func (tr tree) openFile(path string) (io.ReadCloser, error) {
	if src, ok := tr.overlay[path]; ok {
		return io.NopCloser(strings.NewReader(src)), nil
	}
	return os.Open(path)
}

// context is go/build's reading of one platform over tr.
func (tr tree) context(platform string) *build.Context {
	goos, goarch, _ := strings.Cut(platform, "/")
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled = goos, goarch, false
	c.BuildTags, c.ToolTags = nil, slices.Clone(build.Default.ToolTags)
	c.ReadDir = tr.readDir
	c.OpenFile = tr.openFile
	c.IsDir = tr.isDir
	return &c
}

// ours keeps the module's own imports, relative to the module root.
func ours(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if imp == module {
			out = append(out, ".")
		} else if p, ok := strings.CutPrefix(imp, module+"/"); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// platformImports are the imports of dir's non-test files that go/build
// selects for platform; ok is false when it selects none (no package there).
func (tr tree) platformImports(dir, platform string) (imports []string, ok bool, err error) {
	p, err := tr.context(platform).ImportDir(dir, 0)
	if err != nil {
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return ours(p.Imports), true, nil
}

// anyFileImports are the imports of every non-test Go file of dir that some
// build configuration selects (every constraint but one only the tag ignore
// satisfies); ok is false when dir has no Go file at all.
func (tr tree) anyFileImports(dir string) (imports []string, ok bool, err error) {
	infos, err := tr.readDir(dir)
	if err != nil {
		return nil, false, err
	}
	fset := token.NewFileSet()
	var all []string
	for _, fi := range infos {
		name := fi.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		ok = true
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		rc, err := tr.openFile(filepath.Join(dir, name))
		if err != nil {
			return nil, false, err
		}
		src, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, false, err
		}
		sel, err := selectable(src)
		if err != nil {
			return nil, false, errors.New(filepath.Join(dir, name) + ": " + err.Error())
		}
		if !sel {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			return nil, false, err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return nil, false, err
			}
			all = append(all, p)
		}
	}
	return ours(all), ok, nil
}

// selectable reports whether some build configuration compiles a file with
// this source: its //go:build expression is satisfiable with the tag ignore
// false (every other tag is free).
func selectable(src []byte) (bool, error) {
	var expr constraint.Expr
	for line := range bytes.Lines(src) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "package ") {
			break
		}
		if constraint.IsGoBuild(l) {
			e, err := constraint.Parse(l)
			if err != nil {
				return false, err
			}
			expr = e
		}
	}
	if expr == nil {
		return true, nil
	}
	var tags []string
	expr.Eval(func(tag string) bool {
		if tag != "ignore" && !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
		return false
	})
	if len(tags) > 16 {
		return true, nil // too many to enumerate: read it
	}
	for set := 0; set < 1<<len(tags); set++ {
		if expr.Eval(func(tag string) bool {
			i := slices.Index(tags, tag)
			return i >= 0 && set&(1<<i) != 0
		}) {
			return true, nil
		}
	}
	return false, nil
}

// dirImports reads one directory in every configuration: configuration ->
// its imports (absent when that configuration has no package there).
func (tr tree) dirImports(dir string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, p := range platforms {
		imps, ok, err := tr.platformImports(dir, p)
		if err != nil {
			return nil, err
		}
		if ok {
			out[p] = imps
		}
	}
	imps, ok, err := tr.anyFileImports(dir)
	if err != nil {
		return nil, err
	}
	if ok {
		out[allFiles] = imps
	}
	return out, nil
}

// load reads the module's import graph in every configuration.
func (tr tree) load() ([]config, error) {
	cfgs := make([]config, 0, len(platforms)+1)
	for _, p := range append(slices.Clone(platforms), allFiles) {
		cfgs = append(cfgs, config{name: p, g: graph{}})
	}
	dirs, err := tr.dirs()
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if err := tr.reload(cfgs, dir); err != nil {
			return nil, err
		}
	}
	return cfgs, nil
}

// reload reads dir again into cfgs (after tr's overlay changed it).
func (tr tree) reload(cfgs []config, dir string) error {
	by, err := tr.dirImports(dir)
	if err != nil {
		return err
	}
	pkg := tr.rel(dir)
	for i := range cfgs {
		if imps, ok := by[cfgs[i].name]; ok {
			cfgs[i].g[pkg] = imps
		} else {
			delete(cfgs[i].g, pkg)
		}
	}
	return nil
}

// clone copies cfgs, so that a test can change one copy.
func clone(cfgs []config) []config {
	out := make([]config, len(cfgs))
	for i, c := range cfgs {
		g := make(graph, len(c.g))
		for k, v := range c.g {
			g[k] = slices.Clone(v)
		}
		out[i] = config{name: c.name, g: g}
	}
	return out
}

// TestPlatformsCoverFirstClassPorts: the platforms include every first-class
// port of the Go that runs the test (`go tool dist list -json`), so a port Go
// promotes is read too.
func TestPlatformsCoverFirstClassPorts(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(build.Default.GOROOT, "bin", "go")
	}
	out, err := exec.Command(goCmd, "tool", "dist", "list", "-json").Output()
	require.NoError(t, err)
	var ports []struct {
		GOOS, GOARCH string
		FirstClass   bool
	}
	require.NoError(t, json.Unmarshal(out, &ports))
	n := 0
	for _, p := range ports {
		if p.FirstClass {
			n++
			assert.Contains(t, platforms, p.GOOS+"/"+p.GOARCH)
		}
	}
	assert.GreaterOrEqual(t, n, 8, "the first-class ports of Go 1.26")
	for _, release := range []string{"linux/amd64", "linux/arm64"} {
		assert.Contains(t, platforms, release, "the release image's platforms (.github/workflows/release.yml)")
	}
}
