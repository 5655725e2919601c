package baseline

import (
	"math"
	"unsafe"

	"github.com/valyala/fastjson/fastfloat"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// fastRecord reads a case line in one pass (issue 23): it validates the line
// and fills the record as the jsonpos check, fastjson and recordOf together
// would, for the lines every writer of this package writes: one object of the
// known keys, each at most once, strings without escapes, scores of registered
// measures only, no nulls. For anything else ok is false and the caller takes
// the general path (which reports what is wrong); ok true implies that path
// would accept the line and compute the same record, hashes and case line
// (the differential FuzzFastRecord checks it). caseLine is the "line" member
// (-1 when absent). d gets the raw texts of the id, gold and top k (views of
// line) for the line's detail (appendDetail).
func fastRecord(s *jsonpos.Scanner, line []byte, rec *record, hs []uint64, gold *[][]byte, d *detailSpans) (out []uint64, caseLine int, ok bool) {
	const (
		kID = 1 << iota
		kLine
		kLocale
		kType
		kQuery
		kGold
		kMust
		kScores
		kRank
		kTop
	)
	s.Reset(line)
	b := line
	i := s.WS(0)
	if i >= len(b) || b[i] != '{' {
		return hs, 0, false
	}
	i = s.WS(i + 1)
	*rec = record{}
	*gold = (*gold)[:0]
	*d = detailSpans{}
	caseLine = -1
	var id []byte
	seen := 0
	for {
		key, end, ok := plainString(s, i)
		if !ok {
			return hs, 0, false
		}
		var err error
		if i, err = s.Colon(end); err != nil {
			return hs, 0, false
		}
		var bit int
		vs := i // the value's start
		switch string(key) {
		case "id":
			bit = kID
			if id, i, ok = plainString(s, i); !ok || len(id) == 0 {
				return hs, 0, false
			}
		case "line":
			bit = kLine
			if caseLine, i, ok = plainUint(b, i); !ok {
				return hs, 0, false
			}
		case "locale", "type", "query":
			bit = kLocale
			switch key[0] {
			case 't':
				bit = kType
			case 'q':
				bit = kQuery
			}
			if _, i, ok = plainString(s, i); !ok {
				return hs, 0, false
			}
		case "gold", "must_cite_one_of":
			bit = kGold
			if key[0] == 'm' {
				bit = kMust
			}
			if i >= len(b) || b[i] != '[' {
				return hs, 0, false
			}
			i = s.WS(i + 1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			for {
				var g []byte
				if g, i, ok = plainString(s, i); !ok {
					return hs, 0, false
				}
				*gold = append(*gold, g)
				var done bool
				if i, done, err = s.Next(i, ']', "in gold"); err != nil {
					return hs, 0, false
				}
				if done {
					break
				}
			}
		case "scores":
			bit = kScores
			if i, ok = fastScores(s, i, rec); !ok {
				return hs, 0, false
			}
		case "rank":
			bit = kRank
			var n int
			if n, i, ok = plainUint(b, i); !ok || n > math.MaxInt32 {
				return hs, 0, false
			}
			rec.setRank(n)
		case "top":
			bit = kTop
			if i >= len(b) || b[i] != '[' {
				return hs, 0, false
			}
			i = s.WS(i + 1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			for n := 0; ; n++ {
				var t []byte
				if t, i, ok = plainString(s, i); !ok {
					return hs, 0, false
				}
				if n < maxTopDepth {
					hs = append(hs, idHashBytes(t))
				}
				var done bool
				if i, done, err = s.Next(i, ']', "in top"); err != nil {
					return hs, 0, false
				}
				if done {
					break
				}
			}
		default:
			return hs, 0, false
		}
		if seen&bit != 0 {
			return hs, 0, false
		}
		seen |= bit
		switch bit {
		case kID:
			d.id = b[vs:i]
		case kGold, kMust:
			d.gold = b[vs:i]
		case kTop:
			d.top = b[vs:i]
		}
		var done bool
		if i, done, err = s.Next(i, '}', "in case"); err != nil {
			return hs, 0, false
		}
		if done {
			if s.WS(i) != len(b) {
				return hs, 0, false
			}
			break
		}
	}
	if seen&kID == 0 || seen&(kGold|kMust) == kGold|kMust {
		return hs, 0, false
	}
	rec.id, rec.gold = idHashBytes(id), goldHashBytes(*gold)
	rec.hasTop = seen&(kRank|kTop) != 0
	return hs, caseLine, true
}

// plainString reads the string at i when it needs no unescaping: its content
// and the offset after it.
func plainString(s *jsonpos.Scanner, i int) ([]byte, int, bool) {
	b := s.B
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end, esc, err := s.String(i)
	if err != nil || esc {
		return nil, 0, false
	}
	return b[i+1 : end-1], end, true
}

// plainUint reads a JSON integer of at most 18 digits without sign, fraction
// or exponent at i.
func plainUint(b []byte, i int) (int, int, bool) {
	j := i
	var n int
	for j < len(b) && b[j]-'0' < 10 {
		n = n*10 + int(b[j]-'0')
		j++
	}
	if d := j - i; d == 0 || d > 18 || d > 1 && b[i] == '0' {
		return 0, 0, false
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, 0, false
	}
	return n, j, true
}

// fastScores reads the scores object at i into rec: registered measures only,
// each once, finite numbers in the measure's range, converted as fastjson
// converts them.
func fastScores(s *jsonpos.Scanner, i int, rec *record) (int, bool) {
	b := s.B
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = s.WS(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		key, end, ok := plainString(s, i)
		if !ok {
			return 0, false
		}
		m := metrics.CaseIndex(string(key))
		if m < 0 || rec.has&(1<<m) != 0 {
			return 0, false
		}
		if i, err := s.Colon(end); err != nil {
			return 0, false
		} else if end, err = s.Number(i); err != nil {
			return 0, false
		} else {
			num := b[i:end]
			f, err := fastfloat.Parse(unsafe.String(&num[0], len(num))) //nolint:gosec // G103: a view of the line for the call only (fastfloat keeps no reference)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !metrics.CaseMeasures[m].Scale.InRange(f) {
				return 0, false
			}
			rec.scores[m] = f
			rec.has |= 1 << m
		}
		var done bool
		var err error
		if i, done, err = s.Next(end, '}', "in scores"); err != nil {
			return 0, false
		}
		if done {
			return i, true
		}
	}
}

// detailSpans are the raw JSON texts of a case line's id (a string), gold set
// and top k (arrays; nil when absent): what the reports list of a baseline
// case (Baseline.detail).
type detailSpans struct{ id, gold, top []byte }

// appendDetail appends the detail line of d: {"id":…,"gold":[…],"top":[…]},
// the texts as they were (gold only when present, under "gold" whichever key
// the line had; top only when present). ParseCaseLine reads the same id, gold
// and top k (and HasTop) from it as from the whole line (FuzzFastRecord).
func appendDetail(dst []byte, d *detailSpans) []byte {
	dst = append(append(dst, `{"id":`...), d.id...)
	if d.gold != nil {
		dst = append(append(dst, `,"gold":`...), d.gold...)
	}
	if d.top != nil {
		dst = append(append(dst, `,"top":`...), d.top...)
	}
	return append(dst, '}')
}
