// Package codetest checks, in a package's tests, that the list of a code type
// (e.g. calibrate.NoteCodes) names every constant of that type the package
// declares, so that the words function's table test, which walks the list,
// fails on a new code without words. It reads the package's source with
// go/parser: tests only.
package codetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Complete fails t unless the package in dir (its non-test files) declares a
// variable list whose composite literal names exactly the constants declared
// with the explicit type typ, each once.
func Complete(t testing.TB, dir, typ, list string) {
	t.Helper()
	consts, listed, found := scan(t, dir, typ, list)
	if !found {
		t.Fatalf("%s: no variable %s", dir, list)
	}
	if len(consts) == 0 {
		t.Fatalf("%s: no constant of type %s", dir, typ)
	}
	slices.Sort(consts)
	seen := map[string]bool{}
	for _, n := range listed {
		if seen[n] {
			t.Errorf("%s: %s lists %s twice", dir, list, n)
		}
		seen[n] = true
	}
	for _, c := range consts {
		if !seen[c] {
			t.Errorf("%s: the %s constant %s is not in %s", dir, typ, c, list)
		}
	}
	for _, n := range listed {
		if !slices.Contains(consts, n) {
			t.Errorf("%s: %s lists %s, which is not a %s constant", dir, list, n, typ)
		}
	}
}

func scan(t testing.TB, dir, typ, list string) (consts, listed []string, found bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				v, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				if id, ok := v.Type.(*ast.Ident); g.Tok == token.CONST && ok && id.Name == typ {
					for _, n := range v.Names {
						consts = append(consts, n.Name)
					}
				}
				if g.Tok != token.VAR {
					continue
				}
				for i, n := range v.Names {
					if n.Name != list || i >= len(v.Values) {
						continue
					}
					lit, ok := v.Values[i].(*ast.CompositeLit)
					if !ok {
						t.Fatalf("%s: %s is not a composite literal", dir, list)
					}
					found = true
					for _, el := range lit.Elts {
						id, ok := el.(*ast.Ident)
						if !ok {
							t.Fatalf("%s: %s lists something other than a constant's name", dir, list)
						}
						listed = append(listed, id.Name)
					}
				}
			}
		}
	}
	return consts, listed, found
}
