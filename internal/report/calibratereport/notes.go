package calibratereport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// NoteText is the sentence of a dimension's note (calibrate.Note), as every
// report and the JSON "notes" say it. A code it does not know reads as the code.
func NoteText(n calibrate.Note) string {
	switch n.Code {
	case calibrate.NoteNoPairs:
		return "no paired cases: kappa is undefined"
	case calibrate.NoteKappaUndefined:
		return "kappa is undefined: both sides put every paired case in the same bin, so chance agreement is 1"
	case calibrate.NoteUnpaired:
		return fmt.Sprintf("%d human label(s) without a judge score and %d judge score(s) without a human label are not in n",
			n.Human, n.Judge)
	case calibrate.NoteTooManyUnpaired:
		return fmt.Sprintf(
			"%d unpaired label(s) exceed --max-unpaired %s (at most %d of the %d labelled cases): a label without its partner could hide a disagreement, so the gate fails",
			n.N, n.Spec, n.Limit, n.Of)
	case calibrate.NoteConstructMismatch:
		return fmt.Sprintf(
			"construct mismatch: the lock measures %q, the human labels declare %s and the judge scores declare %s; the two sides do not measure the same thing, so their agreement is not a valid measurement",
			n.Construct, quotedList(n.HumanConstructs), quotedList(n.JudgeConstructs))
	case calibrate.NoteBelowMinN:
		s := fmt.Sprintf("n = %d paired case(s) is below the lock's min_n %d: too few to gate on", n.N, n.Limit)
		if n.DefaultMinN {
			s = fmt.Sprintf("n = %d paired case(s) is below min_n %d (the default: the lock does not set min_n): too few to gate on", n.N, n.Limit)
		}
		if n.Gated {
			return s + ", so the gate fails"
		}
		return s + notGated
	case calibrate.NoteKappaBelow:
		wk, mk := format.Distinct(n.Value, n.Threshold)
		s := fmt.Sprintf("weighted kappa %s is below min_kappa %s", wk, mk)
		if !n.Gated {
			s += notGated
		}
		return s
	case calibrate.NoteUndefinedFails:
		return "a gated dimension with undefined kappa fails: there is no evidence of agreement"
	}
	return string(n.Code)
}

const notGated = "; the dimension is not gated, so this is reported only"

// noteTexts are the sentences of notes, never nil (the JSON "notes" is a list).
func noteTexts(notes []calibrate.Note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = NoteText(n)
	}
	return out
}

// quotedList is a side's declared constructs, each quoted, or what declares none.
func quotedList(ss []string) string {
	if len(ss) == 0 {
		return "nothing (no labels)"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// LockChangeText is the line of a change of the lock since a git ref
// (calibrate.LockChange), as every report and the JSON lock "changed" say it.
// A code it does not know reads as the code.
func LockChangeText(c calibrate.LockChange) string {
	switch c.Code {
	case calibrate.LockNewFile:
		return fmt.Sprintf("new file: %s does not exist at %s", c.Path, c.Ref)
	case calibrate.LockNotAFile:
		return fmt.Sprintf("the copy at %s is not a valid lock (%s is not a file there)", c.Ref, c.Path)
	case calibrate.LockInvalid:
		return fmt.Sprintf("the copy at %s is not a valid lock (%s)", c.Ref, c.Detail)
	case calibrate.LockSetting:
		if c.Text {
			return fmt.Sprintf("%s: %s -> %s", c.Key, quotedOrNone(c.From, c.FromDefault), quotedOrNone(c.To, c.ToDefault))
		}
		return fmt.Sprintf("%s: %s -> %s", c.Key, orDefault(c.From, c.FromDefault), orDefault(c.To, c.ToDefault))
	case calibrate.LockAdoptionDeclared:
		if c.From == labelfile.RatersSingle {
			return fmt.Sprintf("panel_adoption: declared (%s)", adoptionText(c.Reason, c.Dimensions))
		}
		return fmt.Sprintf("panel_adoption: declared (%s), but the base's raters is already %s: the adoption is the one-time move from the single-rater framing",
			adoptionText(c.Reason, c.Dimensions), orDefault(c.From, c.FromDefault))
	case calibrate.LockAdoptionRemoved:
		return fmt.Sprintf("panel_adoption: removed (%s); a recorded adoption is frozen with the lock", adoptionText(c.Reason, c.Dimensions))
	case calibrate.LockDimensionRemoved:
		return c.Key + ": removed"
	case calibrate.LockDimensionAdded:
		if c.CarriedOver {
			return fmt.Sprintf("%s: added (construct %s, gated %t, carried over)", c.Key, c.Construct, c.Gated)
		}
		return fmt.Sprintf("%s: added (construct %s, gated %t)", c.Key, c.Construct, c.Gated)
	}
	return string(c.Code)
}

// quotedOrNone is a text constant of the lock, quoted, or (none) when not set.
func quotedOrNone(v string, unset bool) string {
	if unset {
		return "(none)"
	}
	return strconv.Quote(v)
}

// adoptionText is a panel adoption's reason and carried-over dimensions.
func adoptionText(reason string, dims []string) string {
	s := "reason " + strconv.Quote(reason)
	if len(dims) > 0 {
		s += ", carrying over " + strings.Join(dims, ", ")
	}
	return s
}

// orDefault is a lock's value, marked when it is the default (not set).
func orDefault(v string, isDefault bool) string {
	if isDefault {
		return v + " (default)"
	}
	return v
}

// lockChangeTexts are the lines of changes, never nil (the JSON "changed" is a list).
func lockChangeTexts(cs []calibrate.LockChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = LockChangeText(c)
	}
	return out
}
