package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// domainRuns are the packages of the commands' domain Runs, which open no
// file and write nothing: the CLI (and the library), their front ends, open
// the inputs (the knowledge base too: retrieve.In.KB and check.In.KB are
// loaded values), make the services and write every output.
var domainRuns = []string{"check", "compare", "judge", "generate", "calibrate", "importer", "evaluate", "retrieve"}

// serviceFiles are the files of a domain package that hold a service the
// front end opens and hands in (or calls before the Run), and so may open a
// file: judge's cache (cache.go: OpenCache) and batch state (batchrun.go:
// StateFile), calibrate's repositories (git.go: GitRepos), check's baseline
// (open.go: OpenBaseline, the baseline file and --write-baseline's temporary
// body).
var serviceFiles = map[string]bool{"judge/cache.go": true, "judge/batchrun.go": true, "calibrate/git.go": true, "check/open.go": true}

// osNames are what a domain file may name of package os: types, error values
// and mode bits, which open nothing (a type assertion to *os.File on a reader
// the front end opened reads it at its offsets).
var osNames = []string{"File", "FileInfo", "FileMode", "DirEntry", "PathError", "ErrNotExist", "ErrExist", "ErrPermission", "ErrClosed"}

// fsOpeners are the standard library's functions that open, create, list,
// stat or remove a file by its name (a reference counts as a call); a scratch
// file (os.CreateTemp, unlinked at once) is not one (selectors).
var fsOpeners = map[string][]string{
	"os": {"Open", "OpenFile", "OpenRoot", "OpenInRoot", "Create", "ReadFile", "WriteFile", "ReadDir", "Stat", "Lstat",
		"Mkdir", "MkdirAll", "MkdirTemp", "Remove", "RemoveAll", "Rename", "Truncate", "Chmod", "Chown", "Chtimes", "Link", "Symlink",
		"Readlink", "DirFS", "CopyFS", "Stdin", "Stdout", "Stderr"},
	"path/filepath": {"Walk", "WalkDir", "Glob", "EvalSymlinks", "Abs"},
	"io/ioutil":     {"ReadFile", "WriteFile", "ReadDir", "TempFile", "TempDir"},
}

// TestDomainRunsOpenNothing: the domain Runs open no file and write nothing.
// Their packages import neither internal/atomicfile (the writer of outputs)
// nor os/exec; name of package os only types and error values, but in a
// service file (serviceFiles); and call no function of the module that opens
// a file by its name (moduleOpeners: kbfile.Load, input.Open, …), but in a
// service file. Parsed from every GOOS's files (no build constraint is
// applied).
func TestDomainRunsOpenNothing(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	openers := moduleOpeners(t, root)
	for _, want := range []string{"internal/input/kbfile.Load", "internal/input.Open", "internal/input.OpenSharded", "internal/gitread.Discover"} {
		require.True(t, openers[want], "the module's openers include %s: %v", want, slices.Sorted(mapKeys(openers)))
	}
	used := map[string]bool{}
	var problems []string
	for _, pkg := range domainRuns {
		dir := filepath.Join(root, "internal", pkg)
		files := 0
		for _, name := range goFiles(t, dir) {
			files++
			rel := pkg + "/" + name
			f, fset := parseFile(t, filepath.Join(dir, name))
			imports := importNames(f)
			for _, bad := range []string{modulePath + "/internal/atomicfile", "os/exec"} {
				if _, ok := imports[bad]; ok {
					problems = append(problems, rel+" imports "+bad)
				}
			}
			if serviceFiles[rel] {
				used[rel] = true
				continue
			}
			for _, u := range bodyIdents(f, fset) {
				if !strings.HasPrefix(u.name, ".") && openers["internal/"+pkg+"."+u.name] {
					problems = append(problems, rel+":"+strconv.Itoa(u.line)+": calls "+u.name+", which opens a file")
				}
			}
			for _, r := range selectors(f, fset, imports) {
				switch {
				case r.pkg == "os" && !slices.Contains(osNames, r.name):
					problems = append(problems, rel+":"+strconv.Itoa(r.line)+": uses os."+r.name+": a domain Run opens no file (the front end opens it and hands in a reader, a value or a service)")
				case slices.Contains(fsOpeners[r.pkg], r.name):
					problems = append(problems, rel+":"+strconv.Itoa(r.line)+": uses "+r.pkg+"."+r.name)
				case openers[strings.TrimPrefix(r.pkg, modulePath+"/")+"."+r.name]:
					problems = append(problems, rel+":"+strconv.Itoa(r.line)+": calls "+path.Base(r.pkg)+"."+r.name+", which opens a file: the front end calls it and hands in what it read")
				}
			}
		}
		require.Positive(t, files, pkg)
	}
	assert.Empty(t, problems, "a domain Run opens no file")
	for rel := range serviceFiles {
		assert.True(t, used[rel], "serviceFiles lists %s, which does not exist: remove the entry", rel)
	}
}

// TestModuleOpenersFound: the openers are found through a package's own
// functions and methods and through another package's, so the test above
// cannot pass by finding none.
func TestModuleOpenersFound(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o600))
	}
	write("internal/a/a.go", `package a

import "os"

type T struct{}

func (T) Read(p string) error { _, err := os.ReadFile(p); return err }
func load(p string) error     { _, err := os.Stat(p); return err }
func Load(p string) error     { return load(p) }
func Pure(b []byte) int        { return len(b) }
func Spill() (*os.File, error) {
	f, err := os.CreateTemp("", "spill-*")
	if err == nil {
		os.Remove(f.Name())
	}
	return f, err
}
`)
	write("internal/b/b.go", `package b

import x "`+modulePath+`/internal/a"

func Read(p string) error { return x.Load(p) }
func Parse(b []byte) int   { return x.Pure(b) }
func Scratch() error       { _, err := x.Spill(); return err }
`)
	assert.Equal(t, []string{"internal/a..Read", "internal/a.Load", "internal/a.load", "internal/b.Read"}, slices.Sorted(mapKeys(moduleOpeners(t, root))))
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// goFiles are the non-test Go files of dir, sorted.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			out = append(out, name)
		}
	}
	return out
}

func parseFile(t *testing.T, file string) (*ast.File, *token.FileSet) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	return f, fset
}

// importNames maps each import path of f to the name the file uses for it.
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if s.Name != nil {
			name = s.Name.Name
		}
		out[p] = name
	}
	return out
}

// selector is a reference pkg.name to an imported package's member (pkg its
// import path).
type selector struct {
	pkg, name string
	line      int
}

// selectors are the references in n to the members of imports.
func selectors(n ast.Node, fset *token.FileSet, imports map[string]string) []selector {
	byName := map[string]string{}
	for p, n := range imports {
		byName[n] = p
	}
	// A scratch file, created and unlinked at once (os.CreateTemp, then
	// os.Remove(f.Name())), is memory, not a file of the user's: the baseline's
	// and the duplicate-id log's spill.
	scratch := map[ast.Node]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) == 1 {
			if a, ok := c.Args[0].(*ast.CallExpr); ok {
				if s, ok := a.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Name" && len(a.Args) == 0 {
					scratch[c.Fun] = true
				}
			}
		}
		return true
	})
	var out []selector
	ast.Inspect(n, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok && !scratch[s] {
			if x, ok := s.X.(*ast.Ident); ok {
				if p, ok := byName[x.Name]; ok {
					out = append(out, selector{pkg: p, name: s.Sel.Name, line: fset.Position(s.Pos()).Line})
				}
			}
		}
		return true
	})
	return out
}

// bodyIdents are the identifiers the function bodies in n use, with their
// lines: not the names a function or a field is declared by, not the field
// names of a composite literal, not the names a selector selects (x.m and
// pkg.F are no own function).
func bodyIdents(n ast.Node, fset *token.FileSet) []selector {
	var out []selector
	if f, ok := n.(*ast.File); ok {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body != nil {
					out = append(out, bodyIdents(d.Body, fset)...)
				}
			case *ast.GenDecl: // a package variable's initializer runs too
				for _, s := range d.Specs {
					if v, ok := s.(*ast.ValueSpec); ok {
						for _, e := range v.Values {
							out = append(out, bodyIdents(e, fset)...)
						}
					}
				}
			}
		}
		return out
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if _, ok := n.X.(*ast.Ident); !ok {
				out = append(out, bodyIdents(n.X, fset)...)
			}
			return false
		case *ast.KeyValueExpr:
			if _, ok := n.Key.(*ast.Ident); !ok {
				out = append(out, bodyIdents(n.Key, fset)...)
			}
			out = append(out, bodyIdents(n.Value, fset)...)
			return false
		case *ast.Ident:
			out = append(out, selector{name: n.Name, line: fset.Position(n.Pos()).Line})
		}
		return true
	})
	return out
}

// moduleOpeners are the functions of the module's packages under internal/
// that open, create, list, stat or remove a file by name, as
// "internal/input/kbfile.Load": directly (fsOpeners), or through a function
// of their own package or another package's opener. A method is one when it
// does so itself ("internal/judge..Load"); a call x.m() is not followed (which
// m it is needs the types), so a function reaching a file only through a
// method is not found: the rule is on what a domain file names. Test files and
// test support (*test) are not read.
func moduleOpeners(t *testing.T, root string) map[string]bool {
	t.Helper()
	type fn struct {
		pkg, key string     // key: "F" for a function, ".m" for a method
		refs     []selector // its references to imported packages' members
		uses     []selector // the identifiers it uses ("F"), and the names it selects (".m")
	}
	var fns []*fn
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || isTestSupport(n) {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, name := range goFiles(t, p) {
			f, fset := parseFile(t, filepath.Join(p, name))
			imports := importNames(f)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				x := &fn{pkg: pkg, key: fd.Name.Name, refs: selectors(fd.Body, fset, imports), uses: bodyIdents(fd.Body, fset)}
				if fd.Recv != nil {
					x.key = "." + fd.Name.Name
				}
				fns = append(fns, x)
			}
		}
		return nil
	})
	require.NoError(t, err)
	opens := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, x := range fns {
			id := x.pkg + "." + x.key
			if opens[id] {
				continue
			}
			hit := false
			for _, r := range x.refs {
				if slices.Contains(fsOpeners[r.pkg], r.name) || opens[strings.TrimPrefix(r.pkg, modulePath+"/")+"."+r.name] {
					hit = true
					break
				}
			}
			for _, u := range x.uses {
				if hit {
					break
				}
				hit = opens[x.pkg+"."+u.name]
			}
			if hit {
				opens[id] = true
				changed = true
			}
		}
	}
	return opens
}
