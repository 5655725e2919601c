package report

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/dataset"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// AppendCaseLine appends the --cases-out line of one case to dst:
// {"id", "locale", "type", "query", "must_cite_one_of", "scores"} with keys in
// that order (locale, query and must_cite_one_of only when the case has them),
// then a newline. scores holds the triad of a scored case, a precomputed case's
// scores as given, or is {} for a case without gold. `check` reads the file back
// as precomputed scores; floats keep full precision so the aggregates match.
func AppendCaseLine(dst []byte, c *dataset.Case, r *gate.CaseResult) []byte {
	if dst == nil {
		dst = make([]byte, 0, 160+len(c.ID)+len(c.Query)+24*len(c.Gold))
	}
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, c.ID)
	if c.Locale != "" {
		dst = append(dst, `,"locale":`...)
		dst = appendJSONString(dst, c.Locale)
	}
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, r.Type)
	if c.Query != "" {
		dst = append(dst, `,"query":`...)
		dst = appendJSONString(dst, c.Query)
	}
	if len(c.Gold) > 0 {
		dst = append(dst, `,"must_cite_one_of":[`...)
		for i, g := range c.Gold {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, g)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"scores":{`...)
	first := true
	field := func(k string, v float64) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendExactFloat(dst, v)
	}
	switch {
	case r.Scored && r.Extra == nil && r.Has == [3]bool{true, true, true}:
		// The common case, keys already in sorted order: no allocation.
		field(metrics.KeyHit, r.Triad.Hit)
		field(metrics.KeyNDCG, r.Triad.NDCG)
		field(metrics.KeyRecall, r.Triad.Recall)
	case r.Scored:
		keys := make([]string, 0, 3+len(r.Extra))
		for i, k := range metrics.TriadKeys {
			if r.Has[i] {
				keys = append(keys, k)
			}
		}
		for k := range r.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if i := slices.Index(metrics.TriadKeys[:], k); i >= 0 {
				field(k, r.Triad.Get(i))
			} else {
				field(k, r.Extra[k])
			}
		}
	}
	return append(dst, "}}\n"...)
}

// appendExactFloat writes v with the shortest representation that reads back
// to the same float64.
func appendExactFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
