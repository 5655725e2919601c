package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportFromCommentKeyParse: report --from's --comment-key is the key of
// the Markdown's marker; without --markdown it would mark nothing, so it is
// refused (it was accepted and ignored), by its flag or its Action input,
// before anything runs.
func TestReportFromCommentKeyParse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		inputs map[string]string
		want   string // "": parsed
	}{
		{name: "with --markdown", args: []string{"--from", "r.json", "--markdown", "r.md", "--comment-key", "nightly"}},
		{name: "without --markdown", args: []string{"--from", "r.json", "--comment-key", "nightly"},
			want: "report: --comment-key: the key of the Markdown's comment marker needs --markdown"},
		{name: "with --html only", args: []string{"--from", "r.json", "--html", "r.html", "--comment-key", "nightly"},
			want: "report: --comment-key: the key of the Markdown's comment marker needs --markdown"},
		{name: "a bad key first", args: []string{"--from", "r.json", "--comment-key", "bad key"},
			want: `report: --comment-key must be 1 to 100 characters of A-Z a-z 0-9 . _ / -, got "bad key"`},
		{name: "Action inputs", inputs: map[string]string{"from": "r.json", "comment-key": "nightly"},
			want: `report: action input "comment-key": the key of the Markdown's comment marker needs action input "markdown"`},
		{name: "Action inputs with markdown", inputs: map[string]string{"from": "r.json", "comment-key": "nightly", "markdown": "r.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv()
			if tc.inputs != nil {
				vars := map[string]string{"GITHUB_ACTIONS": "true", "INPUT_COMMAND": "report"}
				for k, v := range tc.inputs {
					vars["INPUT_"+strings.ToUpper(k)] = v
				}
				env.Getenv = func(k string) string { return vars[k] }
			}
			var got *reportOptions
			err := NewCmdReport(NewFactory(env), func(_ context.Context, o *reportOptions) error { got = o; return nil }).
				Run(context.Background(), tc.args)
			if tc.want == "" {
				require.NoError(t, err)
				require.NotNil(t, got)
				assert.Equal(t, "nightly", got.from.commentKey)
				return
			}
			require.EqualError(t, err, tc.want)
			assert.Equal(t, ExitInput, ExitCode(err))
			assert.Nil(t, got, "nothing ran")
		})
	}
}

// TestReportFromCommentKeyCompare: a compare document's Markdown has no
// comment marker (compare's --markdown file has none; its PR comment gets
// compare --comment-key's when it is published), so report --from refuses
// --comment-key for it, exit 2 with nothing written, where it was accepted and
// ignored; check's and calibrate's take it.
func TestReportFromCommentKeyCompare(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	cmp, chk := filepath.Join(dir, "compare.json"), filepath.Join(dir, "check.json")
	require.Equal(t, 0, Run(context.Background(), testEnv(), []string{"compare", "--qrels", root + "/testdata/compare/qrels.trec",
		"--run", "bm25=" + root + "/testdata/compare/bm25.trec", "--run", "dense=" + root + "/testdata/compare/dense.trec", "--comment", "never", "--json", cmp}))
	require.Equal(t, 0, Run(context.Background(), testEnv(), []string{"check", "--cases", root + "/testdata/demo/cases.jsonl", "--kb", root + "/testdata/demo/kb", "--comment", "never", "--json", chk}))
	for _, tc := range []struct {
		doc, want string
	}{
		{cmp, "report: --comment-key: a compare document's Markdown has no comment marker to carry a key: compare's --markdown writes none (the key of compare's PR comment is compare --comment-key)"},
		{chk, ""},
	} {
		t.Run(filepath.Base(tc.doc), func(t *testing.T) {
			out := t.TempDir()
			md, html := filepath.Join(out, "r.md"), filepath.Join(out, "r.html")
			env, stdout, _ := checkEnv("")
			err := NewCmdReport(NewFactory(env), nil).Run(context.Background(), []string{"--from", tc.doc, "--markdown", md, "--html", html, "--comment-key", "nightly"})
			if tc.want == "" {
				require.NoError(t, err)
				assert.FileExists(t, md)
				return
			}
			require.EqualError(t, err, tc.want)
			assert.Equal(t, ExitInput, ExitCode(err))
			assert.Empty(t, stdout.String())
			assert.NoFileExists(t, md)
			assert.NoFileExists(t, html)
			require.NoError(t, NewCmdReport(NewFactory(testEnv()), nil).Run(context.Background(), []string{"--from", tc.doc, "--markdown", md}),
				"without the key it renders")
		})
	}
}
