package calibrate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// readFiles reads both label files with the panel lock.
func readFiles(t *testing.T, lock *labelfile.Lock, human, judge string) (*labelfile.Labels, *labelfile.Labels) {
	t.Helper()
	hs, err := inputtest.ReadLabelsFile(context.Background(), human, labelfile.HumanSide, lock)
	require.NoError(t, err)
	js, err := inputtest.ReadLabelsFile(context.Background(), judge, labelfile.JudgeSide, lock)
	require.NoError(t, err)
	return hs, js
}

// codes is, per rater, the (case, code) of each violation.
func codes(b *BlindCheck) map[string][]string {
	out := map[string][]string{}
	for _, r := range b.Raters {
		out[r.Rater] = []string{}
		for _, v := range r.Violations {
			out[r.Rater] = append(out[r.Rater], v.CaseID+" "+string(v.Code))
		}
	}
	return out
}

func TestCheckBlind(t *testing.T) {
	ctx := context.Background()
	lock := lockOf(t, panelLock)
	r := newGitRepo(t)
	// ana labels c1 and c2 blind; the judge runs; ana's c3 label is committed
	// with the judge's scores; then bo labels c1 and ana changes c2, after the
	// judge; cy's c3 label is not committed at all.
	human := r.write("eval/human.jsonl", hl("c1", "ana", 0, "")+hl("c2", "ana", 1, ""))
	r.commit("ana labels", "eval/human.jsonl")
	judge := r.write("eval/judge.jsonl", jl("c1", "0.1")+jl("c2", "0.9")+jl("c3", "0.5"))
	r.write("eval/human.jsonl", hl("c1", "ana", 0, "")+hl("c2", "ana", 1, "")+hl("c3", "ana", 1, ""))
	r.commit("judge run", "eval/judge.jsonl", "eval/human.jsonl")
	r.write("eval/human.jsonl", hl("c1", "ana", 0, "")+hl("c2", "ana", 2, "")+hl("c3", "ana", 1, "")+hl("c1", "bo", 1, ""))
	r.commit("bo labels, ana relabels c2", "eval/human.jsonl")
	r.write("eval/human.jsonl", hl("c1", "ana", 0, "")+hl("c2", "ana", 2, "")+hl("c3", "ana", 1, "")+hl("c1", "bo", 1, "")+hl("c3", "cy", 1, "")+
		hl("c9", "cy", 1, "")) // c9 has no judge score: not checked

	hs, js := readFiles(t, lock, human, judge)
	b, err := CheckBlind(ctx, GitRepos{}, human, judge, hs, js, lock)
	require.NoError(t, err)
	assert.False(t, b.OK())
	assert.Equal(t, 3, b.Commits)
	assert.Equal(t, map[string][]string{
		"ana": {"c2 not-before", "c3 same-commit"},
		"bo":  {"c1 not-before"},
		"cy":  {"c3 label-uncommitted"},
	}, codes(b))
	assert.Equal(t, []int{3, 1, 1}, []int{b.Raters[0].Labels, b.Raters[1].Labels, b.Raters[2].Labels})
	v := b.Raters[0].Violations[0]
	assert.Equal(t, r.git("rev-parse", "HEAD"), v.LabelCommit, "ana's c2 as it is now was first committed by HEAD")
	assert.Equal(t, r.git("rev-parse", "HEAD~1"), v.JudgeCommit)
	assert.Equal(t, 2, v.Line)

	// The gate: blind-labels fails with the count and the raters.
	res, err := Evaluate(ctx, Input{Lock: lock, Human: hs, Judge: js})
	require.NoError(t, err)
	res.Blind = b
	res.Finish()
	g := res.Gates[len(res.Gates)-1]
	assert.Equal(t, "blind-labels", g.Name)
	assert.Equal(t, "fail", string(g.Status))
	assert.Equal(t, int64(4), g.Why[0].N)
	assert.Equal(t, int64(5), g.Why[0].M)
	assert.Equal(t, []string{"ana", "bo", "cy"}, g.Why[0].Names)

	// An uncommitted change to a judge score: its labels cannot be shown first.
	r.write("eval/judge.jsonl", jl("c1", "0.2")+jl("c2", "0.9")+jl("c3", "0.5"))
	hs, js = readFiles(t, lock, human, judge)
	b, err = CheckBlind(ctx, GitRepos{}, human, judge, hs, js, lock)
	require.NoError(t, err)
	assert.Equal(t, []string{"c1 judge-uncommitted", "c2 not-before", "c3 same-commit"}, codes(b)["ana"])
}

func TestCheckBlindPasses(t *testing.T) {
	ctx := context.Background()
	lock := lockOf(t, panelLock)
	r := newGitRepo(t)
	// Both raters label on a branch, merged; the judge runs after the merge;
	// the owner adjudicates on a later commit, before a later judge run.
	r.merged("labels", func() {
		r.save("panel", "human.jsonl", hl("c1", "ana", 0, "")+hl("c1", "bo", 2, "")+hl("c2", "ana", 1, "")+hl("c2", "bo", 1, ""))
	}, func() { r.save("unrelated", "other", "y\n") })
	human := filepath.Join(r.dir, "human.jsonl")
	r.write("human.jsonl", hl("c1", "ana", 0, "")+hl("c1", "bo", 2, "")+hl("c2", "ana", 1, "")+hl("c2", "bo", 1, "")+hl("c1", "owner", 2, `, "adjudication": true`))
	r.commit("adjudicate", "human.jsonl")
	judge := r.write("judge.jsonl", jl("c1", "0.9")+jl("c2", "0.5"))
	r.commit("judge run", "judge.jsonl")
	hs, js := readFiles(t, lock, human, judge)
	b, err := CheckBlind(ctx, GitRepos{}, human, judge, hs, js, lock)
	require.NoError(t, err)
	assert.True(t, b.OK(), "%v", codes(b))
	assert.Equal(t, map[string][]string{"ana": {}, "bo": {}, "owner": {}}, codes(b))

	// A judge run on main in parallel with labels on a branch: the labels'
	// commit is no ancestor of the judge's, whatever the walk's order.
	r2 := newGitRepo(t)
	r2.merged("labels", func() { r2.save("labels", "human.jsonl", hl("c1", "ana", 0, "")) }, func() { r2.save("judge", "judge.jsonl", jl("c1", "0.1")) })
	human2, judge2 := filepath.Join(r2.dir, "human.jsonl"), filepath.Join(r2.dir, "judge.jsonl")
	hs, js = readFiles(t, lock, human2, judge2)
	b, err = CheckBlind(ctx, GitRepos{}, human2, judge2, hs, js, lock)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"ana": {"c1 not-before"}}, codes(b))
}

// TestCheckBlindDeterministicJudge: ADR-0028's order with a judge that
// reproduces its scores. The panel relabels after judge run 1 and is compared
// with run 2: each label anchors on the run it is compared with (judged_at),
// not on the first commit that held an equal score (issue 34 item 10).
func TestCheckBlindDeterministicJudge(t *testing.T) {
	ctx := context.Background()
	lock := lockOf(t, panelLock)
	at := func(l, when string) string { return strings.Replace(l, "2026-10-01T09:00:00Z", when, 1) }
	run := func(when string) string {
		return at(jl("c1", "0.1"), when) + at(jl("c2", "0.9"), when)
	}
	r := newGitRepo(t)
	r.save("owner's labels", "human.jsonl", hl("c1", "", 0, "")+hl("c2", "", 2, ""))
	judge := r.write("judge.jsonl", run("2026-08-10T09:00:00Z"))
	r.commit("judge run 1", "judge.jsonl")
	human := r.write("human.jsonl", hl("c1", "ana", 0, "")+hl("c1", "bo", 0, "")+hl("c2", "ana", 2, "")+hl("c2", "bo", 1, "")+
		hl("c2", "owner", 2, `, "adjudication": true`))
	r.commit("the panel relabels", "human.jsonl")
	r.write("judge.jsonl", run("2026-09-20T09:00:00Z"))
	r.commit("judge run 2, the same scores", "judge.jsonl")
	hs, js := readFiles(t, lock, human, judge)
	b, err := CheckBlind(ctx, GitRepos{}, human, judge, hs, js, lock)
	require.NoError(t, err)
	assert.True(t, b.OK(), "%v", codes(b))

	// Run 2 keeps c1's score from run 1 (its judged_at): c1's labels followed
	// that run. Rewriting run 1's judged_at in another zone is the same run.
	r.write("judge.jsonl", at(jl("c1", "0.1"), "2026-08-10T11:00:00+02:00")+at(jl("c2", "0.9"), "2026-09-20T09:00:00Z"))
	r.commit("c1 as run 1 judged it", "judge.jsonl")
	hs, js = readFiles(t, lock, human, judge)
	b, err = CheckBlind(ctx, GitRepos{}, human, judge, hs, js, lock)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"ana": {"c1 not-before"}, "bo": {"c1 not-before"}, "owner": {}}, codes(b))
	v := b.Raters[0].Violations[0]
	assert.Equal(t, r.git("rev-parse", "HEAD~3"), v.JudgeCommit, "run 1's commit")
	assert.Equal(t, r.git("rev-parse", "HEAD~2"), v.LabelCommit)
	assert.True(t, v.JudgedAt.Equal(time.Date(2026, 8, 10, 9, 0, 0, 0, time.UTC)), "%v", v.JudgedAt)
}

func TestCheckCarriedOver(t *testing.T) {
	ctx := context.Background()
	lockSrc := `{"dimensions": {"groundedness": {"construct": "support", "gated": true, "carried_over": true},
 "faithfulness": {"construct": "contradiction-only", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6}`
	lock := lockOf(t, lockSrc)
	g := func(id string, score string, extra string) string {
		return `{"case_id": "` + id + `", "dimension": "groundedness", "score": ` + score + `, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z"` + extra + "}\n"
	}
	f := func(id string, bin int) string {
		return `{"case_id": "` + id + `", "dimension": "faithfulness", "bin": ` + string(rune('0'+bin)) + `, "construct": "contradiction-only", "labeled_at": "2026-09-01T09:00:00Z"}` + "\n"
	}
	r := newGitRepo(t)
	human := r.write("human.jsonl", g("c1", "0.5", "")+g("c2", "0.9", "")+g("c3", "0.1", "")+f("c1", 0))
	r.commit("labels", "human.jsonl")
	read := func(content string) *labelfile.Labels {
		r.write("human.jsonl", content)
		hs, err := inputtest.ReadLabelsFile(ctx, human, labelfile.HumanSide, lock)
		require.NoError(t, err)
		return hs
	}
	tests := []struct {
		name    string
		content string
		code    CarriedCode
		changed []string
	}{
		{"identical", g("c1", "0.5", "") + g("c2", "0.9", "") + g("c3", "0.1", "") + f("c1", 0), CarriedIdentical, []string{}},
		{"reordered, reformatted, other dimension relabelled", f("c1", 2) + f("c2", 1) + g("c3", "0.10", "") + g("c2", "9e-1", "") +
			strings.Replace(g("c1", "0.5", ""), "09:00:00Z", "10:00:00+01:00", 1), CarriedIdentical, []string{}},
		{"changed, added, removed", g("c1", "0.6", "") + g("c3", "0.1", "") + g("c4", "1", "") + f("c1", 0), CarriedChanged, []string{"c1", "c2", "c4"}},
		{"a rater added to a case", g("c1", "0.5", "") + g("c2", "0.9", "") + g("c3", "0.1", "") + g("c3", "0.1", `, "rater": "bo"`), CarriedChanged, []string{"c3"}},
		{"relabelled at another time", g("c1", "0.5", "") + g("c2", "0.9", "") + strings.Replace(g("c3", "0.1", ""), "09:00", "09:01", 1), CarriedChanged, []string{"c3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			co, err := CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", read(tt.content), lock)
			require.NoError(t, err)
			require.Len(t, co.Dimensions, 1)
			d := co.Dimensions[0]
			assert.Equal(t, "groundedness", d.Name)
			assert.Equal(t, tt.code, d.Code)
			assert.Equal(t, tt.changed, d.Changed)
			assert.Equal(t, tt.code == CarriedIdentical, co.OK())
		})
	}
	// Absent or invalid at the ref.
	r.git("mv", "human.jsonl", "h2.jsonl")
	r.git("commit", "-q", "-m", "move")
	co, err := CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", read(g("c1", "0.5", "")), lock)
	require.NoError(t, err)
	assert.Equal(t, CarriedNoBaseFile, co.Dimensions[0].Code)
	r.write("human.jsonl", "{not json\n")
	r.commit("broken", "human.jsonl")
	co, err = CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", read(g("c1", "0.5", "")), lock)
	require.NoError(t, err)
	assert.Equal(t, CarriedBaseInvalid, co.Dimensions[0].Code)
	assert.Contains(t, co.Dimensions[0].Detail, "HEAD:human.jsonl:1:")
	// Under a declared panel adoption the base's single-rater labels, without
	// a rater id, are the owner's: the same labels with the owner's id are
	// unchanged; without the adoption they differ.
	adopted := lockOf(t, strings.Replace(lockSrc, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat",
 "panel_adoption": {"reason": "ADR-0028", "carried_over": ["groundedness"]}`, 1))
	r.save("single-rater labels", "human.jsonl", g("c1", "0.5", "")+g("c2", "0.9", ""))
	owned := g("c1", "0.5", `, "rater": "pat"`) + g("c2", "0.9", `, "rater": "pat"`)
	co, err = CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", read(owned), adopted)
	require.NoError(t, err)
	assert.Equal(t, CarriedIdentical, co.Dimensions[0].Code)
	co, err = CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", read(g("c1", "0.5", `, "rater": "pat"`)+g("c2", "0.9", `, "rater": "ana"`)), adopted)
	require.NoError(t, err)
	assert.Equal(t, []string{"c2"}, co.Dimensions[0].Changed, "another rater's label is not the owner's")
	co, err = CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", read(owned), lockOf(t, strings.Replace(lockSrc, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat"`, 1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"c1", "c2"}, co.Dimensions[0].Changed, "without the adoption a rater id is a change")

	// No carried-over dimension: no check.
	co, err = CheckCarriedOver(ctx, GitRepos{}, human, "HEAD", nil, lockOf(t, strings.Replace(lockSrc, `, "carried_over": true`, "", 1)))
	require.NoError(t, err)
	assert.Nil(t, co)
	// An unknown ref is an input error.
	_, err = CheckCarriedOver(ctx, GitRepos{}, human, "nope", nil, lock)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
}
