// Package format is the one presentation policy of every report: how numbers
// are printed for people (Num, Signed, Interval, Pct, P, Distinct; a number in
// full, Full; a figure whose use sets its decimals, Fixed; a figure of any
// size to a few significant digits, Significant; an axis tick,
// Tick; a count with separators, Thousands) and for
// machines (Float, AppendFloat: full float64 precision, shortest round-trip
// form), the one missing-value glyph, JSON writing, and the escaping of
// user-controlled text for Markdown and terminals. It does no arithmetic on the
// figures beyond what printing them needs.
package format

import (
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Missing is printed wherever a number is undefined or absent (n = 0, NaN).
const Missing = "—"

// Decimals is the number of decimals of every figure in a human report.
const Decimals = 3

func undefined(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// Huge is the magnitude from which a figure is printed in scientific notation
// (1.700e+308): no measure of this tool gets there, a hostile or corrupt
// document can, and 300 digits would break a table.
const Huge = 1e9

// fixed prints v with Decimals decimals, or in scientific notation from Huge on.
func fixed(v float64) string {
	if math.Abs(v) >= Huge {
		return strconv.FormatFloat(v, 'e', Decimals, 64)
	}
	return strconv.FormatFloat(v, 'f', Decimals, 64)
}

// Num prints v with Decimals decimals (scientific notation from Huge on), or Missing.
func Num(v float64) string {
	if undefined(v) {
		return Missing
	}
	s := fixed(v)
	if s == "-0.000" {
		s = "0.000"
	}
	return s
}

// Whole prints a count held in a float64 without decimals (3, not 3.000), or
// Missing; a value that is not a whole number gets Num's decimals.
func Whole(v float64) string {
	if undefined(v) || v != math.Trunc(v) || math.Abs(v) >= Huge {
		return Num(v)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// Signed prints a difference with its sign (+0.250, -0.080), "0.000" when it
// rounds to zero (never "±0.000": the reports write ± for the half-width of a
// 95% interval, and a zero difference is no interval), or Missing.
func Signed(v float64) string {
	if undefined(v) {
		return Missing
	}
	if math.Abs(v) < 0.0005 {
		return "0.000"
	}
	s := fixed(v)
	if v > 0 {
		return "+" + s
	}
	return s
}

// Interval prints a confidence interval "[lo, hi]", or Missing when either end is undefined.
func Interval(ci [2]float64) string {
	if undefined(ci[0]) || undefined(ci[1]) {
		return Missing
	}
	return "[" + Num(ci[0]) + ", " + Num(ci[1]) + "]"
}

// UnreliableMark follows an interval whose method's simulated coverage at its
// n is below 0.95 (metrics.UnreliableFor) in every report's text and Markdown;
// UnreliableNote begins the footnote that explains it, to which each report
// adds the n below which its own intervals are marked.
const (
	UnreliableMark = "†"
	UnreliableNote = UnreliableMark + " unreliable: this interval's method covers less than 95% at this n in simulation"
)

// MarkIf is UnreliableMark after an interval marked unreliable, else "".
func MarkIf(unreliable bool) string {
	if unreliable {
		return UnreliableMark
	}
	return ""
}

// SignedInterval prints the interval of a difference, "[-0.100, +0.200]".
func SignedInterval(ci [2]float64) string {
	if undefined(ci[0]) || undefined(ci[1]) {
		return Missing
	}
	return "[" + Signed(ci[0]) + ", " + Signed(ci[1]) + "]"
}

// Pct prints a fraction as a percentage with one decimal ("12.5%").
func Pct(f float64) string {
	if undefined(f) {
		return Missing
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

// PFloor is the smallest p-value P prints as a number: below it (including a
// p that underflowed float64 to 0) it prints "< 1e-300".
const PFloor = 1e-300

// P prints a p-value: four decimals, or two significant digits in scientific
// notation below 0.0001, or "< 1e-300" below PFloor (so a tiny p never reads as 0).
func P(p float64) string {
	if undefined(p) {
		return Missing
	}
	if p < PFloor {
		return "< 1e-300"
	}
	if p < 0.0001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

// Distinct prints a value and the threshold it is compared with so that they
// never read as equal when they differ: Decimals decimals, more where needed
// (0.6999997 against 0.7 prints "0.6999997" and "0.7000000"). A missing value
// prints Missing.
func Distinct(value, threshold float64) (string, string) {
	if value == 0 { // −0 (a drop of −Δ where Δ is 0) reads 0, as in Num
		value = 0
	}
	if threshold == 0 {
		threshold = 0
	}
	if undefined(value) || undefined(threshold) {
		return Num(value), Num(threshold)
	}
	for d := Decimals; d <= 17; d++ {
		a, b := strconv.FormatFloat(value, 'f', d, 64), strconv.FormatFloat(threshold, 'f', d, 64)
		if a != b || value == threshold {
			return a, b
		}
	}
	return strconv.FormatFloat(value, 'g', -1, 64), strconv.FormatFloat(threshold, 'g', -1, 64)
}

// Full prints a number in full, the shortest form that reads back as the same
// float64: a setting as it was given (α = 0.05, a power of 80%, RBP's p = 0.8, a
// Jaccard threshold, a lock's constant), or a figure a summary line hands on
// unrounded (judge's agreement).
func Full(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Fixed prints v with the given decimals, where the figure's own use sets
// them rather than Decimals: a floor suggested for a flag (2), a rate or a
// wall time (1), a whole percentage in a sentence (0).
func Fixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// CostDigits are the significant digits of an estimated cost in a human
// report (judge's summary line); the JSON keeps it in full (Float).
const CostDigits = 4

// Significant prints v in fixed notation rounded to digits significant
// digits, its whole part never rounded away (12345.67 at 4 digits is 12346)
// and trailing zeros dropped (0.0003, not 0.0003000): a figure whose size
// varies by orders of magnitude, such as an estimated cost (CostDigits), so
// that 0.0007671 and 18.99 both read at a glance; Missing when undefined.
func Significant(v float64, digits int) string {
	if undefined(v) {
		return Missing
	}
	if v == 0 {
		return "0"
	}
	// The decimal exponent of v rounded to digits (math.Log10 is off on
	// subnormals, and 9.99996 rounds up to 10.00).
	e := strconv.FormatFloat(v, 'e', max(digits, 1)-1, 64)
	exp, _ := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:])
	out := strconv.FormatFloat(v, 'f', max(0, max(digits, 1)-1-exp), 64)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	if out == "-0" {
		out = "0"
	}
	return out
}

// Tick prints the label of an axis tick at v on an axis whose ticks are step
// apart: with the decimals the step needs and no more (0 for steps of 5, 1 for
// 0.2, 2 for 0.25, 3 for 0.025), so that neighbouring ticks read differently.
func Tick(v, step float64) string {
	dec := 0
	for s := step; s < 1-1e-9 && dec < 6; s *= 10 {
		dec++
	}
	if math.Abs(step*math.Pow(10, float64(dec))-math.Round(step*math.Pow(10, float64(dec)))) > 1e-6 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// Thousands prints an integer with comma thousands separators (100,000), as
// the HTML reports print a count.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Float is a number of a JSON report: full float64 precision in the shortest
// form that reads back to the same value (strconv 'g', -1), no "-0"; NaN and
// infinities are null, and null reads back as NaN.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return AppendFloat(nil, float64(f)), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// Floats converts a slice for a JSON report.
func Floats(xs []float64) []Float {
	out := make([]Float, len(xs))
	for i, x := range xs {
		out[i] = Float(x)
	}
	return out
}

// CI is a confidence interval of a JSON report.
func CI(ci [2]float64) [2]Float { return [2]Float{Float(ci[0]), Float(ci[1])} }

// V is f as a float64.
func (f Float) V() float64 { return float64(f) }

// AppendFloat appends v as a JSON number under the one float policy (see Float).
func AppendFloat(dst []byte, v float64) []byte {
	if undefined(v) {
		return append(dst, "null"...)
	}
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// WriteJSON writes v as JSON with two-space indentation, HTML characters
// unescaped and a final newline, as json.Encoder with SetIndent("", "  ")
// writes it, and nothing when v cannot be marshalled. The compact document is
// indented as it is written, in writes of up to 64 KiB: no indented copy of
// the whole document (at 1M calibrate pairs a 30 MB buffer grown by copies,
// 120 MB allocated). A value that holds a JSONStreamer is not marshalled
// whole either: it is written piece by piece (streamJSON), so a failure
// there may leave part of it written (the callers write through
// internal/atomicfile, all or nothing).
func WriteJSON(w io.Writer, v any) error {
	in := &indenter{w: w}
	if t := reflect.TypeOf(v); t != nil && streams(t) {
		if err := (&jsonStream{in: in}).value(reflect.ValueOf(v)); err != nil {
			return err
		}
		if err := in.write([]byte{'\n'}); err != nil {
			return err
		}
		return in.flush()
	}
	enc := json.NewEncoder(in)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return in.flush()
}

// indenter indents the compact JSON written to it (json.Encoder's whole
// value and newline in one Write, or a streamed value in many) as it writes
// it to w, in writes of up to 64 KiB: its state carries over from one Write
// to the next.
type indenter struct {
	w                             io.Writer
	out                           []byte
	depth                         int
	inString, escaped, needIndent bool
}

func (in *indenter) Write(p []byte) (int, error) {
	if err := in.write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (in *indenter) flush() error {
	if len(in.out) == 0 {
		return nil
	}
	_, err := in.w.Write(in.out)
	in.out = in.out[:0]
	return err
}

// write indents src, the next bytes of the compact JSON, into in.out,
// flushing it to w when it is full.
func (in *indenter) write(src []byte) error {
	const indent = "  "
	if in.out == nil {
		in.out = make([]byte, 0, 64<<10)
	}
	out, w := in.out, in.w
	depth, inString, escaped, needIndent := in.depth, in.inString, in.escaped, in.needIndent
	defer func() {
		in.out = out
		in.depth, in.inString, in.escaped, in.needIndent = depth, inString, escaped, needIndent
	}()
	flush := func() error {
		_, err := w.Write(out)
		out = out[:0]
		return err
	}
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, indent...)
		}
	}
	for start := 0; start < len(src); {
		// A run of string bytes without quote or backslash is copied at once.
		if inString && !escaped {
			n := len(src) - start
			for k := start; k < len(src); k++ {
				if c := src[k]; c == '"' || c == '\\' {
					n = k - start
					break
				}
			}
			if len(out)+n > cap(out) {
				if err := flush(); err != nil {
					return err
				}
			}
			if n > cap(out) {
				if _, err := w.Write(src[start : start+n]); err != nil {
					return err
				}
			} else {
				out = append(out, src[start:start+n]...)
			}
			start += n
			if start == len(src) {
				break
			}
		}
		if len(out)+2+len(indent)*(depth+1) > cap(out) {
			if err := flush(); err != nil {
				return err
			}
			if need := 2 + len(indent)*(depth+1); need > cap(out) {
				out = make([]byte, 0, need)
			}
		}
		c := src[start]
		start++
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			if depth == 0 && !needIndent {
				out = append(out, c) // after a top-level value: kept as json.Indent keeps it
			}
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline()
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '{', '[':
			needIndent = true // an empty object or array stays {} or []
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline()
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return nil
}

const hexDigits = "0123456789abcdef"

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// AppendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// The common string, printable ASCII without a quote or backslash, eight
	// bytes at a time (haszero/hasless from "Bit Twiddling Hacks": exact for
	// "any"); the loop below goes on from the first word that has another byte.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q, e := x^(swarOnes*'"'), x^(swarOnes*'\\')
		if ((q-swarOnes)&^q|(e-swarOnes)&^e|(x-swarOnes*0x20)&^x|x)&swarHigh != 0 {
			break
		}
	}
	start := 0
	for i < len(s) {
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

// Shorten is s cut to at most max runes, at a word boundary when one is in the
// second half, with "…" appended; ok is false when s was cut. A table cell that
// must stay one or two lines shows the short form and the full text elsewhere.
func Shorten(s string, max int) (short string, ok bool) {
	r := []rune(s)
	if len(r) <= max {
		return s, true
	}
	cut := max - 1
	for i := cut; i >= max/2; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ") + "…", false
}

// CutBytes is s cut to at most max bytes at a character boundary, "…"
// marking the cut: an id named in a bounded document (a JUnit test case's
// name, a Code Quality description), whose whole form is in the JSON report.
func CutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Count is n with the noun that fits it: "1 run", "3 runs" (the noun may
// carry words before it: "1 more row", "3 more rows").
func Count[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}
