package gate_test

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/report"
)

// exportedMethods are the exported methods of each exported type declared in
// the non-test files of the package in dir, by "pkg.Type" (pkg the
// directory's name).
func exportedMethods(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	out := map[string][]string{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
				key := f.Name.Name + "." + id.Name
				out[key] = append(out[key], fd.Name.Name)
			}
		}
	}
	for _, m := range out {
		sort.Strings(m)
	}
	return out
}

const (
	zeroReport   = "gate: a zero Report holds no result: Check and Live return the Report of a run"
	zeroDocument = "report: a zero Document holds no report: report.Read returns the Document of one"
)

// TestZeroValues: every exported method of every exported type of gate and
// report, called on the type's zero value (and on a nil pointer of a type
// with pointer receivers), returns what a zero value means, or an error,
// writing nothing; none panics. A zero report.Document and gate.Report
// panicked in every Write method (a nil func, a nil result). The table must
// list every exported type with exported methods, and each of its methods,
// as the packages declare them, so a new one is tested here too.
func TestZeroValues(t *testing.T) {
	writeErr := func(msg string) []any { return []any{msg} }
	tests := []struct {
		typ, name string
		zero      any
		// want are each method's results, an error as its text.
		want map[string][]any
	}{
		{"gate.Report", "zero", &gate.Report{}, map[string][]any{
			"Passed": {false}, "Verdict": {gate.Verdict("")}, "Gates": {[]gate.Gate(nil)}, "Groups": {[]gate.Group(nil)},
			"Warnings":  {[]string(nil)},
			"WriteJSON": writeErr(zeroReport), "WriteMarkdown": writeErr(zeroReport), "WriteText": writeErr(zeroReport),
			"WriteTextVerbose": writeErr(zeroReport), "WriteHTML": writeErr(zeroReport),
		}},
		{"gate.Report", "nil", (*gate.Report)(nil), nil},
		{"gate.CleanupError", "zero", &gate.CleanupError{}, map[string][]any{
			"Error": {"gate: cleanup: a temporary collection was not deleted"}, "Unwrap": {nil},
		}},
		{"gate.CleanupError", "nil", (*gate.CleanupError)(nil), nil},
		{"gate.KB", "zero", &gate.KB{}, map[string][]any{"Skipped": {[]string(nil)}}},
		{"gate.KB", "nil", (*gate.KB)(nil), nil},
		{"gate.LiveOptions", "zero", gate.LiveOptions{}, map[string][]any{
			"Resolve": {gate.LiveOptions{Strategy: gate.StrategyHybrid, Retrieve: 10, Store: gate.StoreMemory, Embedder: gate.EmbedderHash,
				Check: gate.Options{ReferenceLocale: "en"}}, nil},
		}},
		{"report.Document", "zero", &report.Document{}, map[string][]any{
			"Command":   {""},
			"WriteJSON": writeErr(zeroDocument), "WriteMarkdown": writeErr(zeroDocument), "WriteText": writeErr(zeroDocument),
			"WriteTextVerbose": writeErr(zeroDocument), "WriteHTML": writeErr(zeroDocument),
		}},
		{"report.Document", "nil", (*report.Document)(nil), nil},
		{"report.Document", "zero with a CommentKey", &report.Document{CommentKey: "nightly"}, nil},
	}
	// Rows without want expect what the first row of their type does.
	for i := range tests {
		if tests[i].want == nil {
			for _, o := range tests[:i] {
				if o.typ == tests[i].typ && o.want != nil {
					tests[i].want = o.want
					break
				}
			}
		}
	}

	declared := exportedMethods(t, ".")
	for k, v := range exportedMethods(t, "../report") {
		declared[k] = v
	}
	listed := map[string][]string{}
	for _, tt := range tests {
		var names []string
		for m := range tt.want {
			names = append(names, m)
		}
		sort.Strings(names)
		listed[tt.typ] = names
	}
	require.Equal(t, declared, listed, "the table lists every exported type with exported methods, and each of its methods")

	for _, tt := range tests {
		v := reflect.ValueOf(tt.zero)
		t.Run(tt.typ+" "+tt.name, func(t *testing.T) {
			for _, name := range listed[tt.typ] {
				want := tt.want[name]
				m := v.MethodByName(name)
				require.True(t, m.IsValid(), "%s has no method %s", v.Type(), name)
				var written bytes.Buffer
				args := make([]reflect.Value, m.Type().NumIn())
				for i := range args {
					switch in := m.Type().In(i); in {
					case reflect.TypeFor[context.Context]():
						args[i] = reflect.ValueOf(context.Background())
					case reflect.TypeFor[io.Writer]():
						args[i] = reflect.ValueOf(&written)
					default:
						args[i] = reflect.Zero(in)
					}
				}
				var out []reflect.Value
				if !assert.NotPanics(t, func() { out = m.Call(args) }, "%s.%s", tt.typ, name) {
					continue
				}
				got := make([]any, len(out))
				for i, o := range out {
					got[i] = o.Interface()
					if err, ok := got[i].(error); ok {
						got[i] = err.Error()
					}
				}
				assert.Equal(t, want, got, "%s.%s", tt.typ, name)
				if slices.ContainsFunc(got, func(r any) bool { s, ok := r.(string); return ok && strings.Contains(s, " a zero ") }) {
					assert.Empty(t, written.String(), "%s.%s wrote with its error", tt.typ, name)
				}
			}
		})
	}

	// A Report stays comparable, as it was before Warnings (api/gate.export;
	// a slice field made it not, which scripts/api-check calls incompatible).
	same := func(a, b gate.Report) bool { return a == b }
	assert.True(t, same(gate.Report{}, gate.Report{}))

	// A zero KB given to Check is an error too.
	_, err := gate.Check(context.Background(), strings.NewReader(""), &gate.KB{}, gate.Options{})
	require.EqualError(t, err, "gate: no knowledge base")
}
