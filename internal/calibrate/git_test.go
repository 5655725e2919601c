package calibrate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// gitRepo is a real temporary git repository with a fixed identity and no global
// or system configuration.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) write(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func (r *gitRepo) commit(msg string, files ...string) {
	r.t.Helper()
	r.git(append([]string{"add", "--"}, files...)...)
	r.git("commit", "-q", "-m", msg)
}

// save writes files, given as name, content, name, content …, and commits them
// in one commit.
func (r *gitRepo) save(msg string, nameContent ...string) {
	r.t.Helper()
	require.Zero(r.t, len(nameContent)%2, "save takes names and contents in pairs")
	var names []string
	for i := 0; i < len(nameContent); i += 2 {
		r.write(nameContent[i], nameContent[i+1])
		names = append(names, nameContent[i])
	}
	r.commit(msg, names...)
}

// labelsThenJudge commits the lock and the human labels (human.jsonl), then the
// judge scores (judge.jsonl) in a later commit: the order git anchoring wants.
func (r *gitRepo) labelsThenJudge() {
	r.t.Helper()
	r.save("labels", "lock.json", baseLock, "human.jsonl", "h\n")
	r.save("judge run", "judge.jsonl", "j\n")
}

// merged makes a root commit, then onBranch's commits on a new branch and
// onMain's on main, and merges the branch into main with a merge commit: labels
// made where a judge run did not see them, or the other way round.
func (r *gitRepo) merged(branch string, onBranch, onMain func()) {
	r.t.Helper()
	r.save("root", "README", "x\n")
	r.git("checkout", "-q", "-b", branch)
	onBranch()
	r.git("checkout", "-q", "main")
	onMain()
	r.git("merge", "-q", "--no-ff", "-m", "merge "+branch, branch)
}

const baseLock = `{
  "dimensions": {
    "groundedness": {"construct": "support", "gated": true},
    "faithfulness": {"construct": "contradiction-only", "gated": true}
  },
  "bins": [0.34, 0.67],
  "kappa_weighting": "quadratic",
  "min_kappa": 0.6
}
`

// LockChanges' data; the lines the reports write from it are pinned in
// calibratereport (TestLockChangeText, over the same locks).
func TestLockChanges(t *testing.T) {
	base, err := labelfile.ReadLock([]byte(baseLock), "lock.json")
	require.NoError(t, err)
	setting := func(key, from, to string) LockChange {
		return LockChange{Code: LockSetting, Key: key, From: from, To: to}
	}
	tests := []struct {
		name string
		old  string
		new  string
		want []LockChange
	}{
		{"identical", "", "", nil},
		{"threshold lowered", `"min_kappa": 0.6`, `"min_kappa": 0.4`, []LockChange{setting("min_kappa", "0.6", "0.4")}},
		{"bins moved", `[0.34, 0.67]`, `[0.3, 0.67]`, []LockChange{setting("bins", "[0.34, 0.67]", "[0.3, 0.67]")}},
		{"reformatted only", "{\n  \"dimensions\"", "{\"dimensions\"", nil},
		{"min_n lowered from its default", `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": 5`,
			[]LockChange{{Code: LockSetting, Key: "min_n", From: "30", FromDefault: true, To: "5"}}},
		{"min_n default written out", `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": 30`, nil},
		{"single rater framing made a panel", `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel"`,
			[]LockChange{{Code: LockSetting, Key: "raters", From: "single", FromDefault: true, To: "panel"}}},
		{"dimension removed and added, by key", `"faithfulness": {"construct": "contradiction-only", "gated": true}`, `"answer": {"construct": "x", "gated": false, "carried_over": true}`,
			[]LockChange{
				{Code: LockDimensionAdded, Key: "dimensions.answer", Construct: "x", CarriedOver: true},
				{Code: LockDimensionRemoved, Key: "dimensions.faithfulness"},
			}},
		{"a dimension's flags", `"support", "gated": true`, `"support", "gated": false, "carried_over": true`,
			[]LockChange{setting("dimensions.groundedness.carried_over", "false", "true"), setting("dimensions.groundedness.gated", "true", "false")}},
		{"a construct defined", `"contradiction-only", "gated": true`, `"contradiction-only", "gated": true, "definition": "contradicted only"`,
			[]LockChange{{Code: LockSetting, Key: "dimensions.faithfulness.definition", To: "contradicted only", Text: true, FromDefault: true}}},
		{"a panel adopted", `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": {"reason": "ADR-0028"}`,
			[]LockChange{
				{Code: LockSetting, Key: "raters", From: "single", FromDefault: true, To: "panel"},
				{Code: LockSetting, Key: "owner", To: "pat", Text: true, FromDefault: true},
				{Code: LockAdoptionDeclared, Key: "panel_adoption", From: "single", FromDefault: true, Reason: "ADR-0028", Dimensions: []string{}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, err := labelfile.ReadLock([]byte(strings.Replace(baseLock, tt.old, tt.new, 1)), "lock.json")
			require.NoError(t, err)
			assert.Equal(t, tt.want, LockChanges(base, cur))
		})
	}
}

// adoptionLock is the lock after ADR-0028's panel adoption: base is the
// single-rater lock before it (baseLock with a definition), edits change it.
const adoptionLock = `{"dimensions": {"groundedness": {"construct": "support", "gated": true, "carried_over": true},
 "faithfulness": {"construct": "contradiction-only", "gated": true, "definition": "contradicted only"}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6, "raters": "panel", "owner": "pat",
 "panel_adoption": {"reason": "ADR-0028", "carried_over": ["groundedness"]}}`

// TestLockAdoption: a declared panel adoption covers, once and from a
// single-rater base, exactly the changes it declares; anything else is a change.
func TestLockAdoption(t *testing.T) {
	single := strings.Replace(baseLock, `"contradiction-only", "gated": true`, `"contradiction-only", "gated": true, "definition": "contradicted only"`, 1)
	undeclared := `{"dimensions": {"groundedness": {"construct": "support", "gated": true, "carried_over": true},
 "faithfulness": {"construct": "contradiction-only", "gated": true, "definition": "contradicted only"}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6, "raters": "panel"}`
	keys := func(cs []LockChange) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, string(c.Code)+" "+c.Key)
		}
		return out
	}
	tests := []struct {
		name, base, cur string
		changed         []string
		covered         []string // nil: no adoption accepted
	}{
		{"the adoption from a single-rater base", single, adoptionLock, []string{},
			[]string{"setting raters", "setting owner", "setting dimensions.groundedness.carried_over"}},
		{"undeclared", single, undeclared, []string{"setting raters", "setting dimensions.groundedness.carried_over"}, nil},
		{"declared with a relaxed threshold", single, strings.Replace(adoptionLock, `"min_kappa": 0.6`, `"min_kappa": 0.4`, 1),
			[]string{"setting min_kappa"}, []string{"setting raters", "setting owner", "setting dimensions.groundedness.carried_over"}},
		{"a carried_over flag it does not list", strings.Replace(single, `"contradiction-only", "gated": true`, `"contradiction-only", "gated": true, "carried_over": false`, 1),
			strings.Replace(adoptionLock, `"contradiction-only", "gated": true`, `"contradiction-only", "gated": true, "carried_over": true`, 1),
			[]string{"setting dimensions.faithfulness.carried_over"}, []string{"setting raters", "setting owner", "setting dimensions.groundedness.carried_over"}},
		{"the definition changed with it", single, strings.Replace(adoptionLock, `"contradicted only"`, `"unsupported"`, 1),
			[]string{"setting dimensions.faithfulness.definition"}, []string{"setting raters", "setting owner", "setting dimensions.groundedness.carried_over"}},
		{"frozen once recorded", adoptionLock, adoptionLock, []string{}, nil},
		{"its reason edited", adoptionLock, strings.Replace(adoptionLock, `"reason": "ADR-0028"`, `"reason": "ADR-0029"`, 1), []string{"setting panel_adoption.reason"}, nil},
		{"its record removed", adoptionLock, strings.Replace(adoptionLock, `,
 "panel_adoption": {"reason": "ADR-0028", "carried_over": ["groundedness"]}`, "", 1), []string{"adoption_removed panel_adoption"}, nil},
		{"the owner replaced", adoptionLock, strings.Replace(adoptionLock, `"owner": "pat"`, `"owner": "ana"`, 1), []string{"setting owner"}, nil},
		{"declared over a panel base", undeclared, adoptionLock, []string{"setting owner", "adoption_declared panel_adoption"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, cur := lockOf(t, tt.base), lockOf(t, tt.cur)
			changed, a := adopt(base, cur, LockChanges(base, cur))
			assert.Equal(t, tt.changed, keys(changed))
			if tt.covered == nil {
				assert.Nil(t, a)
				return
			}
			require.NotNil(t, a)
			assert.Equal(t, tt.covered, keys(a.Covered))
			assert.Equal(t, "ADR-0028", a.Reason)
			assert.Equal(t, []string{"groundedness"}, a.CarriedOver)
		})
	}
}

func TestCheckLockAgainstGit(t *testing.T) {
	ctx := context.Background()
	r := newGitRepo(t)
	r.write("README", "x\n")
	r.commit("first", "README")
	lockPath := r.write("eval/lock.json", baseLock)
	r.commit("freeze the constants", "eval/lock.json")
	r.git("branch", "base")
	// The PR lowers the threshold and changes a construct.
	changed := strings.Replace(strings.Replace(baseLock, `"min_kappa": 0.6`, `"min_kappa": 0.3`, 1), `"support"`, `"relevance"`, 1)
	r.write("eval/lock.json", changed)
	r.commit("relax", "eval/lock.json")
	cur, err := labelfile.ReadLock([]byte(changed), lockPath)
	require.NoError(t, err)
	relaxed := []LockChange{
		{Code: LockSetting, Key: "min_kappa", From: "0.6", To: "0.3"},
		{Code: LockSetting, Key: "dimensions.groundedness.construct", From: "support", To: "relevance"},
	}

	tests := []struct {
		name string
		ref  string
		want []LockChange
	}{
		{"HEAD~1", "HEAD~1", relaxed},
		{"branch", "base", relaxed},
		{"same commit", "main", nil},
		{"absent at the ref", "HEAD~2", []LockChange{{Code: LockNewFile, Ref: "HEAD~2", Path: "eval/lock.json"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc, err := CheckLock(ctx, GitRepos{}, lockPath, tt.ref, cur)
			require.NoError(t, err)
			assert.Equal(t, tt.ref, lc.Base)
			assert.Equal(t, tt.want, lc.Changed)
		})
	}

	// Run from another working directory with a relative path: the repository is the
	// one containing the lock, the path is taken relative to its top level.
	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(filepath.Join(r.dir, "eval"))
	lc, err := CheckLock(ctx, GitRepos{}, "lock.json", "base", cur)
	require.NoError(t, err)
	assert.Len(t, lc.Changed, 2)
	t.Chdir(wd)

	for _, ref := range []string{"nope", "HEAD~9", "--output=x", ""} {
		_, err := CheckLock(ctx, GitRepos{}, lockPath, ref, cur)
		var ie *InputError
		require.ErrorAs(t, err, &ie, "ref %q", ref)
	}

	// A copy at the ref that is not a valid lock is a change.
	r.write("eval/lock.json", "{not json\n")
	r.commit("break", "eval/lock.json")
	lc, err = CheckLock(ctx, GitRepos{}, lockPath, "HEAD", cur)
	require.NoError(t, err)
	require.Len(t, lc.Changed, 1)
	assert.Equal(t, LockInvalid, lc.Changed[0].Code)
	assert.Equal(t, "HEAD", lc.Changed[0].Ref)
	assert.Contains(t, lc.Changed[0].Detail, "HEAD:eval/lock.json:1: malformed JSON")

	// Outside any repository: an input error.
	outside := filepath.Join(t.TempDir(), "lock.json")
	require.NoError(t, os.WriteFile(outside, []byte(baseLock), 0o644))
	_, err = CheckLock(ctx, GitRepos{}, outside, "HEAD", cur)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, ie.Msg, "is not inside a git repository")
}

func TestCheckGitAnchoring(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		setup  func(r *gitRepo)
		ok     bool
		reason string
	}{
		{"labels committed before the judge scores", (*gitRepo).labelsThenJudge, true, ""},
		{"labels changed after the judge scores", func(r *gitRepo) {
			r.labelsThenJudge()
			r.save("relabel after seeing the judge", "human.jsonl", "h2\n")
		}, false, "is not an ancestor of the one that last changed the judge scores"},
		{"both in one commit", func(r *gitRepo) {
			r.save("both", "human.jsonl", "h\n", "judge.jsonl", "j\n")
		}, false, "were last changed in the same commit"},
		{"labels merged from a branch the judge run did not see", func(r *gitRepo) {
			r.merged("side", func() { r.save("labels", "human.jsonl", "h\n") }, func() { r.save("judge run", "judge.jsonl", "j\n") })
		}, false, "is not an ancestor of the one that last changed the judge scores"},
		{"uncommitted label edits", func(r *gitRepo) {
			r.labelsThenJudge()
			r.write("human.jsonl", "edited\n")
		}, false, "the human labels file human.jsonl has uncommitted changes"},
		{"executable bit set on the labels, content unchanged", func(r *gitRepo) {
			r.labelsThenJudge()
			require.NoError(t, os.Chmod(filepath.Join(r.dir, "human.jsonl"), 0o755))
		}, false, "the human labels file human.jsonl has uncommitted changes"},
		{"labels deleted in HEAD, back as an untracked file", func(r *gitRepo) {
			r.labelsThenJudge()
			r.git("rm", "-q", "--cached", "human.jsonl")
			r.git("commit", "-q", "-m", "untrack")
		}, false, "the human labels file human.jsonl has uncommitted changes"},
		{"labels committed, then replaced by a FIFO (read from a pipe: never opened again)", func(r *gitRepo) {
			r.labelsThenJudge()
			p := filepath.Join(r.dir, "human.jsonl")
			require.NoError(t, os.Remove(p))
			unixtest.Mkfifo(t, p, 0o644)
		}, false, "the human labels file human.jsonl has uncommitted changes"},
		{"labels never committed", func(r *gitRepo) {
			r.save("root", "README", "x\n")
			r.save("judge run", "judge.jsonl", "j\n")
			r.write("human.jsonl", "h\n")
		}, false, "the human labels file human.jsonl has no commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newGitRepo(t)
			tt.setup(r)
			// git itself agrees on the commits and on the changes.
			st := r.git("status", "--porcelain", "--", "human.jsonl")
			if strings.Contains(tt.reason, "human.jsonl has uncommitted") {
				require.NotEmpty(t, st, "git status sees the change")
			}
			ga, err := CheckGitAnchoring(ctx, GitRepos{}, filepath.Join(r.dir, "human.jsonl"), filepath.Join(r.dir, "judge.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, tt.ok, ga.OK, "%v", gatetable.Reason(ga.Findings))
			if ga.HumanCommit != "" {
				assert.Equal(t, r.git("log", "-1", "--format=%H", "--", "human.jsonl"), ga.HumanCommit)
			}
			if tt.ok {
				assert.Empty(t, gatetable.Reason(ga.Findings))
				assert.Len(t, ga.HumanCommit, 40)
				assert.Len(t, ga.JudgeCommit, 40)
				assert.NotEqual(t, ga.HumanCommit, ga.JudgeCommit)
				return
			}
			assert.Contains(t, gatetable.Reason(ga.Findings), tt.reason)
		})
	}

	// Files in two different repositories cannot be compared: input error.
	a, b := newGitRepo(t), newGitRepo(t)
	_, err := CheckGitAnchoring(ctx, GitRepos{}, a.write("human.jsonl", "h\n"), b.write("judge.jsonl", "j\n"))
	var ie *InputError
	require.ErrorAs(t, err, &ie)
}

// A shallow clone (actions/checkout's default depth 1) has only its boundary
// commit: both files were last changed there as far as git (and this reader) can
// tell, so anchoring fails with git's reason and says why; a ref that was not
// fetched is unknown, with the fix.
func TestGitGuardsInShallowClone(t *testing.T) {
	ctx := context.Background()
	r := newGitRepo(t)
	r.labelsThenJudge()
	r.git("branch", "base", "HEAD~1")
	clone := filepath.Join(t.TempDir(), "clone")
	r.git("clone", "-q", "--depth", "1", "file://"+r.dir, clone)
	c := &gitRepo{t: t, dir: clone}

	ga, err := CheckGitAnchoring(ctx, GitRepos{}, filepath.Join(clone, "human.jsonl"), filepath.Join(clone, "judge.jsonl"))
	require.NoError(t, err)
	assert.False(t, ga.OK)
	head := c.git("rev-parse", "HEAD")
	assert.Equal(t, c.git("log", "-1", "--format=%H", "--", "human.jsonl"), ga.HumanCommit)
	assert.Equal(t, head, ga.HumanCommit)
	assert.Equal(t, head, ga.JudgeCommit)
	reasons := gatetable.Reason(ga.Findings)
	assert.Contains(t, reasons, "were last changed in the same commit")
	assert.Contains(t, reasons, "is its boundary")
	assert.Contains(t, reasons, "fetch-depth: 0")

	cur, err := labelfile.ReadLock([]byte(baseLock), "lock.json")
	require.NoError(t, err)
	_, err = CheckLock(ctx, GitRepos{}, filepath.Join(clone, "lock.json"), "origin/base", cur)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, ie.Msg, `unknown git ref "origin/base"`)
	assert.Contains(t, ie.Msg, "shallow clone")
	lc, err := CheckLock(ctx, GitRepos{}, filepath.Join(clone, "lock.json"), "origin/main", cur)
	require.NoError(t, err)
	assert.Empty(t, lc.Changed)
}

// A linked worktree (.git is a file) reads its own HEAD and the shared objects.
func TestGitGuardsInWorktree(t *testing.T) {
	ctx := context.Background()
	r := newGitRepo(t)
	r.labelsThenJudge()
	r.git("gc", "-q")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "pr", wt)
	w := &gitRepo{t: t, dir: wt}
	w.write("lock.json", strings.Replace(baseLock, `"min_kappa": 0.6`, `"min_kappa": 0.2`, 1))
	w.commit("relax", "lock.json")

	cur, err := labelfile.ReadLock([]byte(strings.Replace(baseLock, `"min_kappa": 0.6`, `"min_kappa": 0.2`, 1)), "lock.json")
	require.NoError(t, err)
	lc, err := CheckLock(ctx, GitRepos{}, filepath.Join(wt, "lock.json"), "main", cur)
	require.NoError(t, err)
	assert.Equal(t, []LockChange{{Code: LockSetting, Key: "min_kappa", From: "0.6", To: "0.2"}}, lc.Changed)
	ga, err := CheckGitAnchoring(ctx, GitRepos{}, filepath.Join(wt, "human.jsonl"), filepath.Join(wt, "judge.jsonl"))
	require.NoError(t, err)
	assert.True(t, ga.OK, "%v", gatetable.Reason(ga.Findings))
	assert.Equal(t, w.git("log", "-1", "--format=%H", "--", "judge.jsonl"), ga.JudgeCommit)

	// A cancelled context stops the walk.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = CheckGitAnchoring(cctx, GitRepos{}, filepath.Join(wt, "human.jsonl"), filepath.Join(wt, "judge.jsonl"))
	require.ErrorIs(t, err, context.Canceled)
}
