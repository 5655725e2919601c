package cli

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// repoRoot is the module root, seen from the cli package's tests.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return root
}

// TestActionYML validates action.yml (actionlint lints workflows, not action
// metadata): every input of the contract with its default, the outputs, a Docker
// action running `check`, and every input a flag of `check`.
func TestActionYML(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	require.NoError(t, err)
	var action struct {
		Name        string `yaml:"name"`
		Author      string `yaml:"author"`
		Description string `yaml:"description"`
		Branding    struct {
			Icon  string `yaml:"icon"`
			Color string `yaml:"color"`
		} `yaml:"branding"`
		Inputs map[string]struct {
			Description string  `yaml:"description"`
			Required    *bool   `yaml:"required"`
			Default     *string `yaml:"default"`
		} `yaml:"inputs"`
		Outputs map[string]struct {
			Description string `yaml:"description"`
		} `yaml:"outputs"`
		Runs struct {
			Using string   `yaml:"using"`
			Image string   `yaml:"image"`
			Args  []string `yaml:"args"`
		} `yaml:"runs"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&action))

	assert.Equal(t, "retrieval-gate", action.Name)
	assert.NotEmpty(t, action.Description)
	assert.NotEmpty(t, action.Branding.Icon)
	assert.NotEmpty(t, action.Branding.Color)
	assert.Equal(t, "docker", action.Runs.Using)
	assert.Equal(t, "Dockerfile", action.Runs.Image)
	assert.Equal(t, []string{"${{ inputs.command }}"}, action.Runs.Args, "the `command` input selects the command")

	// Every input but `command` and `github-token` defaults to empty, so that no
	// command's default reaches another (issue 9: inputs scoped per command).
	for name, in := range action.Inputs {
		assert.NotEmpty(t, in.Description, name)
		if in.Required != nil {
			assert.False(t, *in.Required, "%s: no input is required of every command", name)
		}
		require.NotNil(t, in.Default, "%s has a default", name)
		switch name {
		case "command":
			assert.Equal(t, "check", *in.Default)
		case "github-token":
			assert.Equal(t, "${{ github.token }}", *in.Default)
		default:
			assert.Empty(t, *in.Default, "%s: the command's own default applies", name)
		}
	}
	for _, name := range []string{"verdict", "n", "hit", "recall", "ndcg", "json", "recommended"} {
		out, ok := action.Outputs[name]
		if assert.True(t, ok, "output %s missing", name) {
			assert.NotEmpty(t, out.Description, name)
		}
	}

	// Each command's declared inputs are inputs of action.yml, and every input of
	// action.yml is declared by a command (or is command / github-token).
	declared := map[string]bool{"command": true, "github-token": true}
	commandInputs := map[string]actionInputs{"check": checkInputs, "compare": compareInputs, "calibrate": calibrateInputs, "retrieve": retrieveInputs,
		"import": importInputs, "judge": judgeInputs, "generate": generateInputs, "evaluate": evaluateInputs, "report": reportInputs}
	for _, c := range commands(nil) {
		assert.Contains(t, commandInputs, c.Name, "every command is an Action (it declares its inputs)")
		assert.Contains(t, action.Inputs["command"].Description, "`"+c.Name+"`", "the command input names every command")
	}
	for cmd, inputs := range commandInputs {
		for name := range inputs {
			declared[name] = true
			_, ok := action.Inputs[name]
			assert.True(t, ok, "%s declares %s, which action.yml lacks", cmd, name)
		}
	}
	for name := range action.Inputs {
		assert.True(t, declared[name], "input %s reaches no command", name)
	}
	assert.Equal(t, "default", checkCommentKey)
	seen := map[string]string{}
	commentKeys := map[string]string{"check": checkCommentKey, "calibrate": calibrateCommentKey, "compare": compareCommentKey, "evaluate": evaluateCommentKey}
	for cmd, key := range commentKeys {
		assert.True(t, publish.ValidKey(key), key)
		assert.Empty(t, seen[key], "comment keys never collide: %s and %s share %q", seen[key], cmd, key)
		seen[key] = cmd
		_, ok := commandInputs[cmd]["comment-key"]
		assert.True(t, ok, "%s declares comment-key", cmd)
	}
	for _, name := range []string{"qrels", "judgments", "out"} {
		assert.Contains(t, action.Outputs, name)
	}
}

// dockerBuild runs the Dockerfile's own build command (there is no Docker engine
// here), writing the binary to dir.
func dockerBuild(t *testing.T, dir string) (bin, finalStage string) {
	t.Helper()
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	df := string(data)

	// The shape of the image: Go build stage, a minimal final stage with CA
	// certificates, no USER, the binary as entrypoint.
	stages := regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)`).FindAllStringSubmatch(df, -1)
	require.Len(t, stages, 2)
	builder, _, _ := strings.Cut(stages[0][1], "@sha256:") // pinned by digest too (TestDockerfileBaseImagesPinned)
	assert.Equal(t, "golang:1.26.8-bookworm", builder, "the builder is pinned to the Go release go.mod names")
	finalStage = stages[1][1]
	assert.NotRegexp(t, `(?m)^USER\b`, df, "Docker actions must run as root")
	assert.Regexp(t, `(?m)^COPY --from=build /etc/ssl/certs/ca-certificates.crt `, df)
	assert.Regexp(t, `(?m)^ENTRYPOINT \["/retrieval-gate"\]$`, df)

	var build string
	sc := bufio.NewScanner(strings.NewReader(df))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build") {
			build = strings.TrimPrefix(line, "RUN ")
		}
	}
	require.NotEmpty(t, build, "the Dockerfile has a RUN … go build line")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w`, "-o /out/retrieval-gate"} {
		require.Contains(t, build, want)
	}
	bin = filepath.Join(dir, "retrieval-gate")
	build = strings.ReplaceAll(build, "${VERSION}", "e2e-test")
	build = strings.ReplaceAll(build, "-o /out/retrieval-gate", "-o "+bin)
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", build, out)
	return bin, finalStage
}

// TestDockerImageBinary builds the binary exactly as the Dockerfile does and checks
// that it is static (no interpreter, no dynamic section, no libraries: it runs on
// distroless/static or scratch, which the final stage must be), stripped and trimmed,
// then runs it as the Action runs it: the runner's environment (GITHUB_*, INPUT_*,
// output and summary files) against a fake GitHub API.
func TestDockerImageBinary(t *testing.T) {
	requireHeavy(t, "builds the binary as the Dockerfile does")
	bin, finalStage := dockerBuild(t, t.TempDir())

	t.Run("static, as the final image needs; stripped, trimmed", func(t *testing.T) {
		f, err := elf.Open(bin)
		require.NoError(t, err)
		defer f.Close()
		for _, p := range f.Progs {
			assert.NotContains(t, []elf.ProgType{elf.PT_INTERP, elf.PT_DYNAMIC}, p.Type, "dynamically linked: a dependency (e.g. purego) imports libc")
		}
		libs, err := f.ImportedLibraries()
		require.NoError(t, err)
		assert.Empty(t, libs)
		assert.Regexp(t, `^(scratch|gcr\.io/distroless/static-)`, finalStage, "a static binary needs no libc in the image")
		assert.Nil(t, f.Section(".symtab"), "-s strips the symbol table")
		assert.Nil(t, f.Section(".debug_info"), "-w drops DWARF")
		data, err := os.ReadFile(bin)
		require.NoError(t, err)
		assert.False(t, bytes.Contains(data, []byte(repoRoot(t)+"/cli")), "-trimpath keeps build paths out")
		// docs/action.md states the binary's size (the image's pull estimate
		// rests on it): within 10% of the binary built here, on amd64.
		if runtime.GOARCH == "amd64" {
			doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "action.md"))
			require.NoError(t, err)
			m := regexp.MustCompile(`static\*\* \(([0-9.]+) MB for linux/amd64`).FindSubmatch(doc)
			require.NotNil(t, m, "docs/action.md states the amd64 binary's size")
			stated, err := strconv.ParseFloat(string(m[1]), 64)
			require.NoError(t, err)
			built := float64(len(data)) / 1e6
			assert.InEpsilon(t, built, stated, 0.10, "docs/action.md says %.1f MB, the binary is %.1f MB", stated, built)
		}
		out, err := exec.Command(bin, "--version").CombinedOutput()
		require.NoError(t, err)
		assert.Equal(t, "retrieval-gate e2e-test\n", string(out))
	})

	root := repoRoot(t)
	const token = "ghs_E2EtokenDoNotPrint0123456789abcd"
	type run struct {
		code           int
		stdout, stderr string
		outputs        map[string]string
		summary        string
	}
	// action runs the binary in a fresh runner environment.
	action := func(t *testing.T, apiURL, event, payload string, inputs map[string]string, args ...string) run {
		t.Helper()
		dir := t.TempDir()
		files := map[string]string{"event": filepath.Join(dir, "event.json"), "output": filepath.Join(dir, "output"), "summary": filepath.Join(dir, "summary")}
		require.NoError(t, os.WriteFile(files["event"], []byte(payload), 0o644))
		require.NoError(t, os.WriteFile(files["output"], nil, 0o644))
		require.NoError(t, os.WriteFile(files["summary"], nil, 0o644))
		env := []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "CI=true",
			"GITHUB_ACTIONS=true", "GITHUB_API_URL=" + apiURL, "GITHUB_SERVER_URL=https://github.com",
			"GITHUB_REPOSITORY=octo/repo", "GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + files["event"],
			"GITHUB_WORKSPACE=" + root, "GITHUB_OUTPUT=" + files["output"], "GITHUB_STEP_SUMMARY=" + files["summary"],
			"GITHUB_RUN_ID=99", "RUNNER_TEMP=" + dir,
		}
		// action.yml's defaults, as the runner passes them.
		all := map[string]string{
			"command": "check", "cases": "testdata/demo/cases.jsonl", "kb": "testdata/demo/kb", "k": "", "min-hit": "", "min-recall": "",
			"reference-locale": "", "comment": "", "comment-key": "", "github-token": token, "qrels": "", "run": "", "bootstrap": "",
			"json": filepath.Join(dir, "agg.json"), "markdown": "", "cases-out": "", "pr": "",
		}
		for k, v := range inputs {
			all[k] = v
		}
		for k, v := range all {
			env = append(env, "INPUT_"+strings.ToUpper(k)+"="+v)
		}
		cmd := exec.Command(bin, append([]string{"check"}, args...)...)
		cmd.Dir = root
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		r := run{code: code, stdout: stdout.String(), stderr: stderr.String(), outputs: map[string]string{}}
		data, err := os.ReadFile(files["output"])
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`(?m)^([a-z]+)<<(\S+)\n((?s:.*?))\n(\S+)$`).FindAllStringSubmatch(string(data), -1) {
			r.outputs[m[1]] = m[3]
		}
		sum, err := os.ReadFile(files["summary"])
		require.NoError(t, err)
		r.summary = string(sum)
		for name, text := range map[string]string{"stderr": r.stderr, "outputs": string(data), "summary": r.summary,
			"stdout without ::add-mask::": strings.ReplaceAll(r.stdout, "::add-mask::"+token+"\n", "")} {
			assert.NotContains(t, text, token, "the token leaked into %s", name)
		}
		assert.Equal(t, 1, strings.Count(r.stdout, "::add-mask::"+token+"\n"), "the token is masked")
		return r
	}

	t.Run("PR run creates the comment, the next run updates it", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		defer srv.Close()
		r := action(t, srv.APIURL(), "pull_request", prEvent(5, "octo/repo"), nil)
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Equal(t, "pass", r.outputs["verdict"])
		assert.Equal(t, "132", r.outputs["n"])
		assert.Regexp(t, `^0\.7[0-9]+$`, r.outputs["hit"])
		assert.NotEmpty(t, r.outputs["recall"])
		assert.NotEmpty(t, r.outputs["ndcg"])
		require.NotEmpty(t, r.outputs["json"])
		var agg map[string]any
		data, err := os.ReadFile(r.outputs["json"])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &agg))
		assert.Equal(t, "pass", agg["verdict"])
		assert.True(t, strings.HasPrefix(r.summary, "<!-- retrieval-gate:default -->\n"))
		assert.Contains(t, r.stderr, "PR comment created")
		cs := srv.Comments(5)
		require.Len(t, cs, 1)
		assert.True(t, strings.HasPrefix(cs[0].Body, "<!-- retrieval-gate:default -->\n"))
		assert.Contains(t, cs[0].Body, "[workflow run](https://github.com/octo/repo/actions/runs/99)")

		r = action(t, srv.APIURL(), "pull_request", prEvent(5, "octo/repo"), map[string]string{"min-hit": "0.9"})
		assert.Equal(t, 1, r.code, "the floor fails the gate")
		assert.Contains(t, r.stderr, "PR comment updated")
		cs2 := srv.Comments(5)
		require.Len(t, cs2, 1)
		assert.Equal(t, cs[0].ID, cs2[0].ID)
		assert.NotEqual(t, cs[0].Body, cs2[0].Body)

		r = action(t, srv.APIURL(), "pull_request", prEvent(5, "octo/repo"), map[string]string{"comment-key": "nightly"})
		assert.Equal(t, 0, r.code)
		assert.Len(t, srv.Comments(5), 2, "another key, another comment")
	})

	t.Run("broken dataset: exit 1, annotations relative to the workspace", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		defer srv.Close()
		r := action(t, srv.APIURL(), "pull_request", prEvent(5, "octo/repo"), map[string]string{"cases": filepath.Join(root, "testdata/demo/broken/cases.jsonl")})
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "fail", r.outputs["verdict"])
		assert.Regexp(t, `(?m)^::error file=testdata/demo/broken/cases\.jsonl,line=[0-9]+,title=retrieval-gate%3A dataset integrity::case `, r.stdout)
		require.Len(t, srv.Comments(5), 1)
		assert.Contains(t, srv.Comments(5)[0].Body, "fail")
	})

	t.Run("read-only token: 403 warns, exit code and summary unchanged", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		defer srv.Close()
		srv.ReadOnly = true
		r := action(t, srv.APIURL(), "pull_request", prEvent(5, "octo/repo"), nil)
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "::warning::retrieval-gate could not post the PR comment")
		assert.Contains(t, r.stdout, "workflow_run")
		assert.Contains(t, r.summary, "<!-- retrieval-gate:default -->")
		assert.Equal(t, "pass", r.outputs["verdict"])
	})

	t.Run("fork PR: no API call, a notice, the summary", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		defer srv.Close()
		r := action(t, srv.APIURL(), "pull_request", prEvent(5, "someone/fork"), nil)
		assert.Equal(t, 0, r.code)
		assert.Empty(t, srv.Requests())
		assert.Contains(t, r.stdout, "::notice::retrieval-gate: no PR comment: this pull request comes from a fork (someone/fork)")
		assert.Contains(t, r.summary, "<!-- retrieval-gate:default -->")
	})

	t.Run("502 on create, then success: one comment", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		defer srv.Close()
		srv.Queue(githubtest.ServerError(http.MethodPost, 502))
		r := action(t, srv.APIURL(), "pull_request_target", prEvent(5, "someone/fork"), nil)
		assert.Equal(t, 0, r.code)
		assert.Len(t, srv.Comments(5), 1)
	})

	t.Run("API unreachable: warning, exit code unchanged", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		url := srv.APIURL()
		srv.Close()
		r := action(t, url, "pull_request", prEvent(5, "octo/repo"), nil)
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "::warning::retrieval-gate could not post the PR comment")
		assert.Contains(t, r.summary, "<!-- retrieval-gate:default -->")
	})

	t.Run("a report over 65,536 characters: the comment lists fewer cases and says so", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 5)
		defer srv.Close()
		dir := t.TempDir()
		var b strings.Builder
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(&b, `{"id": "miss-%04d", "locale": "en", "query": "%s", "must_cite_one_of": ["en-refunds"], "retrieved": ["en-invoices"]}`+"\n",
				i, strings.Repeat("why is my long question not answered ", 12))
		}
		cases := filepath.Join(dir, "cases.jsonl")
		require.NoError(t, os.WriteFile(cases, []byte(b.String()), 0o644))
		r := action(t, srv.APIURL(), "pull_request", prEvent(5, "octo/repo"), map[string]string{"cases": cases})
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Greater(t, len(r.summary), githubtest.MaxBody, "the summary has the whole report")
		cs := srv.Comments(5)
		require.Len(t, cs, 1)
		assert.LessOrEqual(t, len(cs[0].Body), githubtest.MaxBody)
		assert.True(t, strings.HasPrefix(cs[0].Body, "<!-- retrieval-gate:default -->\n"))
		assert.Contains(t, cs[0].Body, "more not shown")
		assert.Contains(t, cs[0].Body, "This comment was shortened to fit GitHub's 65,536-character comment limit")
	})

	t.Run("flags win over inputs; --pr on a push", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", token, 8)
		defer srv.Close()
		r := action(t, srv.APIURL(), "push", `{"ref":"refs/heads/main"}`, map[string]string{"comment": "never", "pr": "8"}, "--comment", "always")
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Len(t, srv.Comments(8), 1)
		assert.Equal(t, fmt.Sprint(8), fmt.Sprint(srv.Comments(8)[0].PR))
	})
}

// actionlint runs the actionlint that .ci/run builds (.bin/actionlint), or the one
// pinned in tools/go.mod.
func actionlint(t *testing.T, dir string, files ...string) (string, error) {
	t.Helper()
	root := repoRoot(t)
	var cmd *exec.Cmd
	if bin := filepath.Join(root, ".bin", "actionlint"); fileExists(bin) {
		cmd = exec.Command(bin, files...)
	} else {
		cmd = exec.Command("go", append([]string{"tool", "-modfile=" + filepath.Join(root, "tools", "go.mod"), "actionlint"}, files...)...)
	}
	cmd.Dir = dir
	// actionlint reports on stdout; stderr carries the go command's own lines
	// ("go: downloading ...") on a cold module cache, which are not findings.
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestREADMEWorkflows lints the workflows the README, docs/action.md,
// docs/baseline.md and docs/recipe.md offer to copy, and this repository's own, with actionlint (and
// its shellcheck pass).
func TestREADMEWorkflows(t *testing.T) {
	requireHeavy(t, "builds and runs actionlint")
	root := repoRoot(t)
	var section string
	for _, doc := range []string{"README.md", filepath.Join("docs", "action.md"), filepath.Join("docs", "baseline.md"), filepath.Join("docs", "recipe.md")} {
		data, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		section += string(data)
	}

	// A scratch repository, so `uses: ./` resolves against this action.yml.
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	require.NoError(t, os.MkdirAll(wf, 0o755))
	require.NoError(t, exec.Command("git", "init", "-q", dir).Run())
	var files []string
	for i, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		if !strings.Contains(m[1], "\njobs:") {
			continue
		}
		f := filepath.Join(wf, fmt.Sprintf("readme-%d.yml", i))
		require.NoError(t, os.WriteFile(f, []byte(m[1]), 0o644))
		files = append(files, f)
	}
	require.GreaterOrEqual(t, len(files), 7, "the README's workflow, docs/action.md's basic one and the two of the fork setup, the two of the baseline recipe, docs/recipe.md's (its steps run in internal/e2e/docs TestRecipeWorkflow)")
	own, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, own)
	files = append(files, own...)
	out, err := actionlint(t, root, files...)
	require.NoError(t, err, out)
	assert.Empty(t, out)
}
