package github

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandMethods are the methods of go-githubactions' Action that print a
// workflow command (or write a file command) on the step's output.
var commandMethods = map[string]bool{
	"Errorf": true, "Warningf": true, "Noticef": true, "Debugf": true, "Infof": true, "Fatalf": true,
	"Group": true, "EndGroup": true, "IssueCommand": true, "IssueFileCommand": true, "AddMask": true,
	"SetOutput": true, "SaveState": true, "AddPath": true, "SetEnv": true, "AddStepSummary": true,
	"AddStepSummaryTemplate": true, "WithFieldsMap": true, "WithFieldsSlice": true, "AddMatcher": true, "RemoveMatcher": true,
}

// allowedWriters are the calls of those names the module may make (file,
// function, method), with why: the functions of actions.go, command (every
// ::error::, ::warning:: and ::notice::, through CommandText), the mask (a
// secret as it is: the runner masks those very bytes) and the file commands;
// and a flag set's SetOutput, which is no command (the parse has no types).
var allowedWriters = map[string]string{
	"internal/github/actions.go:command/Errorf":               "the one writer",
	"internal/github/actions.go:command/Warningf":             "the one writer",
	"internal/github/actions.go:command/Noticef":              "the one writer",
	"internal/github/actions.go:command/WithFieldsMap":        "the one writer's properties",
	"internal/github/actions.go:Mask/AddMask":                 "a secret, masked as it is",
	"internal/github/actions.go:SetOutputs/SetOutput":         "a file command",
	"internal/github/actions.go:AppendSummary/AddStepSummary": "a file command",
	"internal/cli/cli.go:newFlagSet/SetOutput":                "flag.FlagSet's",
}

// Every workflow command the tool prints goes through Actions.command, and so
// through CommandText, the one guard of their data: no other code of the
// module (test support aside) calls go-githubactions' command writers, and
// none writes a command of its own ("::name" or "##[" in a string literal).
func TestWorkflowCommandsHaveOneWriter(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	var found []string
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "tools" || strings.HasSuffix(name, "test")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		files++
		rel, _ := filepath.Rel(root, path)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imports := map[string]bool{}
		gha := false
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			n := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			imports[n] = true
			gha = gha || p == "github.com/sethvargo/go-githubactions"
		}
		for _, decl := range f.Decls {
			fn, _ := decl.(*ast.FuncDecl)
			ast.Inspect(decl, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BasicLit:
					if x.Kind != token.STRING {
						return true
					}
					s, err := strconv.Unquote(x.Value)
					if err != nil {
						return true
					}
					if strings.Contains(s, "##[") || len(s) > 2 && strings.HasPrefix(s, "::") && s[2] >= 'a' && s[2] <= 'z' {
						found = append(found, rel+": the literal "+x.Value)
					}
				case *ast.CallExpr:
					sel, ok := x.Fun.(*ast.SelectorExpr)
					if !gha || !ok || !commandMethods[sel.Sel.Name] {
						return true
					}
					if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] {
						return true // a package's function (fmt.Errorf)
					}
					where := "?"
					if fn != nil {
						where = fn.Name.Name
					}
					if _, ok := allowedWriters[filepath.ToSlash(rel)+":"+where+"/"+sel.Sel.Name]; !ok {
						found = append(found, rel+": "+where+" calls "+sel.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 100, "the module's files were read")
	assert.Empty(t, found, "workflow commands written outside Actions.command")
}
