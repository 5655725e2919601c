// Package readback checks a --json document of check, compare or calibrate
// that is read back (report --from) before anything renders it, as strictly
// as the command that wrote it would have: every field a report shows is
// present with its type, every count is a non-negative integer, every number
// is finite and within what its measure can be, every interval is ordered,
// every p-value a probability, and the verdict is the gates' verdict. A value
// that is wrong is an *input.Error at its line (jsonpos keeps each value's
// line); the first one found is reported. Fields a report does not show, and
// fields a later version may add, are not looked at beyond the rules that
// hold for every document (Sweep).
package readback

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// MaxSize caps a document read back (a --json report is far smaller: its
// groups and strategies are capped).
const MaxSize = 64 << 20

// Parse reads a whole document of at most MaxSize bytes from r and parses it
// with the lines of its values (a UTF-8 BOM at its start dropped); a syntax
// error is an *input.Error at its line.
func Parse(r io.Reader, file string) ([]byte, *jsonpos.Value, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read the document: %w", err)
	}
	if len(data) > MaxSize {
		return nil, nil, input.Errorf(file, 0, "larger than %d MiB: not a --json report", MaxSize>>20)
	}
	data = input.TrimBOM(data) // as every reader drops it
	// Scanned first, which builds nothing: a document over the values cap is
	// refused before its tree is built (about 1.1 GB at the cap), with the
	// error Parse would give (Check agrees with it exactly: jsonpos's
	// differential test).
	s := jsonpos.Scanner{MaxValues: jsonpos.DocumentMaxValues}
	err = s.Check(data)
	var root *jsonpos.Value
	if err == nil {
		p := jsonpos.Parser{MaxValues: jsonpos.DocumentMaxValues}
		root, err = p.Parse(data, 1, 0)
	}
	if err != nil {
		if se, ok := err.(*jsonpos.SyntaxError); ok { //nolint:errorlint // Parse returns *SyntaxError itself
			line, msg := se.DescribeAt(data)
			return nil, nil, input.Errorf(file, line, "%s", msg)
		}
		return nil, nil, input.Errorf(file, 0, "%v", err)
	}
	if root.Kind != jsonpos.Object {
		return nil, nil, input.Errorf(file, root.Line, "the document is %s, not an object", root.TypeName())
	}
	return data, root, nil
}

// Decode is the readback of a document Parse has read and parsed (data and
// its tree): validate checks the tree as strictly as the command writes it
// (a value that is wrong is an *input.Error at its line, whose File is "":
// the caller names the file), then data is decoded into d, a document of
// what ("check report": named when the decoding fails). The caller checks
// the decoded schema.
func Decode(data []byte, root *jsonpos.Value, validate func(*Checker, *jsonpos.Value), d any, what string) error {
	c := &Checker{Data: data}
	validate(c, root)
	if err := c.Err(); err != nil {
		return err
	}
	if err := json.Unmarshal(data, d); err != nil {
		return fmt.Errorf("not a %s: %w", what, err)
	}
	return nil
}

// Checker checks one document: the first error found is kept (Err).
type Checker struct {
	File    string
	Data    []byte
	Command string // "check", "compare", "calibrate": named in the messages
	err     *input.Error
}

// Err is the first error found, or nil.
func (c *Checker) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

// Failf records an error at line (the first one wins).
func (c *Checker) Failf(line int, format string, args ...any) {
	if c.err == nil {
		c.err = input.Errorf(c.File, line, format, args...)
	}
}

// Path is a value's place in the document: keys joined with dots, a key that
// is not a plain word quoted (group and strategy names are data); the history
// reader names a value by the same rule (jsonpos.Path).
func Path(parent, key string) string { return jsonpos.Path(parent, key) }

// Index is the path of an array's element.
func Index(parent string, i int) string { return jsonpos.Index(parent, i) }

// shown is a value as a message shows it: a number's text (shortened), or
// its JSON type (jsonpos.Shown, as the history reader shows it).
func (c *Checker) shown(v *jsonpos.Value) string {
	var number []byte
	if v.Kind == jsonpos.Number {
		number = v.Raw(c.Data)
	}
	return jsonpos.Shown(v.Kind, v.Bool, number)
}

// Obj is an object of the document at its path.
type Obj struct {
	c    *Checker
	V    *jsonpos.Value // nil: the object is absent (an error was recorded, or it is optional)
	Path string
}

// Root is the document's top-level object, whose "schema" must be schema.
func (c *Checker) Root(v *jsonpos.Value, schema string) Obj {
	o := Obj{c: c, V: v}
	if got := o.String("schema"); c.err == nil && got != schema {
		c.Failf(v.Get("schema").Line, "schema %s is not %q", jsonpos.QuoteKey([]byte(got)), schema)
	}
	return o
}

// Has reports whether the object exists.
func (o Obj) Has() bool { return o.V != nil }

// need is the value of key, which must be present and not null.
func (o Obj) need(key string) *jsonpos.Value {
	if o.V == nil {
		return nil
	}
	v := o.V.Get(key)
	if v == nil || v.Kind == jsonpos.Null {
		what := "missing"
		line := o.V.Line
		if v != nil {
			what, line = "null", v.Line
		}
		o.c.Failf(line, "%s is %s: a %s report always has it", Path(o.Path, key), what, o.c.Command)
		return nil
	}
	return v
}

// opt is the value of key, nil when absent or null.
func (o Obj) opt(key string) *jsonpos.Value {
	if o.V == nil {
		return nil
	}
	if v := o.V.Get(key); v != nil && v.Kind != jsonpos.Null {
		return v
	}
	return nil
}

func (o Obj) wrongType(key string, v *jsonpos.Value, want string) {
	o.c.Failf(v.Line, "%s is %s, not %s", Path(o.Path, key), o.c.shown(v), want)
}

// Object is the object at key (required).
func (o Obj) Object(key string) Obj { return o.object(key, o.need(key)) }

// OptObject is the object at key, or an absent Obj when key is absent or null.
func (o Obj) OptObject(key string) Obj { return o.object(key, o.opt(key)) }

func (o Obj) object(key string, v *jsonpos.Value) Obj {
	out := Obj{c: o.c, Path: Path(o.Path, key)}
	if v == nil {
		return out
	}
	if v.Kind != jsonpos.Object {
		o.wrongType(key, v, "an object")
		return out
	}
	out.V = v
	return out
}

// Members calls fn for each member of the object at key (required), each an
// object.
func (o Obj) Members(key string, fn func(name string, m Obj)) {
	obj := o.Object(key)
	if obj.V == nil {
		return
	}
	for _, m := range obj.V.Members {
		if m.Value.Kind != jsonpos.Object {
			obj.wrongType(m.Key, m.Value, "an object")
			continue
		}
		fn(m.Key, Obj{c: o.c, V: m.Value, Path: Path(obj.Path, m.Key)})
	}
}

// Array is the elements of the array at key (required).
func (o Obj) Array(key string) []*jsonpos.Value {
	v := o.need(key)
	if v == nil {
		return nil
	}
	if v.Kind != jsonpos.Array {
		o.wrongType(key, v, "an array")
		return nil
	}
	return v.Elems
}

// Objects calls fn for each element of the array at key (required), each an
// object.
func (o Obj) Objects(key string, fn func(i int, e Obj)) {
	for i, e := range o.Array(key) {
		p := Index(Path(o.Path, key), i)
		if e.Kind != jsonpos.Object {
			o.c.Failf(e.Line, "%s is %s, not an object", p, o.c.shown(e))
			continue
		}
		fn(i, Obj{c: o.c, V: e, Path: p})
	}
}

// String is the string at key (required); with allowed, it must be one of them.
func (o Obj) String(key string, allowed ...string) string {
	v := o.need(key)
	if v == nil {
		return ""
	}
	return o.str(key, v, allowed)
}

// OptString is the string at key, "" when absent or null.
func (o Obj) OptString(key string) string {
	v := o.opt(key)
	if v == nil {
		return ""
	}
	return o.str(key, v, nil)
}

func (o Obj) str(key string, v *jsonpos.Value, allowed []string) string {
	if v.Kind != jsonpos.String {
		o.wrongType(key, v, "a string")
		return ""
	}
	if len(allowed) > 0 && !contains(allowed, v.Str) {
		o.c.Failf(v.Line, "%s is %s, not one of %s", Path(o.Path, key), jsonpos.QuoteKey([]byte(v.Str)), strings.Join(allowed, ", "))
		return ""
	}
	return v.Str
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Bool is the boolean at key (required).
func (o Obj) Bool(key string) bool {
	v := o.need(key)
	if v == nil {
		return false
	}
	if v.Kind != jsonpos.Bool {
		o.wrongType(key, v, "true or false")
		return false
	}
	return v.Bool
}

// Int is the integer at key (required), at least min.
func (o Obj) Int(key string, min int64) int64 {
	v := o.need(key)
	if v == nil {
		return 0
	}
	return o.intOf(Path(o.Path, key), v, min)
}

func (o Obj) intOf(path string, v *jsonpos.Value, min int64) int64 {
	f, ok := o.c.number(path, v)
	if !ok {
		return 0
	}
	if f != math.Trunc(f) || f < float64(min) || f > 1<<53 {
		o.c.Failf(v.Line, "%s is %s, not an integer ≥ %d", path, o.c.shown(v), min)
		return 0
	}
	return int64(f)
}

// IntAtMost is Int with an upper bound: a count of part of whole.
func (o Obj) IntAtMost(key string, min, max int64, maxWhat string) int64 {
	n := o.Int(key, min)
	if n > max {
		v := o.V.Get(key)
		o.c.Failf(v.Line, "%s is %d, more than %s (%d)", Path(o.Path, key), n, maxWhat, max)
	}
	return n
}

// Float is the number at key (required), within [lo, hi].
func (o Obj) Float(key string, lo, hi float64) float64 {
	v := o.need(key)
	if v == nil {
		return math.NaN()
	}
	return o.floatIn(key, v, lo, hi)
}

// OptFloat is the number at key within [lo, hi], NaN when absent or null.
func (o Obj) OptFloat(key string, lo, hi float64) float64 {
	v := o.opt(key)
	if v == nil {
		return math.NaN()
	}
	return o.floatIn(key, v, lo, hi)
}

func (o Obj) floatIn(key string, v *jsonpos.Value, lo, hi float64) float64 {
	f, ok := o.c.number(Path(o.Path, key), v)
	if !ok {
		return math.NaN()
	}
	if f < lo || f > hi {
		o.c.Failf(v.Line, "%s is %s, outside [%s, %s]", Path(o.Path, key), o.c.shown(v), bound(lo), bound(hi))
		return math.NaN()
	}
	return f
}

func bound(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "∞"
	case math.IsInf(f, -1):
		return "-∞"
	}
	return fmt.Sprint(f)
}

// number is v's value when it is a finite number.
func (c *Checker) number(path string, v *jsonpos.Value) (float64, bool) {
	if v.Kind != jsonpos.Number {
		c.Failf(v.Line, "%s is %s, not a number", path, c.shown(v))
		return 0, false
	}
	f, ok := v.Float64(c.Data)
	if !ok {
		c.Failf(v.Line, "%s is %s, not a finite number", path, c.shown(v))
		return 0, false
	}
	return f, true
}

// Interval checks the interval at key (required, or null when nullOK): two
// numbers (or nulls), the lower first, within [lo, hi].
func (o Obj) Interval(key string, lo, hi float64, nullOK bool) {
	var v *jsonpos.Value
	if nullOK {
		v = o.opt(key)
	} else {
		v = o.need(key)
	}
	if v == nil {
		return
	}
	p := Path(o.Path, key)
	if v.Kind != jsonpos.Array || len(v.Elems) != 2 {
		o.c.Failf(v.Line, "%s is %s, not an interval [lower, upper]", p, o.c.shown(v))
		return
	}
	var b [2]float64
	for i, e := range v.Elems {
		b[i] = math.NaN()
		if e.Kind == jsonpos.Null {
			continue
		}
		f, ok := o.c.number(Index(p, i), e)
		if !ok {
			return
		}
		if f < lo || f > hi {
			o.c.Failf(e.Line, "%s is %s, outside [%s, %s]", Index(p, i), o.c.shown(e), bound(lo), bound(hi))
			return
		}
		b[i] = f
	}
	if b[0] > b[1] {
		o.c.Failf(v.Line, "%s is [%s, %s]: its lower bound is above its upper bound", p, o.c.shown(v.Elems[0]), o.c.shown(v.Elems[1]))
	}
}

// Scale is the range [lo, hi] of a measure's mean: its registered scale, or
// any finite number for a measure the registry does not know.
func Scale(key string) (lo, hi float64) {
	info, ok := metrics.Lookup(key)
	switch {
	case !ok:
		return math.Inf(-1), math.Inf(1)
	case info.Scale == metrics.ScaleUnbounded:
		return 0, math.Inf(1)
	}
	return 0, 1
}

// Statuses are a gate's statuses; Verdicts a report's verdicts.
var (
	Statuses = []string{string(outcome.Pass), string(outcome.Fail), string(outcome.Off)}
	Verdicts = []string{string(outcome.Pass), string(outcome.Fail)}
)

// Gates checks the document's "gates" (required: every report lists its
// gates) and its "verdict", which must be the gates' verdict (fail when one
// failed, else pass): a report gives one decision, never two.
func (o Obj) Gates() {
	failed := false
	o.Objects("gates", func(_ int, g Obj) {
		if g.String("name") == "" && o.c.err == nil {
			o.c.Failf(g.V.Line, "%s is empty: every gate has a name", Path(g.Path, "name"))
		}
		if g.String("status", Statuses...) == string(outcome.Fail) {
			failed = true
		}
		g.Int("n", 0)
		g.OptString("group")
		g.OptString("measure")
		g.OptString("reason")
		g.OptFloat("threshold", math.Inf(-1), math.Inf(1))
		g.OptFloat("value", math.Inf(-1), math.Inf(1))
		g.OptFloat("detectable_difference", 0, math.Inf(1))
	})
	verdict := o.String("verdict", Verdicts...)
	if o.c.err != nil || verdict == "" {
		return
	}
	want := string(outcome.Pass)
	if failed {
		want = string(outcome.Fail)
	}
	if verdict != want {
		o.c.Failf(o.V.Get("verdict").Line, "verdict is %q but the gates' verdict is %q: a report gives one decision", verdict, want)
	}
}

// Sweep checks the rules every document keeps, wherever a value is (so also
// in the parts no rule of the command names): every "n" is a non-negative
// integer, every "ci95" an ordered interval, every "p_value" and
// "p_value_unadjusted" a probability (or null).
func (c *Checker) Sweep(root *jsonpos.Value) {
	var walk func(v *jsonpos.Value, path string)
	walk = func(v *jsonpos.Value, path string) {
		if c.err != nil {
			return
		}
		switch v.Kind {
		case jsonpos.Object:
			o := Obj{c: c, V: v, Path: path}
			for _, m := range v.Members {
				switch m.Key {
				case "n":
					if m.Value.Kind != jsonpos.Null {
						o.intOf(Path(path, "n"), m.Value, 0)
					}
				case "ci95":
					o.Interval("ci95", math.Inf(-1), math.Inf(1), true)
				case "p_value", "p_value_unadjusted":
					o.OptFloat(m.Key, 0, 1)
				}
				walk(m.Value, Path(path, m.Key))
			}
		case jsonpos.Array:
			for i, e := range v.Elems {
				walk(e, Index(path, i))
			}
		case jsonpos.Number:
			c.number(path, v)
		}
	}
	walk(root, "")
}
