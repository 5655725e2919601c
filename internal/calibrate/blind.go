package calibrate

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/gitread"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// Blind relabelling (ADR-0028), the label-level part of --git-anchoring: every
// human label (each panel rater's, and the owner's adjudications) that is paired
// with a judge score must have been committed, with its value, before the judge
// run it is compared with was committed. "First committed" is the first commit,
// in an order where every commit comes after its parents, of HEAD's history
// whose copy of the file holds the label (case, dimension, rater, adjudication
// flag and value as given) or the judge score of that run (case, dimension,
// score and judged_at as an instant); "before" is "a strict ancestor of". A
// judge run is its judged_at: a deterministic judge that reproduces an earlier
// run's scores is a new run, anchored on the commit that brought it, not on the
// first commit that held equal scores (ADR-0028 relabels after a first run and
// compares the panel with a second one). The result is given per rater.

// BlindCode says why a label is not provably blind to the judge's score.
type BlindCode string

const (
	// BlindLabelUncommitted: no commit of HEAD's history holds the label with
	// its value (it is new or changed in the working tree).
	BlindLabelUncommitted BlindCode = "label-uncommitted"
	// BlindJudgeUncommitted: no commit holds the judge score it is paired with,
	// so nothing shows the label came first.
	BlindJudgeUncommitted BlindCode = "judge-uncommitted"
	// BlindSameCommit: the label and the judge score were first committed together.
	BlindSameCommit BlindCode = "same-commit"
	// BlindNotBefore: the label's first commit is not an ancestor of the judge
	// score's (it came after it, or on another branch).
	BlindNotBefore BlindCode = "not-before"
)

// BlindCheck is the blind-relabelling check, per rater.
type BlindCheck struct {
	Commits  int  // commits of HEAD's history read
	Versions int  // distinct versions of the two files read
	Shallow  bool // the repository is a shallow clone: history before its boundary is missing
	Raters   []RaterBlind
}

// RaterBlind is one rater's labels ("" for labels without a rater id).
type RaterBlind struct {
	Rater      string
	Labels     int // paired labels checked
	Violations []BlindViolation
}

// BlindViolation is a label that is not provably older than its judge score.
type BlindViolation struct {
	CaseID, Dimension string
	Adjudication      bool
	Code              BlindCode
	LabelCommit       string    // the label's first commit, "" when none
	JudgeCommit       string    // the first commit of the judge run it is compared with, "" when none
	JudgedAt          time.Time // that judge score's judged_at
	File              string
	Line              int
}

// OK reports whether every paired label is provably blind.
func (b *BlindCheck) OK() bool {
	for _, r := range b.Raters {
		if len(r.Violations) > 0 {
			return false
		}
	}
	return true
}

// humanKeyer is a human label's identity in every version of the file: its
// case, dimension, rater (ownerless: the rater a label without one reads as),
// adjudication flag and value as given.
func humanKeyer(ownerless string) func(*labelfile.Label) string {
	return func(l *labelfile.Label) string {
		v := "b" + strconv.Itoa(l.Bin)
		if l.HasScore {
			v = "s" + strconv.FormatFloat(l.Score, 'g', -1, 64)
		}
		return l.Dimension + "\x00" + l.CaseID + "\x00" + cmp.Or(l.Rater, ownerless) + "\x00" + strconv.FormatBool(l.Adjudication) + "\x00" + v
	}
}

// judgeKey is a judge score's identity: its case, dimension, score and run
// (judged_at as an instant, whatever its zone or format).
func judgeKey(l *labelfile.Label) string {
	return l.Dimension + "\x00" + l.CaseID + "\x00" + strconv.FormatFloat(l.Score, 'g', -1, 64) + "\x00" +
		strconv.FormatInt(l.At.Unix(), 10) + "." + strconv.Itoa(l.At.Nanosecond())
}

// ownerless is the rater a label without a rater id reads as: the owner, under
// a declared panel adoption (the single-rater labels it replaces were the
// owner's); else none.
func ownerless(lock *labelfile.Lock) string {
	if lock.Adoption != nil {
		return lock.Owner
	}
	return ""
}

// CheckBlind runs the blind-relabelling check of the human labels hs (read from
// humanPath) against the judge scores js (from judgePath) in the repository
// that holds both (opened by repos; else an *InputError). Every commit of HEAD's history is read,
// and every distinct version of the two files in it is parsed once (a version
// that is not a valid labels file holds no label).
func CheckBlind(ctx context.Context, repos Repos, humanPath, judgePath string, hls, jls *labelfile.Labels, lock *labelfile.Lock) (*BlindCheck, error) {
	repo, hrel, err := repos.Repo(ctx, humanPath)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	jrepo, jrel, err := repos.Repo(ctx, judgePath)
	if err != nil {
		return nil, err
	}
	jrepo.Close()
	if repo.Top != jrepo.Top {
		return nil, &InputError{Msg: fmt.Sprintf("--git-anchoring: %s and %s are in different git repositories", humanPath, judgePath)}
	}
	// The labels to place: each paired human label, and its judge score (as
	// Label values: the check reads every version of both files anyway).
	hs, js := hls.All(), jls.All()
	judgeOf := map[[2]string]int{}
	for i := range js {
		if _, ok := lock.Dimensions[js[i].Dimension]; ok {
			judgeOf[[2]string{js[i].Dimension, js[i].CaseID}] = i
		}
	}
	humanKey := humanKeyer(ownerless(lock))
	firstH, firstJ := map[string]int{}, map[string]int{}
	var paired []int
	for i := range hs {
		if j, ok := judgeOf[[2]string{hs[i].Dimension, hs[i].CaseID}]; ok {
			paired = append(paired, i)
			firstH[humanKey(&hs[i])] = -1
			firstJ[judgeKey(&js[j])] = -1
		}
	}
	bc := &BlindCheck{Shallow: repo.IsShallow()}
	commits, err := ancestry(ctx, repo)
	if err != nil {
		return nil, err
	}
	bc.Commits = len(commits)
	seen := map[gitread.ID]bool{}
	place := func(x int, tree gitread.ID, rel string, side labelfile.LabelSide, first map[string]int, key func(*labelfile.Label) string) error {
		e, ok, err := repo.Lookup(tree, rel)
		if err != nil {
			return repoErr(repo, err)
		}
		if !ok || e.Mode&0o170000 != 0o100000 || seen[e.ID] {
			return nil
		}
		seen[e.ID] = true
		bc.Versions++
		t, data, err := repo.Read(e.ID)
		if err != nil {
			return repoErr(repo, err)
		}
		if t != gitread.TypeBlob {
			return nil
		}
		lss, err := labelfile.ReadLabels(ctx, bytes.NewReader(data), rel, side, nil)
		if err != nil {
			return ctx.Err() // an invalid version holds no label
		}
		for i := range lss.Len() {
			l := lss.Label(i)
			if l.HasBin || l.HasScore {
				k := key(&l)
				if f, ok := first[k]; ok && f < 0 {
					first[k] = x
				}
			}
		}
		return nil
	}
	for x, c := range commits {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := place(x, c.tree, hrel, labelfile.HumanSide, firstH, humanKey); err != nil {
			return nil, err
		}
		if err := place(x, c.tree, jrel, labelfile.JudgeSide, firstJ, judgeKey); err != nil {
			return nil, err
		}
	}
	anc := map[[2]int]bool{}
	byRater := map[string]*RaterBlind{}
	for _, i := range paired {
		h := &hs[i]
		j := &js[judgeOf[[2]string{h.Dimension, h.CaseID}]]
		rb := byRater[h.Rater]
		if rb == nil {
			rb = &RaterBlind{Rater: h.Rater, Violations: []BlindViolation{}}
			byRater[h.Rater] = rb
		}
		rb.Labels++
		a, b := firstH[humanKey(h)], firstJ[judgeKey(j)]
		v := BlindViolation{CaseID: h.CaseID, Dimension: h.Dimension, Adjudication: h.Adjudication, File: h.File, Line: h.Line, JudgedAt: j.At}
		if a >= 0 {
			v.LabelCommit = commits[a].id.String()
		}
		if b >= 0 {
			v.JudgeCommit = commits[b].id.String()
		}
		switch {
		case a < 0:
			v.Code = BlindLabelUncommitted
		case b < 0:
			v.Code = BlindJudgeUncommitted
		case a == b:
			v.Code = BlindSameCommit
		case a > b:
			// Every commit comes after its parents: a later one is no ancestor.
			v.Code = BlindNotBefore
		default:
			ok, cached := anc[[2]int{a, b}]
			if !cached {
				if ok, err = repo.IsAncestor(commits[a].id, commits[b].id); err != nil {
					return nil, repoErr(repo, err)
				}
				anc[[2]int{a, b}] = ok
			}
			if ok {
				continue
			}
			v.Code = BlindNotBefore
		}
		rb.Violations = append(rb.Violations, v)
	}
	for _, rb := range byRater {
		slices.SortFunc(rb.Violations, func(a, b BlindViolation) int {
			return cmp.Or(cmp.Compare(a.Dimension, b.Dimension), cmp.Compare(a.CaseID, b.CaseID), cmp.Compare(a.Line, b.Line))
		})
		bc.Raters = append(bc.Raters, *rb)
	}
	slices.SortFunc(bc.Raters, func(a, b RaterBlind) int { return cmp.Compare(a.Rater, b.Rater) })
	if bc.Raters == nil {
		bc.Raters = []RaterBlind{}
	}
	return bc, ctx.Err()
}

type walkedCommit struct {
	id   gitread.ID
	tree gitread.ID
}

// ancestry is every commit reachable from HEAD, each after its parents (an
// iterative depth-first post-order over the parents, in their order). Empty
// when HEAD has no commit.
func ancestry(ctx context.Context, repo *gitread.Repo) ([]walkedCommit, error) {
	head, ok, err := repo.Head()
	if err != nil {
		return nil, repoErr(repo, err)
	}
	if !ok {
		return nil, nil
	}
	type frame struct {
		id      gitread.ID
		tree    gitread.ID
		parents []gitread.ID
		next    int
	}
	var out []walkedCommit
	state := map[gitread.ID]bool{} // present: visited
	open := func(id gitread.ID) (frame, error) {
		c, err := repo.Commit(id)
		if err != nil {
			return frame{}, repoErr(repo, err)
		}
		state[id] = true
		return frame{id: id, tree: c.Tree, parents: c.Parents}, nil
	}
	f, err := open(head)
	if err != nil {
		return nil, err
	}
	stack := []frame{f}
	for n := 0; len(stack) > 0; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		top := &stack[len(stack)-1]
		if top.next < len(top.parents) {
			p := top.parents[top.next]
			top.next++
			if state[p] {
				continue
			}
			f, err := open(p)
			if err != nil {
				return nil, err
			}
			stack = append(stack, f)
			continue
		}
		out = append(out, walkedCommit{top.id, top.tree})
		stack = stack[:len(stack)-1]
	}
	return out, nil
}
