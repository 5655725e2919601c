package docs

import (
	"archive/zip"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// The copy-paste workflow of docs/recipe.md runs (issue 32 item 8): its steps'
// commands in order, as the Actions runner would run them, against
// githubtest's stand-in of GitHub's REST API (issue comments, check runs,
// workflow runs and artifacts, repository contents: the pages of
// docs.github.com/en/rest named in internal/github/githubtest). actionlint
// lints the same workflow (internal/cli TestREADMEWorkflows, heavy).
//
// What the runner does is done here as GitHub documents it:
//   - a job runs when its `if:` holds (the expressions the workflow uses are
//     evaluated; any other fails the test, so a changed workflow cannot pass
//     unread), its steps in order on a fresh runner, and a failed step skips
//     the rest and fails the job;
//   - actions/checkout copies the repository's tree into the workspace;
//   - a step of this action (`uses: retrieval-gate/retrieval-gate@…`) runs the
//     built binary with action.yml's args (the `command` input) and every
//     input of action.yml as INPUT_<NAME> (the step's `with:` over the
//     defaults, `${{ github.token }}` the job's token), in the runner's
//     environment (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REF, …);
//   - actions/upload-artifact zips its `path` under its base name, stored
//     as an artifact of the workflow run once the run has completed with
//     `success` (a failed run's artifacts are still stored, with that
//     conclusion);
//   - the job's `permissions:` set what the token may do in the stand-in:
//     without `actions: read` the /actions/ endpoints answer 403, without
//     `checks: write` check runs are refused, and with neither `contents:
//     write` nor `pull-requests: write` every write is (githubtest has no
//     finer scopes).

// recipeWorkflow is the first workflow of docs/recipe.md (the one to copy).
func recipeWorkflow(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "recipe.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```yaml\n(# \\.github/workflows/retrieval\\.yml[^\n]*\n.*?)```").FindSubmatch(data)
	require.NotNil(t, m, "docs/recipe.md has no ```yaml block starting with # .github/workflows/retrieval.yml")
	return string(m[1])
}

type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		If          string            `yaml:"if"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	With map[string]string `yaml:"with"`
}

// ghEvent is what triggers a workflow run.
type ghEvent struct {
	name, ref, sha string
	payload        map[string]any
}

// condition evaluates a job's or step's `if:` for ev: comparisons of
// github.event_name and github.ref with a string, joined by &&.
func condition(t *testing.T, expr string, ev ghEvent) bool {
	t.Helper()
	expr = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(expr), "${{"), "}}"))
	if expr == "" {
		return true
	}
	cmp := regexp.MustCompile(`^(github\.event_name|github\.ref) (==|!=) '([^']*)'$`)
	for _, part := range strings.Split(expr, "&&") {
		m := cmp.FindStringSubmatch(strings.TrimSpace(part))
		require.NotNil(t, m, "the test evaluates comparisons of github.event_name and github.ref joined by &&, not %q", part)
		v := map[string]string{"github.event_name": ev.name, "github.ref": ev.ref}[m[1]]
		if (v == m[3]) != (m[2] == "==") {
			return false
		}
	}
	return true
}

// actionInputs are action.yml's inputs with their defaults as the runner
// passes them (${{ github.token }}: the job's token).
func actionInputs(t *testing.T, root, token string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)
	var a struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string   `yaml:"using"`
			Args  []string `yaml:"args"`
		} `yaml:"runs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &a))
	require.Equal(t, "docker", a.Runs.Using)
	require.Equal(t, []string{"${{ inputs.command }}"}, a.Runs.Args, "the image's args: the command input alone")
	in := map[string]string{}
	for name, i := range a.Inputs {
		in[name] = strings.ReplaceAll(i.Default, "${{ github.token }}", token)
	}
	return in
}

// jobResult is what a job did.
type jobResult struct {
	ran, ok bool
	logs    []string // each step's name, exit code, stdout and stderr
	uploads map[string]string
}

// runWorkflow runs every job of wf whose `if:` holds for ev on a copy of tree
// and stores the uploads as artifacts of the run, completed with success when
// every job that ran succeeded.
func runWorkflow(t *testing.T, srv *githubtest.Server, bin, root, wf, tree, token string, ev ghEvent) map[string]*jobResult {
	t.Helper()
	var w workflow
	require.NoError(t, yaml.Unmarshal([]byte(wf), &w))
	_, triggered := w.On[ev.name]
	require.True(t, triggered, "the workflow has no %s trigger", ev.name)
	results := map[string]*jobResult{}
	success := true
	for name, job := range w.Jobs {
		r := &jobResult{uploads: map[string]string{}}
		results[name] = r
		if !condition(t, job.If, ev) {
			continue
		}
		r.ran, r.ok = true, true
		// The token's permissions, as far as the stand-in models them.
		srv.DenyActions(job.Permissions["actions"] != "read" && job.Permissions["actions"] != "write")
		srv.DenyChecks(job.Permissions["checks"] != "write")
		srv.ReadOnly = job.Permissions["contents"] != "write" && job.Permissions["pull-requests"] != "write"
		runner := t.TempDir()
		workspace := filepath.Join(runner, "workspace")
		eventPath := filepath.Join(runner, "event.json")
		payload, err := json.Marshal(ev.payload)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(eventPath, payload, 0o644))
		for i, s := range job.Steps {
			if !r.ok || !condition(t, s.If, ev) { // success() by default
				continue
			}
			action, _, _ := strings.Cut(s.Uses, "@")
			switch action {
			case "actions/checkout":
				require.NoError(t, copyTree(tree, workspace))
			case "actions/upload-artifact":
				path := filepath.Join(workspace, s.With["path"])
				if _, err := os.Stat(path); err != nil {
					require.NotEqual(t, "error", s.With["if-no-files-found"], "upload-artifact: %v", err)
					continue
				}
				r.uploads[s.With["name"]] = path
			case "retrieval-gate/retrieval-gate":
				inputs := actionInputs(t, root, token)
				for k, v := range s.With {
					_, known := inputs[k]
					require.True(t, known, "step %q: action.yml has no input %q", s.Name, k)
					inputs[k] = v
				}
				out, summary := filepath.Join(runner, fmt.Sprintf("output-%d", i)), filepath.Join(runner, fmt.Sprintf("summary-%d", i))
				for _, f := range []string{out, summary} {
					require.NoError(t, os.WriteFile(f, nil, 0o644))
				}
				env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + runner, "CI=true",
					"GITHUB_ACTIONS=true", "GITHUB_API_URL=" + srv.APIURL(), "GITHUB_SERVER_URL=https://github.com",
					"GITHUB_REPOSITORY=octo/repo", "GITHUB_EVENT_NAME=" + ev.name, "GITHUB_EVENT_PATH=" + eventPath,
					"GITHUB_REF=" + ev.ref, "GITHUB_REF_NAME=" + strings.TrimPrefix(strings.TrimPrefix(ev.ref, "refs/heads/"), "refs/pull/"),
					"GITHUB_SHA=" + ev.sha, "GITHUB_WORKSPACE=" + workspace, "GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + summary,
					"GITHUB_RUN_ID=4242", "RUNNER_TEMP=" + runner}
				if ev.name == "pull_request" {
					env = append(env, "GITHUB_BASE_REF=main", "GITHUB_HEAD_REF=feature")
				}
				for k, v := range inputs {
					env = append(env, "INPUT_"+strings.ToUpper(strings.ReplaceAll(k, " ", "_"))+"="+v)
				}
				cmd := exec.Command(bin, inputs["command"])
				cmd.Dir, cmd.Env = workspace, env
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
					code = ee.ExitCode()
				} else {
					require.NoError(t, err)
				}
				r.logs = append(r.logs, fmt.Sprintf("step %q: exit %d\n%s%s", s.Name, code, stdout.String(), stderr.String()))
				for _, text := range []string{stdout.String(), stderr.String()} {
					assert.NotContains(t, strings.ReplaceAll(text, "::add-mask::"+token, ""), token, "step %q printed the token", s.Name)
				}
				r.ok = code == 0
			default:
				t.Fatalf("job %s, step %q: the test runs checkout, upload-artifact and this action, not %q (run: %q)", name, s.Name, s.Uses, s.Run)
			}
		}
		success = success && r.ok
	}
	conclusion := "success"
	if !success {
		conclusion = "failure"
	}
	var run int64 // the workflow run, stored once it has completed and uploaded something
	for _, r := range results {
		for name, path := range r.uploads {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			f, err := zw.Create(filepath.Base(path))
			require.NoError(t, err)
			_, err = f.Write(data)
			require.NoError(t, err)
			require.NoError(t, zw.Close())
			branch := strings.TrimPrefix(ev.ref, "refs/heads/")
			if ev.name == "pull_request" {
				branch = "feature"
			}
			if run == 0 {
				run = srv.AddRun(githubtest.Run{Name: "retrieval", HeadBranch: branch, HeadSHA: ev.sha, Event: ev.name, Conclusion: conclusion})
			}
			srv.AddArtifact(githubtest.Artifact{Name: name, RunID: run, Zip: buf.Bytes()})
		}
	}
	return results
}

func commitSHA(s string) string {
	sum := sha1.Sum([]byte(s)) // a well-formed git commit id, not a security use
	return hex.EncodeToString(sum[:])
}

// TestRecipeWorkflow runs docs/recipe.md's workflow on the demo: by hand on
// main (the baseline artifact and the history branch written, no comment),
// then on a pull request whose knowledge base lost the text of some cards (the
// baseline found, the regression gate failing, the comment posted with main's
// trend, the history not written). Cost: about 5 s (four retrieves and checks
// of the demo).
func TestRecipeWorkflow(t *testing.T) {
	t.Parallel()
	root, err := os.Getwd() // TestMain runs the tests from the repository root
	require.NoError(t, err)
	bin := docBinary(t)
	wf := recipeWorkflow(t, root)
	const token = "ghs_RecipeTokenDoNotPrint0123456789ab"
	srv := githubtest.New("octo", "repo", token, 7)
	defer srv.Close()

	// The repository: eval/cases.jsonl and kb/, as the recipe assumes.
	mainTree := filepath.Join(t.TempDir(), "main")
	require.NoError(t, copyTree(filepath.Join(root, "testdata", "demo", "kb"), filepath.Join(mainTree, "kb")))
	require.NoError(t, os.MkdirAll(filepath.Join(mainTree, "eval"), 0o755))
	cases, err := os.ReadFile(filepath.Join(root, "testdata", "demo", "cases.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mainTree, "eval", "cases.jsonl"), cases, 0o644))
	repo := map[string]any{"full_name": "octo/repo", "default_branch": "main", "fork": false}

	// 1. The first run, by hand on main (workflow_dispatch).
	dispatch := ghEvent{name: "workflow_dispatch", ref: "refs/heads/main", sha: commitSHA("main"),
		payload: map[string]any{"ref": "refs/heads/main", "repository": repo}}
	res := runWorkflow(t, srv, bin, root, wf, mainTree, token, dispatch)
	require.Len(t, res, 2, "two jobs: baseline and gate")
	base, gate := res["baseline"], res["gate"]
	require.NotNil(t, base)
	require.NotNil(t, gate)
	require.True(t, base.ran, "main runs the baseline job")
	require.True(t, base.ok, "%s", strings.Join(base.logs, "\n"))
	assert.False(t, gate.ran, "main gates nothing")
	assert.Contains(t, base.uploads, "retrieval-gate-baseline-default", "the artifact baseline: auto looks for")
	hist, ok := srv.File("retrieval-gate-history", "history.jsonl")
	require.True(t, ok, "the history branch holds history.jsonl: %v", srv.Files("retrieval-gate-history"))
	assert.Equal(t, 1, bytes.Count(hist, []byte("\n")), "one run recorded")
	assert.Contains(t, string(hist), commitSHA("main"))
	files := strings.Join(srv.Files("retrieval-gate-history"), " ")
	assert.Contains(t, files, "index.html")
	assert.Regexp(t, `reports/\S+-check\.html`, files, "the run's HTML report")
	assert.Empty(t, srv.Comments(7), "no comment from main")

	// 2. A pull request whose knowledge base lost the text of every other card.
	prTree := filepath.Join(t.TempDir(), "pr")
	require.NoError(t, copyTree(mainTree, prTree))
	cards, err := filepath.Glob(filepath.Join(prTree, "kb", "*", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, cards)
	for i, c := range cards {
		if i%2 != 0 {
			continue
		}
		data, err := os.ReadFile(c)
		require.NoError(t, err)
		head, _, ok := strings.Cut(string(data), "\n---\n") // the front matter stays: the card still exists
		require.True(t, ok, "%s: no front matter", c)
		require.NoError(t, os.WriteFile(c, []byte(head+"\n---\nNothing here.\n"), 0o644))
	}
	pr := ghEvent{name: "pull_request", ref: "refs/pull/7/merge", sha: commitSHA("pr"),
		payload: map[string]any{"number": 7, "repository": repo, "pull_request": map[string]any{"number": 7,
			"head": map[string]any{"ref": "feature", "repo": map[string]any{"full_name": "octo/repo"}},
			"base": map[string]any{"ref": "main", "repo": map[string]any{"full_name": "octo/repo"}}}}}
	res = runWorkflow(t, srv, bin, root, wf, prTree, token, pr)
	base, gate = res["baseline"], res["gate"]
	assert.False(t, base.ran, "a pull request writes no baseline and no history")
	require.True(t, gate.ran)
	logs := strings.Join(gate.logs, "\n")
	assert.False(t, gate.ok, "the regression gate fails the pull request:\n%s", logs)
	assert.Contains(t, logs, `step "Gate": exit 1`, logs)
	assert.Regexp(t, `max_drop_hit +overall +\S+ +fail`, logs)
	assert.NotContains(t, logs, "no baseline", "baseline: auto found main's artifact")
	cs := srv.Comments(7)
	require.Len(t, cs, 1, "the sticky comment:\n%s", logs)
	body := cs[0].Body
	assert.True(t, strings.HasPrefix(body, "<!-- retrieval-gate:default -->\n"), body)
	assert.Contains(t, body, "vs base", "the comparison with main's run")
	assert.Contains(t, body, commitSHA("main")[1:12], "the baseline's commit (its first character escaped against autolinks)")
	assert.Contains(t, body, "newly missed")
	assert.Contains(t, body, "Trend on main", "main's runs, read from the history branch")
	hist2, _ := srv.File("retrieval-gate-history", "history.jsonl")
	assert.Equal(t, hist, hist2, "the pull request did not write the history")
	assert.NotEmpty(t, srv.CheckRuns(), "the check runs (checks: write)")
}
