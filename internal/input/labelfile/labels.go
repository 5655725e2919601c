// Package labelfile reads the inputs of `retrieval-gate calibrate`: human labels,
// LLM-judge scores and the lock file of frozen calibration constants.
package labelfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// MaxLockEdges caps the lock's bin edges (the confusion matrix is (edges+1)²).
const MaxLockEdges = 255

// LabelSide says which file a label came from.
type LabelSide int

const (
	// HumanSide is a human label: `score` (0–1) or `bin`, and `labeled_at`.
	HumanSide LabelSide = iota
	// JudgeSide is an LLM-judge score: `score` (0–1) and `judged_at`.
	JudgeSide
)

func (s LabelSide) String() string {
	if s == JudgeSide {
		return "judge"
	}
	return "human"
}

// timeKey is the timestamp field of the side.
func (s LabelSide) timeKey() string {
	if s == JudgeSide {
		return "judged_at"
	}
	return "labeled_at"
}

// Label is one line of a human-labels or judge-scores JSONL file.
type Label struct {
	File      string
	Line      int // 1-based
	Side      LabelSide
	CaseID    string
	Dimension string
	Score     float64 // valid when HasScore
	HasScore  bool
	// Bin is the bin index: given directly by a human label (`bin`), or computed
	// from Score with the lock's edges when the reader was given a lock.
	Bin       int
	HasBin    bool
	Construct string
	At        time.Time // labeled_at (human) or judged_at (judge)
	// Rater is the human label's optional rater id (`rater`), "" when absent.
	Rater string
	// Adjudication marks a human label as the owner's adjudication of a case the
	// panel disagrees on (`"adjudication": true`, which needs a rater).
	Adjudication bool
}

// Rater fields of a human label. A key that starts like one of them but is not
// one (rater_id, raters, adjudicated) is an input error, not an ignored key: a
// misspelt rater id would otherwise make every panel label a duplicate, or an
// adjudication a panel vote.
const (
	RaterKey        = "rater"
	AdjudicationKey = "adjudication"
)

// raterLikeKey reports whether key looks like a rater field without being one.
func raterLikeKey(key string) bool {
	k := strings.ToLower(key)
	return (strings.HasPrefix(k, "rater") || strings.HasPrefix(k, "adjudicat")) && key != RaterKey && key != AdjudicationKey
}

// ReadLabels reads a human-labels or judge-scores JSONL file (named file in errors).
// Blank lines are skipped; unknown keys are ignored. Every other problem is an
// *input.Error with file and line: malformed JSON, a missing or mistyped field, a score
// outside [0,1], a timestamp that is not RFC 3339, a duplicate (case_id, dimension).
// When lock is not nil, a dimension absent from the lock and a bin outside the lock's
// bins are errors too, and every label gets its Bin from the lock's edges.
//
// A cancelled ctx ends the read with ctx.Err() within moments, even while r (a pipe
// or FIFO opened with input.Open) is blocked waiting for data (see input.Reader).
func ReadLabels(ctx context.Context, r io.Reader, file string, side LabelSide, lock *Lock) (*Labels, error) {
	sc := bufio.NewScanner(input.Reader(ctx, r))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var p jsonpos.Parser
	var lsc labelScanner
	var out *Labels
	// fail returns err, or the duplicate among the labels before it (a
	// (case_id, dimension) seen before), which comes first in the file.
	fail := func(err error) (*Labels, error) {
		if derr := duplicateError(out); derr != nil {
			return nil, derr
		}
		return nil, err
	}
	line := 0
	lockDim := "" // the last dimension found in the lock ("" is in none)
	for sc.Scan() {
		line++
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, input.BOM)
		}
		if input.IsBlank(b) {
			continue
		}
		if out == nil {
			out = newLabels(file, side, capacityHint(r, len(b)))
		}
		var l Label
		if !lsc.scan(b, file, line, side, &l) {
			// Not a valid label, or not in the scanner's shape: the tree
			// parser decodes it or says what is wrong.
			var err error
			if l, err = parseLabelLine(&p, b, file, line, side); err != nil {
				if cerr := ctx.Err(); cerr != nil {
					// A read interrupted by ctx ends the scan with the partial
					// line as its last token: the error is the cancellation.
					return nil, cerr
				}
				return fail(err)
			}
		}
		if lock != nil {
			// The dimension is checked when it is not the last one found in
			// the lock (labels come grouped by dimension).
			if l.Dimension != lockDim {
				if err := lock.checkDimension(&l); err != nil {
					return fail(err)
				}
				lockDim = l.Dimension
			}
			if err := lock.checkBin(&l); err != nil {
				return fail(err)
			}
		}
		out.add(&l)
	}
	if err := sc.Err(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return fail(input.Errorf(file, line+1, "line longer than 16 MiB"))
		}
		return fail(fmt.Errorf("failed to read %s: %w", file, err))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A repeated (case_id, dimension), found by sorting instead of a map of
	// every label: the same error, at the same line, as checking each line.
	if err := duplicateError(out); err != nil {
		return nil, err
	}
	if out == nil {
		out = newLabels(file, side, 0)
	}
	out.Increasing() // known before the labels are shared
	return out, nil
}

// capacityHint guesses the number of labels of a regular file r from its size
// and the length of its first label line (taken as at least 64 bytes, so a
// short first line cannot make the guess much more than the file could hold):
// the records are sized once instead of growing by copies that leave garbage
// worth several times the labels. 16 for anything else.
func capacityHint(r io.Reader, firstLine int) int {
	f, ok := r.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return 16
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 16
	}
	n := st.Size() / int64(max(firstLine+1, 64))
	return int(min(n+n/16+16, 1<<28))
}

func parseLabelLine(p *jsonpos.Parser, b []byte, file string, line int, side LabelSide) (Label, error) {
	l := Label{File: file, Line: line, Side: side}
	v, err := p.Parse(b, line, 0)
	if err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) {
			return l, input.Errorf(file, line, "%s", se.Describe())
		}
		return l, input.Errorf(file, line, "%s", err)
	}
	if v.Kind != jsonpos.Object {
		return l, input.Errorf(file, line, "a %s label must be a JSON object, got %s", side, v.TypeName())
	}
	var perr error
	str := func(key string, val *jsonpos.Value, dst *string) {
		if val.Kind != jsonpos.String {
			perr = input.Errorf(file, line, "field %q must be a string, got %s", key, val.TypeName())
			return
		}
		*dst = val.Str
		if strings.TrimSpace(*dst) == "" {
			perr = input.Errorf(file, line, "field %q is empty", key)
		}
	}
	var at string
	for _, m := range v.Members {
		if perr != nil {
			break
		}
		key, val := m.Key, m.Value
		switch key {
		case "case_id":
			str(key, val, &l.CaseID)
		case "dimension":
			str(key, val, &l.Dimension)
		case "construct":
			str(key, val, &l.Construct)
		case side.timeKey():
			str(key, val, &at)
		case "score":
			if val.Kind != jsonpos.Number {
				perr = input.Errorf(file, line, "field \"score\" must be a number in [0,1], got %s", val.TypeName())
				break
			}
			f, ok := val.Float64(b)
			if !ok || f < 0 || f > 1 {
				perr = input.Errorf(file, line, "score %s is outside [0,1]", val.Raw(b))
				break
			}
			l.Score, l.HasScore = f, true
		case "bin":
			if side == JudgeSide {
				perr = input.Errorf(file, line, "a judge score gives \"score\", not \"bin\"")
				break
			}
			if val.Kind != jsonpos.Number {
				perr = input.Errorf(file, line, "field \"bin\" must be a non-negative integer, got %s", val.TypeName())
				break
			}
			f, ok := val.Float64(b)
			if !ok || f < 0 || f != math.Trunc(f) || f > 1<<20 {
				perr = input.Errorf(file, line, "bin %s is not a non-negative integer", val.Raw(b))
				break
			}
			l.Bin, l.HasBin = int(f), true
		case RaterKey:
			if side == JudgeSide {
				perr = input.Errorf(file, line, "a judge score has no %q (rater ids are for human labels)", key)
				break
			}
			str(key, val, &l.Rater)
			if perr == nil && !raterIDNormal(l.Rater) {
				perr = input.Errorf(file, line, "rater id %s differs from its normal form %s only by white space at its ends, format or control characters (such as U+200B) or a decomposed accent: write %s (ids that look the same would count as different raters)",
					strconv.QuoteToASCII(l.Rater), strconv.QuoteToASCII(NormalRaterID(l.Rater)), strconv.QuoteToASCII(NormalRaterID(l.Rater)))
			}
		case AdjudicationKey:
			if side == JudgeSide {
				perr = input.Errorf(file, line, "a judge score has no %q (adjudications are human labels)", key)
				break
			}
			if val.Kind != jsonpos.Bool {
				perr = input.Errorf(file, line, "field %q must be true or false, got %s", key, val.TypeName())
				break
			}
			l.Adjudication = val.Bool
		default:
			if raterLikeKey(key) {
				perr = input.Errorf(file, line, "unknown field %q: a human label's rater fields are %q (the rater id) and %q (true on the owner's adjudication)", key, RaterKey, AdjudicationKey)
			}
		}
	}
	if perr != nil {
		return l, perr
	}
	for _, req := range []struct {
		key string
		v   string
	}{{"case_id", l.CaseID}, {"dimension", l.Dimension}, {"construct", l.Construct}, {side.timeKey(), at}} {
		if req.v == "" {
			return l, input.Errorf(file, line, "%s label has no %q", side, req.key)
		}
	}
	if l.Adjudication && l.Rater == "" {
		return l, input.Errorf(file, line, "an adjudication names its rater: add %q (the owner who adjudicated)", RaterKey)
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return l, input.Errorf(file, line, "%s %q is not an RFC 3339 timestamp", side.timeKey(), at)
	}
	l.At = t
	switch {
	case l.HasScore && l.HasBin:
		return l, input.Errorf(file, line, "human label has both \"score\" and \"bin\"; give one")
	case !l.HasScore && !l.HasBin && side == HumanSide:
		return l, input.Errorf(file, line, "human label has neither \"score\" nor \"bin\"")
	case !l.HasScore && side == JudgeSide:
		return l, input.Errorf(file, line, "judge label has no \"score\"")
	}
	return l, nil
}
