package trecfile

import (
	"math"
	"strconv"
	"unsafe"
)

// trecTrim drops a trailing newline, carriage return and surrounding blanks.
func trecTrim(b []byte) []byte {
	for len(b) > 0 && trecSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && trecSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func trecSpace(c byte) bool { return trecSpaceTab[c] }

var trecSpaceTab = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\v': true, '\f': true}

// trecFields splits b at runs of blanks into dst and returns the number of
// fields found (which may exceed len(dst); extra fields are not stored).
func trecFields(b []byte, dst [][]byte) int {
	n := 0
	i := 0
	for i < len(b) {
		for i < len(b) && trecSpace(b[i]) {
			i++
		}
		if i == len(b) {
			break
		}
		s := i
		for i < len(b) && !trecSpace(b[i]) {
			i++
		}
		if n < len(dst) {
			dst[n] = b[s:i]
		}
		n++
	}
	return n
}

// trecInt parses an optionally signed decimal integer. bad is true for a text
// that is not one, and for an integer of more than 9 significant digits (leading
// zeros do not count: "0000000003" is 3), which is out of any range the callers
// take; trecDigits tells the two apart.
func trecInt(b []byte) (v int, bad bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, true
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, true
		}
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(b) > 9 {
		return 0, true
	}
	for _, c := range b {
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, false
}

// trecDigits reports whether b is an optionally signed run of decimal digits
// (an integer, however large).
func trecDigits(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var trecPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// trecScore parses a decimal float as strconv.ParseFloat does (correctly
// rounded). Plain decimals with at most 15 significant digits take an exact fast
// path (an integer below 2^53 divided by an exact power of ten is correctly
// rounded); other decimals go through strconv. Anything but a finite decimal
// (see isDecimal) is rejected.
func trecScore(b []byte) (float64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	var m uint64
	nd, dot := 0, -1
	fast := true
	for j := i; j < len(b); j++ {
		c := b[j]
		if d := c - '0'; d < 10 {
			m = m*10 + uint64(d)
			nd++
			continue
		}
		if c == '.' && dot < 0 {
			dot = j
			continue
		}
		fast = false
		break
	}
	// At most 15 digits in all: m < 10^15 < 2^53 and the power of ten is exact.
	if fast && nd > 0 && nd <= 15 {
		frac := 0
		if dot >= 0 {
			frac = len(b) - dot - 1
		}
		f := float64(m) / trecPow10[frac]
		if neg {
			f = -f
		}
		return f, true
	}
	if !isDecimal(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64) //nolint:gosec // G103: a view of b for this call only (ParseFloat keeps no reference; its error clones), b is not written meanwhile
	if err != nil || math.IsInf(f, 0) {
		return 0, false // 1e400: out of range
	}
	return f, true
}

// isDecimal reports whether b is a decimal number: an optional sign, digits with
// an optional fraction (or a fraction alone), an optional exponent. Not inf,
// NaN, hexadecimal (0x1p3) or digit separators (1_000), which strconv would
// accept: the one rule for scores and relevance of every TREC input.
func isDecimal(b []byte) bool {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	digits := 0
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(b)
}
