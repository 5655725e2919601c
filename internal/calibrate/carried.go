package calibrate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/gitread"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// Carried-over dimensions (ADR-0028): a dimension the lock declares
// `carried_over` is not part of the change under review, so its human labels
// must be exactly those at the base ref (--lock-base). A label is its case,
// rater, adjudication flag, value as given (score or bin), construct and
// labeled_at (as an instant); lines, key order and the other dimensions'
// labels are not compared. Under a declared panel adoption a label without a
// rater id is the owner's (the single-rater labels were), so the base's
// single-rater labels equal the same labels with the owner's id.

// CarriedCode is the outcome of the carried-over check of one dimension.
type CarriedCode string

const (
	// CarriedIdentical: the labels are those at the base ref.
	CarriedIdentical CarriedCode = "identical"
	// CarriedChanged: the labels of the cases in Changed differ from the base's.
	CarriedChanged CarriedCode = "changed"
	// CarriedNoBaseFile: the human labels file does not exist at the base ref.
	CarriedNoBaseFile CarriedCode = "no-base-file"
	// CarriedBaseInvalid: the base's copy is not a valid labels file (Detail).
	CarriedBaseInvalid CarriedCode = "base-invalid"
)

// CarriedOverCheck compares the carried-over dimensions' labels with a git ref.
type CarriedOverCheck struct {
	Base       string // the git ref (--lock-base)
	Path       string // the human labels file, relative to the repository's top level
	Dimensions []CarriedDimension
}

// CarriedDimension is one carried-over dimension's comparison.
type CarriedDimension struct {
	Name    string
	Code    CarriedCode
	Changed []string // case ids whose labels were added, removed or changed, sorted
	Detail  string   // CarriedBaseInvalid: the reader's error on the base's copy
	Labels  int      // the dimension's labels now
}

// OK reports whether every carried-over dimension is identical.
func (c *CarriedOverCheck) OK() bool {
	for _, d := range c.Dimensions {
		if d.Code != CarriedIdentical {
			return false
		}
	}
	return true
}

// CheckCarriedOver compares the human labels (cur, read from humanPath) of the
// lock's carried-over dimensions with the copy of humanPath at git ref base
// (its repository opened by repos). Nil
// when the lock has none. An unknown ref or a file outside a repository is an
// *InputError.
func CheckCarriedOver(ctx context.Context, repos Repos, humanPath, base string, curLabels *labelfile.Labels, lock *labelfile.Lock) (*CarriedOverCheck, error) {
	var names []string
	for _, n := range lock.DimensionNames() {
		if lock.Dimensions[n].CarriedOver {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	cur := curLabels.All() // the carried-over dimensions' labels are compared as Label values
	repo, rel, err := repos.Repo(ctx, humanPath)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	id, err := repo.ResolveCommit(base)
	if err != nil {
		var ue *gitread.UnknownRevisionError
		if errors.As(err, &ue) {
			return nil, &InputError{Msg: "--lock-base: unknown git ref " + strconv.Quote(base) + " in " + repo.Top + shallowHint(repo, ue)}
		}
		return nil, repoErr(repo, err)
	}
	c, err := repo.Commit(id)
	if err != nil {
		return nil, repoErr(repo, err)
	}
	co := &CarriedOverCheck{Base: base, Path: rel}
	e, ok, err := repo.Lookup(c.Tree, rel)
	if err != nil {
		return nil, repoErr(repo, err)
	}
	var old []labelfile.Label
	code, detail := CarriedIdentical, ""
	switch {
	case !ok || e.Mode&0o170000 != 0o100000:
		code = CarriedNoBaseFile
	default:
		t, data, err := repo.Read(e.ID)
		if err != nil {
			return nil, repoErr(repo, err)
		}
		if t != gitread.TypeBlob {
			return nil, repoErr(repo, errors.New(base+":"+rel+" is a "+t.String()))
		}
		var ols *labelfile.Labels
		ols, err = labelfile.ReadLabels(ctx, bytes.NewReader(data), base+":"+rel, labelfile.HumanSide, nil)
		old = ols.All()
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			var ie *input.Error
			if !errors.As(err, &ie) {
				return nil, err
			}
			code, detail = CarriedBaseInvalid, ie.Error()
		}
	}
	owner := ownerless(lock)
	for _, n := range names {
		d := CarriedDimension{Name: n, Code: code, Detail: detail, Changed: []string{}}
		now := labelSets(cur, n, owner)
		for _, ls := range now {
			d.Labels += len(ls)
		}
		if code == CarriedIdentical {
			d.Changed = changedCases(labelSets(old, n, owner), now)
			if len(d.Changed) > 0 {
				d.Code = CarriedChanged
			}
		}
		co.Dimensions = append(co.Dimensions, d)
	}
	return co, ctx.Err()
}

// labelSets is, per case, the sorted canonical forms of the labels of dimension
// dim (a label without a rater id read as ownerless's).
func labelSets(ls []labelfile.Label, dim, ownerless string) map[string][]string {
	out := map[string][]string{}
	for i := range ls {
		l := &ls[i]
		if l.Dimension != dim {
			continue
		}
		out[l.CaseID] = append(out[l.CaseID], canonical(l, ownerless))
	}
	for _, s := range out {
		slices.Sort(s)
	}
	return out
}

// canonical is a label's content as the carried-over check compares it.
func canonical(l *labelfile.Label, ownerless string) string {
	v := "bin " + strconv.Itoa(l.Bin)
	if l.HasScore {
		v = "score " + strconv.FormatFloat(l.Score, 'g', -1, 64)
	}
	return cmp.Or(l.Rater, ownerless) + "\x00" + strconv.FormatBool(l.Adjudication) + "\x00" + v + "\x00" + l.Construct + "\x00" + l.At.UTC().Format(time.RFC3339Nano)
}

// changedCases lists, sorted, the cases whose label sets differ.
func changedCases(old, now map[string][]string) []string {
	out := []string{}
	for id, ls := range now {
		if !slices.Equal(old[id], ls) {
			out = append(out, id)
		}
	}
	for id := range old {
		if _, ok := now[id]; !ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
