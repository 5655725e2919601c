package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The claims of ARCHITECTURE.md that a test can check, checked: each check
// collects what contradicts its claim, and the claim holds when it finds
// nothing.

// holds fails, naming the claim, on every finding.
func holds(t *testing.T, claim string, findings []string) {
	t.Helper()
	slices.Sort(findings)
	assert.Empty(t, slices.Compact(findings), "ARCHITECTURE.md claims %q", claim)
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), name))
	require.NoError(t, err)
	return string(b)
}

// section is the text of the "## " section whose heading starts with title.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	i := strings.Index(doc, "\n## "+title)
	require.GreaterOrEqual(t, i, 0, "section %q", title)
	s := doc[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s
}

// TestArchitectureImportRules: the import-rule section states the test's
// table, row for row, its platforms and its mutations.
func TestArchitectureImportRules(t *testing.T) {
	s := section(t, readDoc(t, "ARCHITECTURE.md"), "Import rules")
	var rows [][4]string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| layer |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		require.Len(t, cells, 4, line)
		rows = append(rows, [4]string(cells))
	}
	require.Len(t, rows, len(layers), "one row per layer")
	for i, l := range layers {
		var pkgs []string
		for _, p := range l.pkgs {
			pkgs = append(pkgs, "`"+p+"`")
		}
		may := "nothing"
		if len(l.may) > 0 {
			may = strings.Join(l.may, ", ")
		}
		assert.Equal(t, [4]string{l.name, l.what, strings.Join(pkgs, ", "), may}, rows[i], "row %d", i+1)
	}
	for _, p := range platforms {
		assert.Contains(t, s, p)
	}
	for _, m := range mutations {
		assert.Contains(t, s, "`"+m.dir+"` → `"+m.imp+"`", "the mutation %s -> %s", m.dir, m.imp)
	}
	for _, m := range moved {
		assert.Contains(t, s, "`"+m.dir+"` → `"+m.imp+"`", "the moved helper's import %s -> %s", m.dir, m.imp)
	}
	assert.Contains(t, s, "`allowlist`")
	assert.Contains(t, s, "`!linux`")
}

// TestArchitectureNoLineCounts: sizes go stale with every change; the
// document states none.
func TestArchitectureNoLineCounts(t *testing.T) {
	doc := readDoc(t, "ARCHITECTURE.md")
	assert.Empty(t, regexp.MustCompile(`\d[\d,.]*\s*(k\s*)?lines?\b`).FindAllString(doc, -1))
}

// TestArchitectureLayout: every directory the layout names at the start of a
// line exists, and every package directly under internal/ is named.
func TestArchitectureLayout(t *testing.T) {
	root := moduleRoot(t)
	s := section(t, readDoc(t, "ARCHITECTURE.md"), "Layout")
	i := strings.Index(s, "```\n")
	require.GreaterOrEqual(t, i, 0)
	block := s[i+4:]
	block = block[:strings.Index(block, "```")]
	entry := regexp.MustCompile(`^( *)([a-z][a-z0-9_]*(?:/[a-z0-9_]+)*/)(?: |$)`)
	type level struct {
		indent int
		path   string
	}
	var stack []level
	named := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		m := entry.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		p := strings.TrimSuffix(m[2], "/")
		if len(stack) > 0 {
			p = stack[len(stack)-1].path + "/" + p
		}
		stack = append(stack, level{indent, p})
		named[p] = true
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		if assert.NoError(t, err, "the layout names %s", p) {
			assert.True(t, fi.IsDir(), p)
		}
	}
	ents, err := os.ReadDir(filepath.Join(root, "internal"))
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() {
			assert.True(t, named["internal/"+e.Name()], "the layout does not name internal/%s", e.Name())
		}
	}
}

// declared is what the module's non-test Go files declare, by package name:
// top-level names, and Type.Member for methods and struct fields.
func declared(t *testing.T) (map[string]map[string]bool, map[string]bool) {
	t.Helper()
	root := moduleRoot(t)
	dirs, err := tree{root: root}.dirs()
	require.NoError(t, err)
	names := map[string]map[string]bool{}
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			if strings.HasSuffix(f, "_test.go") {
				for _, d := range af.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
						tests[fd.Name.Name] = true
					}
				}
				continue
			}
			pkg := af.Name.Name
			if names[pkg] == nil {
				names[pkg] = map[string]bool{}
			}
			add := func(s string) { names[pkg][s] = true }
			for _, d := range af.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						add(d.Name.Name)
						continue
					}
					rt := d.Recv.List[0].Type
					if st, ok := rt.(*ast.StarExpr); ok {
						rt = st.X
					}
					if ix, ok := rt.(*ast.IndexExpr); ok {
						rt = ix.X
					}
					if id, ok := rt.(*ast.Ident); ok {
						add(id.Name + "." + d.Name.Name)
					}
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						switch sp := sp.(type) {
						case *ast.TypeSpec:
							add(sp.Name.Name)
							if st, ok := sp.Type.(*ast.StructType); ok {
								for _, f := range st.Fields.List {
									for _, n := range f.Names {
										add(sp.Name.Name + "." + n.Name)
									}
									if len(f.Names) == 0 { // embedded
										ft := f.Type
										if se, ok := ft.(*ast.StarExpr); ok {
											ft = se.X
										}
										switch ft := ft.(type) {
										case *ast.Ident:
											add(sp.Name.Name + "." + ft.Name)
										case *ast.SelectorExpr:
											add(sp.Name.Name + "." + ft.Sel.Name)
										}
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range sp.Names {
								add(n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names, tests
}

// TestDocsNameWhatExists: every pkg.Name (and pkg.Type.Member) that
// ARCHITECTURE.md and CONTRIBUTING.md name, pkg a package of the module, is
// declared there; every test, fuzz target, benchmark and example they name
// exists; every path of the repository they name in backquotes exists.
func TestDocsNameWhatExists(t *testing.T) {
	root := moduleRoot(t)
	names, tests := declared(t)
	qualified := regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?([*]?)`)
	testName := regexp.MustCompile("`((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)`")
	repoPath := regexp.MustCompile("`((?:internal|cmd|gate|report|testdata|docs|scripts|api|examples|tools|\\.github)/[^`\\s]*|[A-Za-z_.-]+\\.(?:md|go|yml))`")
	pkgName := regexp.MustCompile(`^(.*/[a-z0-9_]+)\.([A-Z][A-Za-z0-9_]*)$`)
	for _, doc := range []string{"ARCHITECTURE.md", "CONTRIBUTING.md"} {
		text := readDoc(t, doc)
		for _, m := range qualified.FindAllStringSubmatch(text, -1) {
			decl, ok := names[m[1]]
			if !ok || m[1] == "main" || m[4] == "*" {
				continue // not a package of the module (json.Valid, e.g.), or a pattern (outcome.Anchor*)
			}
			name := m[2]
			if m[3] != "" && decl[m[2]+"."+m[3]] {
				name = m[2] + "." + m[3]
			}
			assert.True(t, decl[name], "%s names %s.%s, which package %s does not declare", doc, m[1], name, m[1])
		}
		for _, m := range testName.FindAllStringSubmatch(text, -1) {
			if !strings.HasSuffix(m[1], "Xxx") {
				assert.True(t, tests[m[1]], "%s names %s, which no test file declares", doc, m[1])
			}
		}
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			p := strings.TrimSuffix(strings.TrimSuffix(m[1], "/..."), "/")
			if strings.ContainsAny(p, "<*{") || strings.Contains(p, "NAME") {
				continue // a pattern, not a path
			}
			if !strings.Contains(p, "/") {
				if strings.HasSuffix(p, ".md") {
					_, err := os.Stat(filepath.Join(root, p))
					_, errDocs := os.Stat(filepath.Join(root, "docs", p))
					assert.True(t, err == nil || errDocs == nil, "%s names %s", doc, p)
				}
				continue // a Go file named without its directory (check.go)
			}
			if m := pkgName.FindStringSubmatch(p); m != nil {
				p = m[1] // a package's name (internal/llm/llmtest.ServeMain): the qualified names above check the name
			}
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			assert.NoError(t, err, "%s names %s", doc, p)
		}
	}
}

// goFile is a parsed non-test Go file: its path relative to the module root.
type goFile struct {
	path string
	*ast.File
}

// goFiles parses the non-test Go files of the module's packages pkgs (every
// file whatever its build constraint), by package.
func goFiles(t *testing.T, pkgs []string) map[string][]goFile {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	out := map[string][]goFile{}
	for _, pkg := range pkgs {
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pkg), "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			rel, err := filepath.Rel(root, f)
			require.NoError(t, err)
			out[pkg] = append(out[pkg], goFile{filepath.ToSlash(rel), af})
		}
	}
	return out
}

// importNames maps a file's local names of its imports to their paths.
func importNames(f goFile) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = p
	}
	return out
}

// uses lists the pkg.Name references of f (called or not) that refs holds,
// refs keyed "importpath.Name", with the enclosing function's name.
func uses(f goFile, refs map[string]bool) (found []string, funcs []string) {
	imps := importNames(f)
	for _, d := range f.Decls {
		fn := ""
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		ast.Inspect(d, func(n ast.Node) bool {
			se, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := se.X.(*ast.Ident); ok {
				if p, ok := imps[id.Name]; ok && refs[p+"."+se.Sel.Name] {
					found = append(found, p+"."+se.Sel.Name)
					funcs = append(funcs, fn)
				}
			}
			return true
		})
	}
	return found, funcs
}

// reach is pkg and every package of the module it imports, directly or not,
// with every file read (allFiles).
func reach(t *testing.T, pkg string) []string {
	t.Helper()
	cfgs := moduleConfigs(t)
	g := cfgs[len(cfgs)-1].g
	require.Equal(t, allFiles, cfgs[len(cfgs)-1].name)
	seen := map[string]bool{pkg: true}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g[p] {
			if !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// TestCheckReadsNoEnvironment: ARCHITECTURE.md says check's pipeline reads no
// environment; nothing it imports, directly or not, reads a variable, runs a
// process or takes a getenv function.
func TestCheckReadsNoEnvironment(t *testing.T) {
	refs := map[string]bool{"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.ExpandEnv": true,
		"syscall.Getenv": true, "os/exec.Command": true, "os/exec.CommandContext": true}
	var findings []string
	for pkg, files := range goFiles(t, reach(t, "internal/check")) {
		for _, f := range files {
			found, _ := uses(f, refs)
			getenv := false
			ast.Inspect(f.File, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && strings.EqualFold(id.Name, "getenv") {
					getenv = true
				}
				return true
			})
			if len(found) > 0 || getenv {
				findings = append(findings, pkg)
				t.Logf("%s: %v, a getenv: %v", f.path, found, getenv)
			}
		}
	}
	holds(t, "check reads no environment", findings)
}

// floatField matches a type that encodes as a JSON number of raw float64.
var floatField = regexp.MustCompile(`^(\*|\[\]|\[\d+\]|map\[[a-z0-9]+\])?float(32|64)$`)

// protocol are the JSON-tagged float fields of what a server is sent or
// answers (its wire format, not a document of ours), by file and field.
var protocol = map[string]string{
	"internal/retrieve/rerank/rerank.go: Score":    "TEI's /rerank answer",
	"internal/retrieve/embed/openai.go: Embedding": "the OpenAI embeddings answer",
	"internal/llm/llm.go: Temperature":             "the chat-completions request",
	"internal/llm/anthropic.go: Temperature":       "the Anthropic Messages request of a message batch",
	"internal/llm/gemini.go: Temperature":          "the Gemini generationConfig of a batch request",
}

// TestJSONNumbersAreFormatFloat: every number of a JSON document the tool
// writes is a format.Float: no JSON-tagged struct field of a production
// package has a float type, but in the protocol types of a server.
func TestJSONNumbersAreFormatFloat(t *testing.T) {
	var pkgs []string
	for pkg := range moduleConfigs(t)[len(platforms)].g {
		if ls := layersOf(pkg); len(ls) == 1 && ls[0] != "testsupport" && ls[0] != "devcmd" {
			pkgs = append(pkgs, pkg)
		}
	}
	var findings []string
	seen := map[string]bool{}
	for pkg, files := range goFiles(t, pkgs) {
		for _, f := range files {
			ast.Inspect(f.File, func(n ast.Node) bool {
				st, ok := n.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					if fld.Tag == nil || len(fld.Names) == 0 {
						continue
					}
					tag, _ := strconv.Unquote(fld.Tag.Value)
					j, ok := reflect.StructTag(tag).Lookup("json")
					if !ok || j == "-" {
						continue
					}
					typ := types.ExprString(fld.Type)
					if !floatField.MatchString(typ) {
						continue
					}
					key := f.path + ": " + fld.Names[0].Name
					if _, ok := protocol[key]; ok {
						seen[key] = true
						continue
					}
					findings = append(findings, pkg)
					t.Logf("%s %s", key, typ)
				}
				return true
			})
		}
	}
	for key := range protocol {
		assert.True(t, seen[key], "protocol entry %q matches no field: remove it", key)
	}
	holds(t, "every JSON number is a format.Float", findings)
}

// TestPeopleReadNumbersFromFormat: every number a person reads goes through
// internal/format. No renderer, library or CLI package prints a float itself
// (strconv.FormatFloat or AppendFloat, a float verb of fmt), but SVG
// coordinates, which no one reads; the dashboard's script prints no number
// (its data carries them printed).
func TestPeopleReadNumbersFromFormat(t *testing.T) {
	var pkgs []string
	for pkg := range moduleConfigs(t)[len(platforms)].g {
		if ls := layersOf(pkg); len(ls) == 1 && slices.Contains([]string{"renderer", "library", "cli"}, ls[0]) {
			pkgs = append(pkgs, pkg)
		}
	}
	require.Contains(t, pkgs, "internal/report/html")
	layout := map[string]string{"internal/report/html.px": "SVG coordinates"}
	refs := map[string]bool{"strconv.FormatFloat": true, "strconv.AppendFloat": true}
	printf := map[string]bool{"fmt.Sprintf": true, "fmt.Printf": true, "fmt.Fprintf": true, "fmt.Errorf": true, "fmt.Appendf": true}
	verb := regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(\.(\d+|\*)?)?[eEfFgG]`)
	used := map[string]bool{}
	for pkg, files := range goFiles(t, pkgs) {
		for _, f := range files {
			found, funcs := uses(f, refs)
			for i, ref := range found {
				if _, ok := layout[pkg+"."+funcs[i]]; ok {
					used[pkg+"."+funcs[i]] = true
					continue
				}
				assert.Fail(t, "a float printed outside internal/format", "%s, func %s: %s", pkg, funcs[i], ref)
			}
			imps := importNames(f)
			ast.Inspect(f.File, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				se, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				id, ok := se.X.(*ast.Ident)
				if !ok || !printf[imps[id.Name]+"."+se.Sel.Name] {
					return true
				}
				for _, a := range call.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						s = strings.ReplaceAll(s, "%%", "")
						assert.False(t, verb.MatchString(s), "%s: a float verb of fmt in %q", pkg, s)
					}
				}
				return true
			})
		}
	}
	for k := range layout {
		assert.True(t, used[k], "layout entry %s is no longer needed", k)
	}
	src := readDoc(t, "internal/report/html/script.go")
	js := src[strings.Index(src, "const exploreJS = `"):]
	require.Contains(t, js, "JSON.parse")
	for _, m := range regexp.MustCompile(`\.(toFixed|toPrecision|toExponential|toLocaleString)\(|\bIntl\b|\bNumberFormat\b`).FindAllString(js, -1) {
		assert.Fail(t, "the dashboard's script prints a number", m)
	}
}

// TestNewMeasureTouchesNoTest: a new measure of compare is its two production
// files; no test lists the measures by hand (no test file names every key,
// or every label, of metrics.QueryMeasures), so none changes with one.
func TestNewMeasureTouchesNoTest(t *testing.T) {
	root := moduleRoot(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") || (strings.HasSuffix(p, ".txtar") && strings.Contains(p, "testdata/script")) {
			files = append(files, p)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		s := string(b)
		keys, labels := 0, 0
		for _, m := range metrics.QueryMeasures {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(m.Key) + `\b`).MatchString(s) {
				keys++
			}
			if strings.Contains(s, m.Label+"@") {
				labels++
			}
		}
		rel, _ := filepath.Rel(root, f)
		assert.Less(t, keys, len(metrics.QueryMeasures), "%s names every measure's key: a list a new measure would have to join", rel)
		assert.Less(t, labels, len(metrics.QueryMeasures), "%s names every measure's label: a list a new measure would have to join", rel)
	}
}

// TestNewStoreIsOnePackage: a store is a package under
// internal/retrieve/store/ that registers itself in its init, blank-imported
// by internal/retrieve/stores.go, reached by the binary and by the library,
// and named by no front end (which reach it through the registry only).
func TestNewStoreIsOnePackage(t *testing.T) {
	g := moduleConfigs(t)[len(platforms)].g
	var stores []string
	for pkg := range g {
		if matches("internal/retrieve/store/*", pkg) && layersOf(pkg)[0] == "retrieval" {
			stores = append(stores, pkg)
		}
	}
	slices.Sort(stores)
	require.Contains(t, stores, "internal/retrieve/store/memory")
	files := goFiles(t, stores)
	binary, library := reach(t, "."), reach(t, "gate")
	var findings []string
	for _, s := range stores {
		registers := false
		for _, f := range files[s] {
			found, funcs := uses(f, map[string]bool{module + "/internal/retrieve/store.Register": true})
			for i := range found {
				registers = registers || funcs[i] == "init"
			}
		}
		assert.True(t, registers, "%s calls store.Register in its init", s)
		assert.Contains(t, g["internal/retrieve"], s, "internal/retrieve/stores.go imports %s", s)
		assert.Contains(t, binary, s, "the binary reaches %s", s)
		assert.Contains(t, library, s, "the library reaches %s", s)
		for _, front := range []string{"internal/cli", "gate", "report"} {
			if slices.Contains(g[front], s) {
				findings = append(findings, front+" imports "+s)
			}
		}
	}
	holds(t, "a new store is one package plus its registration", findings)
}
