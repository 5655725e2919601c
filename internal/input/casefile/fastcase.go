package casefile

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// parseFast decodes a line of the shape nearly every writer gives a case
// straight into c, its strings viewing b (StringsInLine): one object of the
// known fields (id, locale, type, query, must_cite_one_of, relevant_ids,
// retrieved; retrieve's and generate's provenance keys skipped, but for
// retrieval.k with RetrievalK, validated in the same pass), each at most
// once, strings of printable text without escapes, gold and relevant ids as
// arrays of strings, retrieved entries as {"id", "parent_id", "score"} in that
// order with a non-empty id and a number of at most 15 digits without an
// exponent, single spaces at most between tokens. It reports whether it
// decoded the line; for anything else (null, another type, an escape, a tab,
// an unknown key, an empty id, a syntax error) it returns false, and the
// general scanner decodes the line again from its start (overwriting what
// parseFast wrote into c) and words its errors. What it accepts it decodes
// exactly as the general scanner does (FuzzParseCase holds it to that).
func (p *CaseParser) parseFast(b []byte, file string, line int, c *Case) bool {
	if len(b) == 0 {
		return false
	}
	base := unsafe.SliceData(b) //nolint:gosec // G103: the line's bytes, which the views below share
	view := func(from, to int) string {
		return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(base), from)), to-from) //nolint:gosec // G103: a view of the line, valid while it is (StringsInLine)
	}
	f := fastScan{b: b, noScores: p.NoScores}
	i := f.sp(0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	*c = Case{
		File: file, Line: line,
		Gold: c.Gold[:0], Relevant: c.Relevant[:0], Retrieved: c.Retrieved[:0], Unknown: c.Unknown[:0],
		Raw: b,
	}
	var seen uint32
	hasID := false
	i = f.sp(i + 1)
	if i < len(b) && b[i] == '}' {
		return false // no id
	}
	for {
		ks, ke, ok := f.str(i)
		if !ok {
			return false
		}
		v := f.sp(ke)
		if v >= len(b) || b[v] != ':' {
			return false
		}
		v = f.sp(v + 1)
		if v >= len(b) {
			return false
		}
		var bit uint32
		switch string(b[ks+1 : ke-1]) {
		case "id":
			bit = 1
		case "locale":
			bit = 2
		case "type":
			bit = 4
		case "query":
			bit = 8
		case "must_cite_one_of":
			bit = 16
		case "retrieved":
			bit = 32
		case "relevant_ids":
			bit = 64
		case "retrieval":
			bit = 128
		case "generator":
			bit = 256
		case "query_style":
			bit = 512
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch bit {
		case 1, 2, 4, 8:
			s, e, ok := f.str(v)
			if !ok {
				return false
			}
			val := view(s+1, e-1)
			switch bit {
			case 1:
				if s+2 == e {
					return false // empty: the general scanner words it
				}
				c.ID, hasID = val, true
			case 2:
				c.Locale = val
			case 4:
				c.Type = val
			default:
				c.Query = val
			}
			i = e
		case 16, 64:
			if b[v] != '[' {
				return false
			}
			ids := &c.Gold
			if bit == 64 {
				ids = &c.Relevant
			}
			j := f.sp(v + 1)
			if j < len(b) && b[j] == ']' {
				i = j + 1
				break
			}
			for {
				s, e, ok := f.str(j)
				if !ok {
					return false
				}
				*ids = append(*ids, view(s+1, e-1))
				j = f.sp(e)
				if j >= len(b) {
					return false
				}
				if b[j] == ']' {
					break
				}
				if b[j] != ',' {
					return false
				}
				j = f.sp(j + 1)
			}
			i = j + 1
		case 32:
			if b[v] != '[' {
				return false
			}
			c.HasRetrieved = true
			j := f.sp(v + 1)
			if j < len(b) && b[j] == ']' {
				i = j + 1
				break
			}
			for {
				is, ie, ps, pe, score, e, ok := f.entry(j)
				if !ok {
					return false
				}
				// The entry is written in place: a Retrieved built aside and
				// appended is copied through the stack twice, with partly
				// overlapping stores that the loads after them stall on.
				n := len(c.Retrieved)
				if n < cap(c.Retrieved) {
					c.Retrieved = c.Retrieved[:n+1]
				} else {
					c.Retrieved = append(c.Retrieved, Retrieved{})
				}
				ret := &c.Retrieved[n]
				ret.ID, ret.ParentID, ret.Score, ret.HasScore = view(is, ie), "", score, true
				if pe > ps {
					ret.ParentID = view(ps, pe)
				}
				if e+2 <= len(b) && b[e] == ',' && b[e+1] == ' ' {
					j = e + 2 // the common separator
					continue
				}
				j = f.sp(e)
				if j >= len(b) {
					return false
				}
				if b[j] == ']' {
					break
				}
				if b[j] != ',' {
					return false
				}
				j = f.sp(j + 1)
			}
			i = j + 1
		default: // provenance: validated, not decoded (retrieval.k checked with RetrievalK)
			e, ok := p.skipProvenance(b, v, bit == 128)
			if !ok {
				return false
			}
			i = e
		}
		i = f.sp(i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return false
		}
		i = f.sp(i + 1)
	}
	if f.sp(i+1) != len(b) || !hasID {
		return false
	}
	if c.Type == "" {
		c.Type = "golden"
	}
	return true
}

// fastScan is parseFast's lexer: it accepts only the common forms and reports
// anything else as not ok.
type fastScan struct {
	b        []byte
	noScores bool // number validates without converting (CaseParser.NoScores)
}

// sp skips one space at i, if there is one.
// skipProvenance validates the provenance value at v of b (retrieve's and
// generate's keys) and returns its end; retrieval is the "retrieval" key's,
// whose k is checked with RetrievalK. ok is false for a value the general
// scanner must word. Out of parseFast's loop: the cases of a benchmark or a
// hand-written file have none, and its code stays as small as before.
//
//go:noinline
func (p *CaseParser) skipProvenance(b []byte, v int, retrieval bool) (end int, ok bool) {
	p.s.Reset(b)
	if retrieval && p.RetrievalK {
		e, msg, err := p.scanRetrieval(v)
		return e, msg == "" && err == nil
	}
	e, err := p.s.Skip(v, 1)
	return e, err == nil
}

func (f *fastScan) sp(i int) int {
	if i < len(f.b) && f.b[i] == ' ' {
		return i + 1
	}
	return i
}

// str scans the string whose quote is at i: its quotes are at s and e-1. ok
// is false for anything but a string without escapes or control characters
// and of valid UTF-8 (which the general scanner keeps as it is).
func (f *fastScan) str(i int) (s, e int, ok bool) {
	b := f.b
	if i >= len(b) || b[i] != '"' {
		return 0, 0, false
	}
	if e := strEnd(b, i+1); e > 0 {
		return i, e, true
	}
	return f.strSlow(i)
}

// strEnd returns the offset after the closing quote of the string whose
// content starts at j when the bytes before it are printable ASCII other than
// the backslash, else -1. Eight bytes at a time: bit 7 of a byte of stop flags
// a quote, a backslash, a control character or a byte past ASCII, exactly for
// the lowest flag (haszero and hasless of "Bit Twiddling Hacks": a byte's
// subtraction borrows only from a lower byte that is flagged itself; and since
// the quote and the backslash are ASCII, q, bs and x share bit 7, so one "| x"
// stands for each term's "&^ v" and flags the bytes past ASCII).
func strEnd(b []byte, j int) int {
	for ; j+8 <= len(b); j += 8 {
		x := load64(b, j)
		q := x ^ (swarOnes * '"')
		bs := x ^ (swarOnes * '\\')
		if stop := ((q - swarOnes) | (bs - swarOnes) | (x - swarOnes*0x20) | x) & swarHigh; stop != 0 {
			if k := j + bits.TrailingZeros64(stop)>>3; b[k] == '"' {
				return k + 1
			}
			return -1
		}
	}
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return -1
		}
	}
	return -1
}

// strSlow is str for a string with bytes past ASCII: valid UTF-8 is kept as
// it is; escapes and control characters are not ok.
func (f *fastScan) strSlow(i int) (s, e int, ok bool) {
	b := f.b
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			if !utf8.Valid(b[i+1 : j]) {
				return 0, 0, false
			}
			return i, j + 1, true
		case c == '\\' || c < 0x20:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// entry scans {"id": "…", "parent_id": "…", "score": number} at i and returns
// the spans of its id (is:ie) and parent_id (ps:pe; empty: none), its score
// and the offset after its '}'. The results are scalars, so they come back in
// registers (a struct of arrays would be copied through the stack). The
// separators of the common writers (", " and ": ", as json.dumps and retrieve
// write them) are compared eight bytes at a time; other spacing goes through
// comma and sp.
func (f *fastScan) entry(i int) (is, ie, ps, pe int, score float64, end int, ok bool) {
	b := f.b
	var j int
	switch {
	case i+8 <= len(b) && load64(b, i) == litIDSpaced:
		j = i + 7
	case i+6 <= len(b) && string(b[i:i+6]) == `{"id":`:
		j = f.sp(i + 6)
	default:
		return 0, 0, 0, 0, 0, 0, false
	}
	e := 0
	if j < len(b) && b[j] == '"' {
		e = strEnd(b, j+1)
	}
	if e < 0 {
		var s int
		if s, e, ok = f.str(j); !ok {
			return 0, 0, 0, 0, 0, 0, false
		}
		j = s
	}
	if e <= j+2 {
		return 0, 0, 0, 0, 0, 0, false // not a string, or empty
	}
	is, ie = j+1, e-1
	if e+15 <= len(b) && load64(b, e-1) == litParent0 && load64(b, e+7) == litParent1 {
		j = e + 15
	} else {
		j = f.comma(e)
		if j+12 > len(b) || string(b[j:j+12]) != `"parent_id":` {
			return 0, 0, 0, 0, 0, 0, false
		}
		j = f.sp(j + 12)
	}
	if j < len(b) && b[j] == '"' {
		e = strEnd(b, j+1)
	} else {
		return 0, 0, 0, 0, 0, 0, false
	}
	if e < 0 {
		var s int
		if s, e, ok = f.str(j); !ok {
			return 0, 0, 0, 0, 0, 0, false
		}
		j = s
	}
	ps, pe = j+1, e-1
	if e+11 <= len(b) && load64(b, e-1) == litScore0 && uint32(load64(b, e+3)>>32) == litScore1 {
		j = e + 11
	} else {
		j = f.comma(e)
		if j+8 > len(b) || string(b[j:j+8]) != `"score":` {
			return 0, 0, 0, 0, 0, 0, false
		}
		j = f.sp(j + 8)
	}
	// The common score validated here, not through number and number24: the
	// commonest form ("0.921") by shortScore, inlined, from the one word
	// that holds it; the others by valid24, a call less than number's.
	if f.noScores && j+24 <= len(b) {
		if n := shortScore(load64(b, j)); n > 0 {
			j += n
		} else {
			end, valid, done := valid24((*[24]byte)(b[j : j+24]))
			switch {
			case done && !valid:
				return 0, 0, 0, 0, 0, 0, false
			case done:
				j += end
			default:
				if j, score, ok = f.number(j); !ok {
					return 0, 0, 0, 0, 0, 0, false
				}
			}
		}
	} else if j, score, ok = f.number(j); !ok {
		return 0, 0, 0, 0, 0, 0, false
	}
	if j < len(b) && b[j] == '}' {
		return is, ie, ps, pe, score, j + 1, true
	}
	if j = f.sp(j); j >= len(b) || b[j] != '}' {
		return 0, 0, 0, 0, 0, 0, false
	}
	return is, ie, ps, pe, score, j + 1, true
}

// The separators of a retrieved entry as the common writers space them,
// little-endian: `{"id": "`, `", "parent_id": "` (two words; the first
// byte is the id's closing quote), `", "score": ` (a word and the last four
// bytes, overlapping).
var (
	litIDSpaced = binary.LittleEndian.Uint64([]byte(`{"id": "`))
	litParent0  = binary.LittleEndian.Uint64([]byte(`", "pare`))
	litParent1  = binary.LittleEndian.Uint64([]byte(`nt_id": `))
	litScore0   = binary.LittleEndian.Uint64([]byte(`", "scor`))
	litScore1   = binary.LittleEndian.Uint32([]byte(`e": `))
)

// comma expects ',' and at most one space at i, and returns the offset after
// them (len(b) when it is not there: what follows then fails).
func (f *fastScan) comma(i int) int {
	if i < len(f.b) && f.b[i] == ',' {
		return f.sp(i + 1)
	}
	return len(f.b)
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)? of at most 15 digits and converts
// it as jsonpos' NumberValue does (the same float64); anything else, an
// exponent included, is not ok.
func (f *fastScan) number(i int) (end int, v float64, ok bool) {
	b := f.b
	if i+24 <= len(b) {
		return number24((*[24]byte)(b[i:i+24]), i, !f.noScores)
	}
	j := i
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	start := j
	var mant uint64
	for j < len(b) && b[j]-'0' < 10 {
		mant = mant*10 + uint64(b[j]-'0')
		j++
	}
	digits, frac := j-start, 0
	if digits == 0 || digits > 1 && b[start] == '0' {
		return 0, 0, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		fs := j
		for j < len(b) && b[j]-'0' < 10 {
			mant = mant*10 + uint64(b[j]-'0')
			j++
		}
		if frac = j - fs; frac == 0 {
			return 0, 0, false
		}
		digits += frac
	}
	if digits > 15 || j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		return 0, 0, false
	}
	if f.noScores {
		return j, 0, true
	}
	v = float64(mant)
	if frac > 0 {
		v /= fastPow10[frac]
	}
	if neg {
		v = -v
	}
	return j, v, true
}

// number24 is number for a number that starts at a[0] (offset i of the
// line), with at least 24 bytes of the line from there: no bounds checks.
// A longer run of digits is not ok (more than 15 digits). Without conv, v is
// 0 (the number validated, not converted: its division is the costliest
// instruction of a line).
func number24(a *[24]byte, i int, conv bool) (end int, v float64, ok bool) {
	if !conv {
		if end, ok, done := valid24(a); done {
			return i + end, 0, ok
		}
	}
	k := 0
	neg := a[0] == '-'
	if neg {
		k = 1
	}
	start := k
	var mant uint64
	for k < len(a) && a[k]-'0' < 10 {
		mant = mant*10 + uint64(a[k]-'0')
		k++
	}
	digits, frac := k-start, 0
	if digits == 0 || digits > 1 && a[start] == '0' {
		return 0, 0, false
	}
	if k < len(a) && a[k] == '.' {
		k++
		fs := k
		for k < len(a) && a[k]-'0' < 10 {
			mant = mant*10 + uint64(a[k]-'0')
			k++
		}
		if frac = k - fs; frac == 0 {
			return 0, 0, false
		}
		digits += frac
	}
	if digits > 15 || k >= len(a) || a[k] == 'e' || a[k] == 'E' {
		return 0, 0, false
	}
	if !conv {
		return i + k, 0, true
	}
	v = float64(mant)
	if frac > 0 {
		v /= fastPow10[frac]
	}
	if neg {
		v = -v
	}
	return i + k, v, true
}

// valid24 is number24's validation without conversion for the common form,
// a word at a time: at most 7 integer digits not starting with a sign, and at
// most 7 fraction digits. done is false for anything else (a sign, 8 digits
// or more on either side of the point, a first byte that is not a digit),
// which number24's byte loop then decides; where done is true, end and ok are
// what the loop gives (TestNumber24AsLoop and FuzzNumber24 hold them to it).
func valid24(a *[24]byte) (end int, ok, done bool) {
	nd := nonDigits(binary.LittleEndian.Uint64(a[0:8]))
	k := bits.TrailingZeros64(nd) >> 3
	if k == 0 || k == 8 {
		return 0, false, false
	}
	if k > 1 && a[0] == '0' {
		return 0, false, true
	}
	if a[k] == '.' {
		// A number that ends within the first word ("0.921}"), its end read
		// from the same flags: the lowest flag past the point is exact too,
		// as the bytes below it (digits and the point) carry into no other.
		if rest := nd >> (8*k + 8); rest != 0 {
			f := bits.TrailingZeros64(rest) >> 3
			if f == 0 {
				return 0, false, true
			}
			k += 1 + f
			if c := a[k]; c == 'e' || c == 'E' {
				return 0, false, true
			}
			return k, true, true
		}
		nf := nonDigits(binary.LittleEndian.Uint64(a[k+1 : k+9]))
		f := bits.TrailingZeros64(nf) >> 3
		if f == 8 {
			return 0, false, false
		}
		if f == 0 {
			return 0, false, true
		}
		k += 1 + f
	}
	if c := a[k&15]; c == 'e' || c == 'E' {
		return 0, false, true
	}
	return k, true, true
}

// shortScore is the length of the number at the start of the word w (the
// line's bytes, little-endian) when it is one digit, a point and one to five
// digits followed by a byte in the word that is neither a digit nor an
// exponent's 'e' or 'E' (the scores retrievers write: "0.921}"), else 0 (not
// decided: valid24 or number decides). Where it is not 0, number's byte
// loop takes the same number and ends it there (TestShortScoreAsLoop). Small
// enough to be inlined into entry: a call less a retrieved entry than
// valid24.
func shortScore(w uint64) int {
	// A digit, then the point: the lowest flag is byte 1's, and a point
	// carries into no higher byte, so the lowest flag above it is exact too.
	nd := nonDigits(w)
	if (nd&0xffff^0x8000)|(w&0xff00^'.'<<8) != 0 {
		return 0
	}
	// f fraction digits (1 to 5) end at the lowest flag above the point; f
	// is 0 for none and 8 for more than the word holds.
	f := bits.TrailingZeros64(nd>>16) >> 3
	if uint(f-1) >= 5 || byte(w>>(8*f+16))|0x20 == 'e' { //nolint:gosec // G115: the byte that ends the number, meant to be cut from the word
		return 0
	}
	return 2 + f
}

// nonDigits flags (bit 7 of its byte) every byte of x that is not an ASCII
// digit, exactly for the lowest one: t's byte is below 10 exactly for a
// digit; t+0x76 sets bit 7 for 10 to 0x7f, "| t" for 0x80 and above, and the
// carry out of a byte of 0x8a or more (flagged itself) reaches only higher
// bytes.
func nonDigits(x uint64) uint64 {
	t := x ^ swarOnes*'0'
	return ((t + swarOnes*0x76) | t) & swarHigh
}

// fastPow10 holds the powers of ten a number of at most 15 digits divides by
// (exact float64s, as jsonpos' exactPow10).
var fastPow10 = [16]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// load64 is the little-endian word at b[j:j+8], which the caller has
// checked is within b: one load, no bounds check.
func load64(b []byte, j int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), j))[:]) //nolint:gosec // G103: j+8 <= len(b), checked by the caller
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)
