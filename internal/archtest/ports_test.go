package archtest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// portRoots are what the project builds for every platform: the binary and
// the public library (`go install`, the image, a user's module), with every
// package of the module they import.
var portRoots = []string{".", "gate", "report"}

// portChecker type-checks the module's packages as the compiler of one
// platform reads them (its files, its int size, cgo off): the module's own
// packages with their function bodies, the standard library and the other
// modules from source without them (their declarations are what the module
// sees). It is what `GOOS=… GOARCH=… go build` checks before it compiles,
// in a fraction of its time (no code is generated, no dependency's body read).
type portChecker struct {
	root  string
	ctxt  build.Context
	fset  *token.FileSet
	sizes types.Sizes
	pkgs  map[string]*types.Package // by import path
	deps  map[string]string         // the other modules' packages: import path -> directory
	errs  []string
}

// newPortChecker reads platform's files as its go command does: its tool
// tags (the experiments and the architecture's level, which select files of
// the standard library) are the go command's for that platform.
func newPortChecker(root, platform string, deps map[string]string) (*portChecker, error) {
	goos, goarch, _ := strings.Cut(platform, "/")
	cmd := exec.Command(goCommand(), "list", "-f", "{{join context.ToolTags \",\"}}", "unsafe")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list for %s: %w", platform, err)
	}
	c := build.Default
	if c.GOROOT == "" {
		// A test binary built with -trimpath (as .ci/run builds) has no
		// runtime.GOROOT, so go/build finds no standard library: ask the go
		// command where its own is.
		root, err := exec.Command(goCommand(), "env", "GOROOT").Output()
		if err != nil {
			return nil, fmt.Errorf("go env GOROOT: %w", err)
		}
		c.GOROOT = strings.TrimSpace(string(root))
	}
	c.GOOS, c.GOARCH, c.CgoEnabled = goos, goarch, false
	c.BuildTags, c.ToolTags = nil, strings.Split(strings.TrimSpace(string(out)), ",")
	return &portChecker{root: root, ctxt: c, fset: token.NewFileSet(), sizes: types.SizesFor("gc", goarch), pkgs: map[string]*types.Package{}, deps: deps}, nil
}

// goCommand is the go command of the Go that runs the test.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(build.Default.GOROOT, "bin", "go")
}

func (p *portChecker) Import(path string) (*types.Package, error) {
	return p.ImportFrom(path, p.root, 0)
}

// ImportFrom type-checks path as imported from dir (vendored standard
// packages are found from the standard library's own directories).
func (p *portChecker) ImportFrom(path, dir string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	ours := path == module || strings.HasPrefix(path, module+"/")
	var bp *build.Package
	var err error
	if ours {
		bp, err = p.ctxt.ImportDir(filepath.Join(p.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(path, module), "/"))), 0)
		if err == nil {
			bp.ImportPath = path
		}
	} else if d, ok := p.deps[path]; ok { // another module's package
		bp, err = p.ctxt.ImportDir(d, 0)
		if err == nil {
			bp.ImportPath = path
		}
	} else {
		bp, err = p.ctxt.Import(path, dir, 0) // the standard library's
	}
	if err != nil {
		return nil, err
	}
	if pkg, ok := p.pkgs[bp.ImportPath]; ok {
		if !pkg.Complete() {
			return nil, fmt.Errorf("import cycle through %s", bp.ImportPath)
		}
		return pkg, nil
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(p.fset, filepath.Join(bp.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	conf := types.Config{
		Importer:         p,
		Sizes:            p.sizes,
		IgnoreFuncBodies: !ours,
		FakeImportC:      true,
		Error: func(err error) {
			if ours {
				p.errs = append(p.errs, err.Error())
			}
		},
	}
	pkg := types.NewPackage(bp.ImportPath, bp.Name)
	p.pkgs[bp.ImportPath] = pkg
	chk := types.NewChecker(&conf, p.fset, pkg, nil)
	if err := chk.Files(files); err != nil && !ours {
		return nil, fmt.Errorf("%s for %s/%s: %w", bp.ImportPath, p.ctxt.GOOS, p.ctxt.GOARCH, err)
	}
	pkg.MarkComplete()
	return pkg, nil
}

// compilePorts are the platforms the binary and the library are
// type-checked for: between them, every side of every build constraint of
// the module (unix or not; linux, darwin or freebsd for the mappings, or
// neither; amd64 or not) and a 32-bit int. The other first-class ports
// (platforms) select no file of the module that these do not, and differ from
// one of them only in what the compiler of that port generates, which
// type-checking does not see; the one left out of a side would fail
// TestCompilePortsCoverEveryConstraint.
var compilePorts = []string{"linux/386", "windows/amd64", "darwin/arm64", "freebsd/amd64"}

// TestEveryPortTypeChecks: the binary and the library type-check on each of
// compilePorts as that platform's compiler reads them: a constant that
// overflows a 32-bit int, or a name one system's files lack, fails here,
// naming the platform. About 9 s of CPU a platform (the standard library's
// declarations are read from source for each), two at a time: a heavy test,
// run when $RETRIEVAL_GATE_HEAVY_TESTS is 1, as .ci/run sets it (CONTRIBUTING.md).
func TestEveryPortTypeChecks(t *testing.T) {
	if testing.Short() || os.Getenv("RETRIEVAL_GATE_HEAVY_TESTS") != "1" {
		t.Skip("the type-check of every port: set RETRIEVAL_GATE_HEAVY_TESTS=1 to run it (.ci/run does)")
	}
	root := moduleRoot(t)
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := map[string][]string{}
	sem := make(chan struct{}, 2)
	for _, platform := range compilePorts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs := typeCheckPort(root, platform)
			mu.Lock()
			defer mu.Unlock()
			if len(errs) > 0 {
				failed[platform] = errs
			}
		}()
	}
	wg.Wait()
	for _, platform := range compilePorts {
		assert.Empty(t, failed[platform], "%s: the binary and the library do not compile", platform)
	}
}

// typeCheckPort type-checks portRoots for platform and returns the errors.
func typeCheckPort(root, platform string) []string {
	goos, goarch, _ := strings.Cut(platform, "/")
	// The other modules' packages they import there: where the go command
	// finds them.
	var args []string
	for _, r := range portRoots {
		args = append(args, "./"+r)
	}
	cmd := exec.Command(goCommand(), append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{end}}"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return []string{fmt.Sprintf("go list: %v", err)}
	}
	deps := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if path, dir, ok := strings.Cut(line, " "); ok && dir != "" && !strings.HasPrefix(path, module) {
			deps[path] = dir
		}
	}
	p, err := newPortChecker(root, platform, deps)
	if err != nil {
		return []string{err.Error()}
	}
	var errs []string
	for _, r := range portRoots {
		if _, err := p.Import(strings.TrimSuffix(module+"/"+r, "/.")); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return append(errs, p.errs...)
}

// TestCompilePortsCoverEveryConstraint: for each build constraint of the
// module's files, some platform of compilePorts selects the file and some
// does not (the tag race and the tag ignore aside), and one of them has a
// 32-bit int; so a file only some port compiles is type-checked.
func TestCompilePortsCoverEveryConstraint(t *testing.T) {
	root := moduleRoot(t)
	cfgs := map[string]*build.Context{}
	for _, p := range compilePorts {
		goos, goarch, _ := strings.Cut(p, "/")
		c := build.Default
		c.GOOS, c.GOARCH, c.CgoEnabled = goos, goarch, false
		cfgs[p] = &c
	}
	bits32 := false
	for _, p := range compilePorts {
		_, goarch, _ := strings.Cut(p, "/")
		bits32 = bits32 || types.SizesFor("gc", goarch).Sizeof(types.Typ[types.Int]) == 4
	}
	assert.True(t, bits32, "a port with a 32-bit int")
	dirs, err := tree{root: root}.dirs()
	require.NoError(t, err)
	n := 0
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			if strings.Contains(string(src), "//go:build race") || strings.Contains(string(src), "//go:build !race") || strings.Contains(string(src), "//go:build ignore") {
				continue
			}
			in, out := 0, 0
			for _, c := range cfgs {
				if ok, err := c.MatchFile(dir, name); err == nil && ok {
					in++
				} else {
					out++
				}
			}
			if in == len(cfgs) {
				continue // every port: nothing platform-specific
			}
			n++
			assert.Positive(t, in, "%s: no port of compilePorts compiles it", filepath.Join(dir, name))
		}
	}
	assert.Positive(t, n, "the module has platform-specific files")
}
