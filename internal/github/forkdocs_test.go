package github

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The notices about a fork's read-only token link to the section that shows the
// workflow_run setup: the page and the anchor exist (GitHub's anchor of a heading
// is its text lowercased, spaces to hyphens, punctuation dropped).
func TestForkCommentsDocs(t *testing.T) {
	page, anchor, ok := strings.Cut(strings.TrimPrefix(ForkCommentsDocs, "https://github.com/retrieval-gate/retrieval-gate/blob/main/"), "#")
	require.True(t, ok, ForkCommentsDocs)
	data, err := os.ReadFile("../../" + page)
	require.NoError(t, err)
	var anchors []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(data), -1) {
		a := regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(strings.ToLower(m[1]), "")
		anchors = append(anchors, strings.ReplaceAll(a, " ", "-"))
	}
	assert.Contains(t, anchors, anchor)
	assert.Contains(t, Explain(&APIError{Kind: KindForbidden}), ForkCommentsDocs)
}

// forkCommentScript is the github-script of docs/action.md's
// retrieval-gate-comment.yml, the workflow that posts a fork's report.
func forkCommentScript(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../docs/action.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(data), "# .github/workflows/retrieval-gate-comment.yml")
	require.True(t, ok, "docs/action.md has no retrieval-gate-comment.yml")
	block, _, ok = strings.Cut(block, "\n```")
	require.True(t, ok)
	_, script, ok := strings.Cut(block, "          script: |\n")
	require.True(t, ok, "the workflow has no github-script step")
	var lines []string
	for _, l := range strings.Split(script, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		require.True(t, strings.HasPrefix(l, "            "), "the script ends the block: %q", l)
		lines = append(lines, strings.TrimPrefix(l, "            "))
	}
	return strings.Join(lines, "\n")
}

// The documented workflow that posts a fork's report runs in node as
// actions/github-script runs it (the script is the body of an async function
// of require, github, context and core), against a pull request whose
// comments the test gives: it edits only the comment github-actions[bot]
// (the workflow token's identity) wrote with the marker. Anyone may write a
// comment that starts with the marker, and the token may edit anyone's comment
// (REST API, "Update an issue comment": write access to the repository), so a
// script that took the first comment with the marker would overwrite a
// reviewer's comment, or one a fork's author planted, with the fork's report.
func TestForkCommentScriptEditsOnlyItsOwn(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node not found; .ci/run installs it")
		}
		t.Skip("node not found (it runs the documented github-script): skipping")
	}
	script := forkCommentScript(t)
	const marker = "<!-- retrieval-gate:default -->"
	pr := map[string]any{"number": 7, "head": map[string]any{"sha": "abc", "repo": map[string]any{"full_name": "fork/repo"}}}
	comment := func(id int, login, typ, body string) map[string]any {
		return map[string]any{"id": id, "user": map[string]any{"login": login, "type": typ}, "body": body}
	}
	cases := []struct {
		name     string
		comments []map[string]any
		want     []string
	}{
		{"none", []map[string]any{}, []string{"create 7"}},
		{"the bot's own", []map[string]any{comment(1, "reviewer", "User", "looks good"), comment(2, "github-actions[bot]", "Bot", marker+"\nold report")}, []string{"update 2"}},
		{"a user's with the marker", []map[string]any{comment(3, "mallory", "User", marker+"\nnot a report")}, []string{"create 7"}},
		{"a user's before the bot's", []map[string]any{comment(4, "mallory", "User", "  "+marker+"\nx"), comment(5, "github-actions[bot]", "Bot", marker+"\nold")}, []string{"update 5"}},
		{"a deleted user's (user null)", []map[string]any{{"id": 6, "user": nil, "body": marker}}, []string{"create 7"}},
	}
	var comments [][]map[string]any
	for _, tc := range cases {
		comments = append(comments, tc.comments)
	}
	// One node process runs the script once per case (a node start is about a second here).
	in, err := json.Marshal(map[string]any{"pulls": []any{pr}, "cases": comments, "report": marker + "\n## retrieval-gate: pass\n"})
	require.NoError(t, err)
	prog := `const data = ` + string(in) + `;
const fs = { readFileSync: () => data.report };
const req = (m) => { if (m !== 'fs') throw new Error('require ' + m); return fs; };
const context = { repo: { owner: 'octo', repo: 'repo' }, payload: { workflow_run: { head_sha: 'abc', head_repository: { full_name: 'fork/repo' } } } };
const run = new (Object.getPrototypeOf(async function () {}).constructor)('require', 'github', 'context', 'core', ` + strconv.Quote(script) + `);
(async () => {
  const all = [];
  for (const comments of data.cases) {
    const calls = [];
    const github = {
      paginate: async (fn, args) => fn(args),
      rest: {
        pulls: { list: async () => data.pulls },
        issues: {
          listComments: async (a) => { if (a.issue_number !== 7) throw new Error('issue ' + a.issue_number); return comments; },
          updateComment: async (a) => { calls.push('update ' + a.comment_id); },
          createComment: async (a) => { calls.push('create ' + a.issue_number); },
        },
      },
    };
    const core = { notice: (m) => calls.push('notice ' + m), setFailed: (m) => calls.push('failed ' + m) };
    await run(req, github, context, core);
    all.push(calls);
  }
  console.log(JSON.stringify(all));
})().catch((e) => { console.error(e); process.exit(1); });
`
	file := filepath.Join(t.TempDir(), "run.js")
	require.NoError(t, os.WriteFile(file, []byte(prog), 0o600))
	out, err := exec.Command(node, file).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got [][]string
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Len(t, got, len(cases))
	for i, tc := range cases {
		assert.Equal(t, tc.want, got[i], tc.name)
	}
}
