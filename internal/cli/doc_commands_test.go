package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// parsers are the commands with a run that stops after the parsing: Run
// returns errParsed when the command line parses and validates.
func parsers(f *Factory) map[string]*Command {
	cmds := []*Command{
		NewCmdCalibrate(f, func(context.Context, *calibrateOptions) error { return errParsed }),
		NewCmdCheck(f, func(context.Context, *checkOptions) error { return errParsed }),
		NewCmdCompare(f, func(context.Context, *compareOptions) error { return errParsed }),
		NewCmdEvaluate(f, func(context.Context, *evaluateOptions) error { return errParsed }),
		NewCmdGenerate(f, func(context.Context, *generate.RunOptions) error { return errParsed }),
		NewCmdImport(f, func(context.Context, *importOptions) error { return errParsed }),
		NewCmdJudge(f, func(context.Context, *judge.RunOptions) error { return errParsed }),
		NewCmdReport(f, func(context.Context, *reportOptions) error { return errParsed }),
		NewCmdRetrieve(f, func(context.Context, *retrieveOptions) error { return errParsed }),
	}
	m := map[string]*Command{}
	for _, c := range cmds {
		m[c.Name] = c
	}
	return m
}

// docCommandLine is a retrieval-gate command line shown in a page's code block.
type docCommandLine struct {
	where   string // file:line
	command string // the command's name
	args    string // the rest of the line, as written
}

// docInvocation finds `retrieval-gate CMD` (also an image's name,
// retrieval-gate:v1 CMD, as docker run names it; a docker:// step's args: CMD)
// in a code block's line.
var docInvocation = regexp.MustCompile(`(?:(?:^|[\s'"/=(])retrieval-gate(?::[a-zA-Z0-9.]+)? |^\s*args: )(calibrate|check|compare|evaluate|generate|import|judge|report|retrieve)\b(.*)$`)

// docCommandLines are the command lines of every fenced code block of a
// Markdown page, whatever its language (sh, text, yaml, groovy): a line
// continued with a trailing \, or (YAML) by more indented lines starting with
// --, is joined.
func docCommandLines(file, text string) []docCommandLine {
	var out []docCommandLine
	lines := strings.Split(text, "\n")
	inBlock := false
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if strings.HasPrefix(trimmed, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		m := docInvocation.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		where := fmt.Sprintf("%s:%d", file, i+1)
		rest := m[2]
		for strings.HasSuffix(strings.TrimSpace(rest), `\`) && i+1 < len(lines) {
			i++
			rest = strings.TrimSuffix(strings.TrimSpace(rest), `\`) + " " + strings.TrimSpace(lines[i])
		}
		for i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "--") && strings.HasPrefix(lines[i+1], " ") {
			i++
			rest += " " + strings.TrimSpace(lines[i])
		}
		out = append(out, docCommandLine{where: where, command: m[1], args: rest})
	}
	return out
}

// docShellWords splits a documented command line as sh would, far enough for
// the docs: quotes, a trailing comment, the end of the command (;, &&, |, >,
// the closing quote of a Jenkinsfile's sh '...'); $VAR, ${VAR}, $(...) and
// ${{ ... }} stand for a value the reader sets (a URL for a variable whose
// name ends in _URL). A last word ... or … says the flags are elided.
func docShellWords(line string) (words []string, elided bool) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	value := func(v string) string {
		if m := docVariable.FindStringSubmatch(v); m != nil && strings.HasSuffix(m[1]+m[2], "_URL") {
			return "http://127.0.0.1:9"
		}
		return "x"
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord, c == ';', c == '|', c == '>', c == '<', c == '&':
			flush()
			return words, false
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 { // the closing quote of an enclosing sh '...'
				flush()
				return words, false
			}
			quoted := line[i+1 : i+1+j]
			if c == '"' {
				quoted = docVariable.ReplaceAllStringFunc(quoted, value)
			}
			cur.WriteString(quoted)
			inWord = true
			i += j + 1
		case c == '$':
			if m := docVariable.FindStringIndex(line[i:]); m != nil && m[0] == 0 {
				cur.WriteString(value(line[i : i+m[1]]))
				i += m[1] - 1
			} else {
				cur.WriteByte(c)
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	if n := len(words); n > 0 && (words[n-1] == "..." || words[n-1] == "…") {
		return words[:n-1], true
	}
	return words, false
}

// docVariable is a shell variable or substitution, or an Actions expression.
var docVariable = regexp.MustCompile(`\$(?:\{\{[^}]*\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|\([^)]*\))`)

func TestDocShellWords(t *testing.T) {
	for _, tc := range []struct {
		line   string
		words  []string
		elided bool
	}{
		{` --in 'x y' --out c   # exits 1`, []string{"--in", "x y", "--out", "c"}, false},
		{` --judge-url "$LLM_URL" --k 3 --qrels "${OUT}/q.txt"`, []string{"--judge-url", "http://127.0.0.1:9", "--k", "3", "--qrels", "x/q.txt"}, false},
		{` --junit $(Common.TestResultsDirectory)/r.xml && echo done`, []string{"--junit", "x/r.xml"}, false},
		{` --kb kb --junit r.xml'`, []string{"--kb", "kb", "--junit", "r.xml"}, false}, // sh '...'
		{` --cases ${{ inputs.cases }} > out.txt`, []string{"--cases", "x"}, false},
		{` --judge-url "$LLM_URL" --judge-model M ...`, []string{"--judge-url", "http://127.0.0.1:9", "--judge-model", "M"}, true},
		{` --run 'hybrid=eval/part-*.json' --parent-from-id '#'`, []string{"--run", "hybrid=eval/part-*.json", "--parent-from-id", "#"}, false},
	} {
		words, elided := docShellWords(tc.line)
		assert.Equal(t, tc.words, words, tc.line)
		assert.Equal(t, tc.elided, elided, tc.line)
	}
}

// docPagesOf are README.md and docs/*.md.
func docPagesOf(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// Every retrieval-gate command line of a code block of README.md and
// docs/*.md, in any block (the ```sh blocks that internal/e2e/docs runs, and
// the ```text, ```yaml and Jenkinsfile blocks it does not: placeholders, a
// server that is not here), parses: its flags exist for its command and
// their values are accepted by its parser. A line ending in ... (the flags of
// the examples below) must only name flags of its command. The environment is
// the reader's of the pages: CHROMA_URL, CHROMA_API_KEY, CHROMA_TENANT and
// CHROMA_DATABASE set for a Chroma server.
func TestDocCommandLinesParse(t *testing.T) {
	// The variables the pages have the reader set for a Chroma server.
	readerEnv := map[string]string{"CHROMA_URL": "http://127.0.0.1:8000", "CHROMA_API_KEY": "key", "CHROMA_TENANT": "t", "CHROMA_DATABASE": "d"}
	env, _, _ := checkEnv("")
	env.Getenv = func(k string) string { return readerEnv[k] }
	f := NewFactory(env)
	cmds := parsers(f)
	total := 0
	for _, page := range docPagesOf(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repoRoot(t), page)
		for _, l := range docCommandLines(rel, string(data)) {
			total++
			args, elided := docShellWords(l.args)
			c := cmds[l.command]
			if elided {
				known := map[string]bool{}
				for _, f := range helpFlagsOf(t, l.command) {
					known[f.name] = true
				}
				for _, a := range args {
					if name, ok := strings.CutPrefix(a, "--"); ok {
						name, _, _ = strings.Cut(name, "=")
						assert.True(t, known[name], "%s: %s has no --%s", l.where, l.command, name)
					}
				}
				continue
			}
			t.Run(l.where, func(t *testing.T) {
				require.ErrorIs(t, c.Run(context.Background(), args), errParsed, "retrieval-gate %s %s", l.command, strings.Join(args, " "))
			})
		}
	}
	assert.GreaterOrEqual(t, total, 60, "the docs show the commands")
}

// docActionSteps are the steps of the YAML blocks of a page that use the
// Action (uses: retrieval-gate/retrieval-gate@…): where, and the step's with:.
func docActionSteps(t *testing.T, file, text string) (steps []docActionStep) {
	t.Helper()
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatchIndex(text, -1) {
		var doc yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(text[m[2]:m[3]]), &doc), "%s: a YAML block", file)
		first := strings.Count(text[:m[2]], "\n") // the block's lines count from its first
		var walk func(*yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.MappingNode {
				step := map[string]*yaml.Node{}
				for i := 0; i+1 < len(n.Content); i += 2 {
					step[n.Content[i].Value] = n.Content[i+1]
				}
				if uses := step["uses"]; uses != nil && strings.HasPrefix(uses.Value, "retrieval-gate/retrieval-gate@") {
					with := map[string]string{}
					if w := step["with"]; w != nil {
						for i := 0; i+1 < len(w.Content); i += 2 {
							with[w.Content[i].Value] = w.Content[i+1].Value
						}
					}
					steps = append(steps, docActionStep{where: fmt.Sprintf("%s:%d", file, first+uses.Line), with: with})
				}
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(&doc)
	}
	return steps
}

type docActionStep struct {
	where string // file:line of its uses:
	with  map[string]string
}

// Every step of the pages' workflows that uses the Action gives inputs that
// action.yml declares, that its command declares (an input of another command
// would be ignored), and whose values its command accepts, read as the runner
// passes them (INPUT_<NAME>); an expression ${{ … }} stands for a value.
func TestDocActionStepsParse(t *testing.T) {
	declared := actionYMLInputs(t)
	inputs := map[string]actionInputs{"check": checkInputs, "compare": compareInputs, "calibrate": calibrateInputs, "retrieve": retrieveInputs,
		"import": importInputs, "judge": judgeInputs, "generate": generateInputs, "evaluate": evaluateInputs, "report": reportInputs}
	total := 0
	for _, page := range docPagesOf(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repoRoot(t), page)
		for _, s := range docActionSteps(t, rel, string(data)) {
			total++
			command := s.with["command"]
			if command == "" {
				command = "check"
			}
			vars := map[string]string{"GITHUB_ACTIONS": "true", "INPUT_COMMAND": command, "INPUT_GITHUB-TOKEN": "token"}
			for k, v := range s.with {
				assert.True(t, declared[k], "%s: action.yml has no input %q", s.where, k)
				if k == "command" || k == "github-token" {
					// github-token is every command's: the publishing reads it
					// (publish.Token), not a command's parser.
					vars["INPUT_GITHUB-TOKEN"] = "token"
					continue
				}
				_, ok := inputs[command][k]
				assert.True(t, ok, "%s: %s declares no input %q", s.where, command, k)
				vars["INPUT_"+strings.ToUpper(k)] = regexp.MustCompile(`\$\{\{[^}]*\}\}`).ReplaceAllString(v, "x")
			}
			env, _, _ := checkEnv("")
			env.Getenv = func(k string) string { return vars[k] }
			c, ok := parsers(NewFactory(env))[command]
			if assert.True(t, ok, "%s: no command %q", s.where, command) {
				assert.ErrorIs(t, c.Run(context.Background(), nil), errParsed, "%s: the step of %s with %v", s.where, command, s.with)
			}
		}
	}
	assert.GreaterOrEqual(t, total, 20, "the docs' workflows use the Action")
}

// actionYMLInputs are the names of action.yml's inputs.
func actionYMLInputs(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	require.NoError(t, err)
	var action struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &action))
	names := map[string]bool{}
	for k := range action.Inputs {
		names[k] = true
	}
	return names
}
