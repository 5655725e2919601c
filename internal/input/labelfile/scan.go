package labelfile

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// labelScanner decodes the lines of a labels file without a tree: the jsonpos
// scanner (duplicate keys refused) straight into a Label, its strings interned
// (dimension, construct: a few distinct values) or, for the case id, a view of
// the line that Labels.add copies. It only accepts a line that is a valid label; for any other line
// the caller falls back to parseLabelLine, whose messages (file:line: what is
// wrong) are the reader's, so every error stays word for word what it was.
type labelScanner struct {
	s      jsonpos.Scanner
	tmp    []byte            // an unescaped string
	id     []byte            // the case id of the last label
	intern map[string]string // dimensions and constructs
	at     []byte            // this line's timestamp text when it was escaped
	lastAt []byte            // the last timestamp text and its value
	lastT  time.Time
	last   [2]string // the last dimension and construct
}

const (
	maxInterned = 4096
)

// scan decodes b (one line, not blank) into l, reporting whether it is a valid
// label (lock checks aside).
func (sc *labelScanner) scan(b []byte, file string, line int, side LabelSide, l *Label) bool {
	*l = Label{File: file, Line: line, Side: side}
	s := &sc.s
	s.Reset(b)
	i := s.WS(0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = s.WS(i + 1)
	if i < len(b) && b[i] == '}' {
		return false // no fields
	}
	timeKey := side.timeKey()
	var at []byte // a view of the line or of sc.at
	hasAt := false
	s.OpenObject()
	defer s.CloseObject()
	for {
		key, v, err := s.Key(i)
		if err != nil || v >= len(b) {
			return false
		}
		switch string(key) {
		case "case_id", "dimension", "construct", RaterKey:
			if string(key) == RaterKey && side == JudgeSide {
				return false
			}
			str, end, ok := sc.str(v)
			if !ok {
				return false
			}
			switch string(key) {
			case "case_id":
				if sc.unquoted(str) {
					// An escaped id is in sc.tmp, which the next string overwrites.
					sc.id = append(sc.id[:0], str...)
					str = sc.id
				}
				l.CaseID = unsafe.String(unsafe.SliceData(str), len(str)) //nolint:gosec // G103: a view of the line (or sc.id), valid until the next scan; Labels.add copies it
			case "dimension":
				l.Dimension = sc.internedAs(0, str)
			case RaterKey:
				if len(str) == 0 {
					return false
				}
				l.Rater = sc.interned(str)
				if !raterIDNormal(l.Rater) {
					return false // the tree parser says what is wrong
				}
			default:
				l.Construct = sc.internedAs(1, str)
			}
			i = end
		case timeKey:
			str, end, ok := sc.str(v)
			if !ok {
				return false
			}
			if sc.unquoted(str) {
				sc.at = append(sc.at[:0], str...)
				str = sc.at
			}
			at, hasAt, i = str, true, end
		case "score":
			if c := b[v]; c != '-' && (c < '0' || c > '9') {
				return false
			}
			end, f, ok, err := s.NumberValue(v)
			if err != nil || !ok || f < 0 || f > 1 {
				return false
			}
			l.Score, l.HasScore, i = f, true, end
		case "bin":
			if side == JudgeSide {
				return false
			}
			if c := b[v]; c != '-' && (c < '0' || c > '9') {
				return false
			}
			end, f, ok, err := s.NumberValue(v)
			if err != nil || !ok || f < 0 || f != math.Trunc(f) || f > 1<<20 {
				return false
			}
			l.Bin, l.HasBin, i = int(f), true, end
		case AdjudicationKey:
			return false // rare: the tree parser reads it
		default:
			if raterLikeKey(string(key)) {
				return false
			}
			if i, err = s.Skip(v, 1); err != nil {
				return false
			}
		}
		var done bool
		if i, done, err = s.Next(i, '}', "after object value"); err != nil {
			return false
		}
		if done {
			break
		}
	}
	if i = s.WS(i); i < len(b) {
		return false
	}
	if l.CaseID == "" || l.Dimension == "" || l.Construct == "" || !hasAt || l.HasScore == l.HasBin && (l.HasScore || side == HumanSide) ||
		side == JudgeSide && !l.HasScore {
		return false
	}
	for _, v := range []string{l.CaseID, l.Dimension, l.Construct} {
		if strings.TrimSpace(v) == "" {
			return false
		}
	}
	if l.Rater != "" && strings.TrimSpace(l.Rater) == "" {
		return false
	}
	if strings.TrimSpace(string(at)) == "" {
		return false
	}
	if string(at) != string(sc.lastAt) || sc.lastAt == nil {
		t, err := time.Parse(time.RFC3339Nano, string(at))
		if err != nil {
			return false
		}
		sc.lastAt, sc.lastT = append(sc.lastAt[:0], at...), t
	}
	l.At = sc.lastT
	return true
}

// str decodes the string value at v: its bytes (valid until the next call) and
// the offset after it; ok is false when the value is not a string.
func (sc *labelScanner) str(v int) ([]byte, int, bool) {
	b := sc.s.B
	if b[v] != '"' {
		return nil, 0, false
	}
	end, esc, err := sc.s.String(v)
	if err != nil {
		return nil, 0, false
	}
	if !esc {
		return b[v+1 : end-1], end, true
	}
	sc.tmp = jsonpos.AppendUnquoted(sc.tmp[:0], b[v+1:end-1])
	return sc.tmp, end, true
}

// internedAs is interned(b), remembering the last string of field (0:
// dimension, 1: construct): labels mostly repeat the one before.
func (sc *labelScanner) internedAs(field int, b []byte) string {
	if s := sc.last[field]; s == string(b) && s != "" {
		return s
	}
	s := sc.interned(b)
	sc.last[field] = s
	return s
}

// unquoted reports whether str (from str) is the unquoted copy in sc.tmp
// rather than a view of the line.
func (sc *labelScanner) unquoted(str []byte) bool {
	return len(str) > 0 && len(sc.tmp) > 0 && unsafe.SliceData(str) == unsafe.SliceData(sc.tmp) //nolint:gosec // G103: compares two pointers, reads nothing
}

// interned returns b as a string shared by every label that has the same one.
func (sc *labelScanner) interned(b []byte) string {
	if s, ok := sc.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if sc.intern == nil {
		sc.intern = make(map[string]string)
	}
	if len(sc.intern) < maxInterned {
		sc.intern[s] = s
	}
	return s
}

// firstDuplicate finds, among ls (in line order), the label that repeats the
// (case id, dimension, rater, adjudication) of an earlier one at the smallest line, as a reader that
// checked each line against those before it would stop at: sort-based (16
// pointer-free bytes per label, no map of strings), the candidates of equal
// hashes adjacent after the sort and compared by their strings.
func firstDuplicate(ls *Labels) (dup, first int, ok bool) {
	if ls.Len() < 2 || ls.Increasing() || ls.increasingShortlex() {
		return 0, 0, false
	}
	type hk struct {
		h uint64
		i int
	}
	seed := maphash.MakeSeed()
	keys := make([]hk, ls.Len())
	for i := range keys {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(ls.Dimension(i))
		h.WriteByte(0)
		h.WriteString(ls.CaseID(i))
		h.WriteByte(0)
		h.WriteString(ls.Rater(i))
		if ls.Adjudication(i) {
			h.WriteByte(1)
		}
		keys[i] = hk{h.Sum64(), i}
	}
	slices.SortFunc(keys, func(a, b hk) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	dup = -1
	for a := 0; a < len(keys); {
		b := a + 1
		for b < len(keys) && keys[b].h == keys[a].h {
			b++
		}
		// Within a run of equal hashes (in index order), each label's first
		// earlier equal is its first occurrence.
		for x := a + 1; x < b; x++ {
			ix := keys[x].i
			for y := a; y < x; y++ {
				iy := keys[y].i
				if ls.CaseID(iy) == ls.CaseID(ix) && ls.Dimension(iy) == ls.Dimension(ix) && ls.Rater(iy) == ls.Rater(ix) && ls.Adjudication(iy) == ls.Adjudication(ix) {
					if dup < 0 || ix < dup {
						dup, first = ix, iy
					}
					break
				}
			}
		}
		a = b
	}
	return dup, first, dup >= 0
}

// duplicateError is the error of the first duplicate among ls, or nil.
func duplicateError(ls *Labels) error {
	d, f, ok := firstDuplicate(ls)
	if !ok {
		return nil
	}
	l := ls.Label(d)
	fl := ls.Label(f).Line
	switch {
	case l.Adjudication:
		return input.Errorf(l.File, l.Line, "duplicate adjudication by rater %q for case %q, dimension %q (first on line %d)", l.Rater, l.CaseID, l.Dimension, fl)
	case l.Rater != "":
		return input.Errorf(l.File, l.Line, "duplicate label for case %q, dimension %q, rater %q (first on line %d)", l.CaseID, l.Dimension, l.Rater, fl)
	}
	return input.Errorf(l.File, l.Line, "duplicate label for case %q, dimension %q (first on line %d)", l.CaseID, l.Dimension, fl)
}

// Increasing reports whether the case ids of each dimension come in strictly
// increasing order (as files written by case id do): then no (case id,
// dimension) repeats, and no sort is needed to know it or to pair them. Nil
// (no labels) is.
func (ls *Labels) Increasing() bool {
	if ls == nil {
		return true // no labels
	}
	if ls.increasing == 0 {
		ls.increasing = 2
		if ls.checkIncreasing() {
			ls.increasing = 1
		}
	}
	return ls.increasing == 1
}

// increasingShortlex reports whether the case ids of each dimension strictly
// increase in shortlex order (shorter first, then bytewise): c9 < c10, as
// ids numbered without padding come. Like Increasing, then no (case id,
// dimension) repeats: the duplicate check needs no sort.
func (ls *Labels) increasingShortlex() bool {
	last := make([]int, len(ls.names))
	for i := range ls.Len() {
		d := ls.dimCons.get(i) >> 16
		if d == spillCode {
			return false
		}
		if p := last[d] - 1; p >= 0 {
			a, b := ls.CaseID(p), ls.CaseID(i)
			if len(a) > len(b) || len(a) == len(b) && a >= b {
				return false
			}
		}
		last[d] = i + 1
	}
	return true
}

func (ls *Labels) checkIncreasing() bool {
	last := make([]int, len(ls.names))
	for i := range ls.Len() {
		d := ls.dimCons.get(i) >> 16
		if d == spillCode {
			return false
		}
		if p := last[d] - 1; p >= 0 && ls.CaseID(p) >= ls.CaseID(i) {
			return false
		}
		last[d] = i + 1
	}
	return true
}
