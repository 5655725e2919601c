// Package floor is the floor gate of check and compare: the expression
// MEASURE[@GROUP]=F that --floor and the `floors` Action input take (Parse), and
// the decision of one floor on one observed group (Evaluate): pass at or above
// the floor, fail below it or when there is nothing to measure, with a reason
// that says what the group's n can detect at 80% power and α = 0.05. It does no
// I/O; the detectable differences are metrics.MDDProportion and metrics.MDDMean.
package floor

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Group prefixes of a floor expression (besides outcome.GroupOverall).
const (
	TypePrefix   = "type:"
	LocalePrefix = "locale:"
)

// Spec is one floor: the mean of Measure over Group must be at least Value.
type Spec struct {
	Measure string
	Group   string // outcome.GroupOverall, "type:NAME" or "locale:TAG" (canonical)
	Value   float64
}

// String is the canonical expression MEASURE@GROUP=F (F in shortest form,
// GROUP as QuoteGroup writes it): Parse reads it back as s.
func (s Spec) String() string {
	return s.Measure + "@" + QuoteGroup(s.Group) + "=" + strconv.FormatFloat(s.Value, 'g', -1, 64)
}

// QuoteGroup is group as an expression writes it so that Parse reads it back
// as group: as it is when its type name or locale tag is bare, else with the
// name or tag as a Go double-quoted string (strconv.Quote, every '#' as \x23):
// type:"a=b", type:" lead", type:"line\nbreak". The result is printable
// (strconv.IsPrint) and holds no "##[", so neither a log nor a YAML block
// reads it otherwise.
func QuoteGroup(group string) string {
	for _, p := range []string{TypePrefix, LocalePrefix} {
		if name, ok := strings.CutPrefix(group, p); ok && !bare(name) {
			return p + strings.ReplaceAll(strconv.Quote(name), "#", `\x23`)
		}
	}
	return group
}

// bare reports whether a name or tag reads back as itself unquoted: not
// empty, valid UTF-8, printable, no '=' (which ends it), no surrounding
// white space (trimmed), no leading '"' (which quotes), and no '#' that
// could begin "##[" with what follows it (another '#', or a rune the Actions
// runner ignores there: a variation selector or another default-ignorable).
func bare(name string) bool {
	if name == "" || !utf8.ValidString(name) || strings.TrimSpace(name) != name ||
		name[0] == '"' || strings.Contains(name, "=") || strings.Contains(name, "##") {
		return false
	}
	hash := false
	for _, r := range name {
		if !strconv.IsPrint(r) || hash && (unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)) {
			return false
		}
		hash = r == '#'
	}
	return true
}

// Name is the gate name of a --floor: "floor:MEASURE@GROUP".
func (s Spec) Name() string { return "floor:" + s.Measure + "@" + s.Group }

// Target is what a floor is set on: its measure and group.
func (s Spec) Target() string { return s.Measure + "@" + s.Group }

// Grammar is what a command's floors may name.
type Grammar struct {
	Measures []metrics.Info // the command's registered measures, in report order
	// Groups allows type:NAME and locale:TAG (check); without it only overall (compare).
	Groups bool
	// CanonicalLocale maps a locale:TAG to the case the groups use (BCP 47).
	CanonicalLocale func(string) string
}

// ErrSyntax is the error of an expression that is not MEASURE=F or MEASURE@GROUP=F.
var ErrSyntax = errors.New("want MEASURE=F or MEASURE@GROUP=F")

// MaxExpr bounds an expression in bytes (it is echoed in errors).
const MaxExpr = 1000

// Parse reads one floor expression. Errors name the choices: the measures of
// the grammar, the forms of a group, the range of F. A group's name or tag may
// be written as a Go double-quoted string (type:"a=b", locale:"x\ty"): the
// form QuoteGroup writes for one the bare form cannot carry.
func (g Grammar) Parse(expr string) (Spec, error) {
	e := strings.TrimSpace(expr)
	if len(e) > MaxExpr {
		return Spec{}, fmt.Errorf("floor expression of %d bytes is too long (at most %d)", len(e), MaxExpr)
	}
	measure, group, num, hasGroup, quoted, err := split(e)
	if err != nil {
		return Spec{}, err
	}
	info, ok := g.lookup(measure)
	if !ok {
		return Spec{}, fmt.Errorf("%q: unknown measure %q (measures: %s)", e, measure, g.measureKeys())
	}
	if !hasGroup {
		group = outcome.GroupOverall
	}
	group, err = g.group(group, quoted)
	if err != nil {
		return Spec{}, fmt.Errorf("%q: %w", e, err)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Spec{}, fmt.Errorf("%q: %q is not a number", e, num)
	}
	switch {
	case info.Scale == metrics.ScaleUnbounded && v < 0:
		return Spec{}, fmt.Errorf("%q: %v is negative (%s is ≥ 0)", e, v, measure)
	case info.Scale != metrics.ScaleUnbounded && (v < 0 || v > 1):
		return Spec{}, fmt.Errorf("%q: %v is outside [0,1] (the range of %s)", e, v, measure)
	}
	if v == 0 {
		v = 0 // no -0
	}
	return Spec{Measure: measure, Group: group, Value: v}, nil
}

// split cuts a trimmed expression into its measure, its group and its number.
// A bare group ends at the first '='; a quoted name or tag (type:"a=b") ends
// at its closing quote, which '=' must follow, and is returned unquoted.
func split(e string) (measure, group, num string, hasGroup, quoted bool, err error) {
	syntax := fmt.Errorf("%q: %w", e, ErrSyntax)
	i := strings.IndexAny(e, "@=")
	if i < 0 {
		return "", "", "", false, false, syntax
	}
	measure, hasGroup, num = strings.TrimSpace(e[:i]), e[i] == '@', e[i+1:]
	if hasGroup {
		group = strings.TrimLeftFunc(num, unicode.IsSpace)
		prefix, q := quotedGroup(group)
		if q != "" {
			lit, qerr := strconv.QuotedPrefix(q)
			if qerr != nil {
				return "", "", "", false, false, fmt.Errorf("%q: the quoted name after %s has no closing quote (write it as a Go string: \\\\ for \\, \\\" for \")", e, prefix)
			}
			name, _ := strconv.Unquote(lit) // QuotedPrefix checked it
			after := strings.TrimLeftFunc(q[len(lit):], unicode.IsSpace)
			if !strings.HasPrefix(after, "=") {
				return "", "", "", false, false, syntax
			}
			group, num, quoted = prefix+name, after[1:], true
		} else {
			var ok bool
			if group, num, ok = strings.Cut(group, "="); !ok {
				return "", "", "", false, false, syntax
			}
			group = strings.TrimSpace(group)
		}
	}
	num = strings.TrimSpace(num)
	if measure == "" || num == "" {
		return "", "", "", false, false, syntax
	}
	return measure, group, num, hasGroup, quoted, nil
}

// quotedGroup is the prefix and the rest of a group that starts with
// type:" or locale:" (the rest from its opening quote); "" when it does not.
func quotedGroup(s string) (prefix, rest string) {
	for _, p := range []string{TypePrefix, LocalePrefix} {
		if r, ok := strings.CutPrefix(s, p); ok && strings.HasPrefix(r, `"`) {
			return p, r
		}
	}
	return "", ""
}

func (g Grammar) lookup(key string) (metrics.Info, bool) {
	for _, m := range g.Measures {
		if m.Key == key {
			return m, true
		}
	}
	return metrics.Info{}, false
}

func (g Grammar) measureKeys() string {
	keys := make([]string, len(g.Measures))
	for i, m := range g.Measures {
		keys[i] = m.Key
	}
	return strings.Join(keys, ", ")
}

// group validates a group and returns its canonical form. A quoted type name
// is taken as it is (" x" is the type " x"); a bare one was trimmed at its end.
func (g Grammar) group(s string, quoted bool) (string, error) {
	if s == outcome.GroupOverall {
		return s, nil
	}
	if !g.Groups {
		return "", fmt.Errorf("unknown group %q (groups: %s)", s, outcome.GroupOverall)
	}
	choices := outcome.GroupOverall + ", " + TypePrefix + "NAME, " + LocalePrefix + "TAG"
	switch {
	case strings.HasPrefix(s, TypePrefix):
		if name := s[len(TypePrefix):]; name == "" || !quoted && strings.TrimSpace(name) == "" {
			return "", fmt.Errorf("group %q has no type name (groups: %s)", s, choices)
		}
		return s, nil
	case strings.HasPrefix(s, LocalePrefix):
		tag := strings.TrimSpace(s[len(LocalePrefix):])
		if tag == "" {
			return "", fmt.Errorf("group %q has no locale tag (groups: %s)", s, choices)
		}
		if g.CanonicalLocale != nil {
			tag = g.CanonicalLocale(tag)
		}
		return LocalePrefix + tag, nil
	}
	return "", fmt.Errorf("unknown group %q (groups: %s)", s, choices)
}

// List is the floors of one command, in command-line order, each target once.
type List []Spec

// Add appends s, refusing a second floor on the same measure and group.
func (l *List) Add(s Spec) error {
	for _, o := range *l {
		if o.Target() == s.Target() {
			return fmt.Errorf("two floors on %s (%s and %s): give one", s.Target(), o, s)
		}
	}
	*l = append(*l, s)
	return nil
}

// Find returns the floor on measure and group.
func (l List) Find(measure, group string) (Spec, bool) {
	for _, s := range l {
		if s.Measure == measure && s.Group == group {
			return s, true
		}
	}
	return Spec{}, false
}

// Observation is what a floor is decided on: its group as found in the data.
type Observation struct {
	// Found is false when the data has no such group; Groups then lists those it has.
	Found  bool
	Groups []string
	// GroupN counts the group's scored items (gold-carrying cases, evaluated
	// queries); N those with a value of the measure (fewer only for precomputed
	// scores that lack it).
	GroupN, N int64
	Mean      float64
	SD        float64 // sample standard deviation of the item values; NaN for N < 2
	Binary    bool    // every value is 0 or 1: the detectable difference is the binomial one
	// Empty is the reason when GroupN = 0; Absent when GroupN > 0 but N = 0.
	Empty, Absent outcome.Clause
	// Label names the group in the failure sentence ("overall", "locale:es-419").
	Label string
}

// OverClusters makes o's spread the one of a mean over the clusters of items
// in families (check's cases with a cluster key, compare's queries with
// clusters): clusters > 0 clusters and the mean's cluster-robust standard
// error se (metrics.ClusterTally, ClusterMeanSE). The detectable difference
// then comes from se·√N, never from the items as if independent (nor the
// binomial one of a proportion): NaN (too few to estimate) from a single
// cluster or from clusters whose means do not vary though the items do; no
// spread when no item varies either. Without clusters o is unchanged.
func (o *Observation) OverClusters(clusters int64, se float64) {
	if clusters == 0 {
		return
	}
	o.Binary = false
	switch {
	case se == 0 && o.SD == 0: // every item equal: no spread
	case se == 0 || math.IsNaN(se):
		o.SD = math.NaN()
	default:
		o.SD = se * math.Sqrt(float64(o.N))
	}
}

// Evaluate decides floor s on o as the gate name: fail when there is nothing to
// measure or the mean is below the floor, pass otherwise (at equality too, up to
// 1e-9 of floating-point noise). The reason states the smallest difference the
// n can detect at 80% power and α = 0.05 (Gate.Detectable) against the distance
// to the floor; a per-locale floor says it is indicative only.
func Evaluate(name string, s Spec, o Observation) outcome.Gate {
	g := outcome.New(name, outcome.Fail)
	g.Group, g.Measure, g.Threshold = s.Group, s.Measure, s.Value
	var why []outcome.Clause
	switch {
	case !o.Found:
		why = append(why, outcome.Clause{Code: outcome.NoSuchGroup, Names: o.Groups})
	case o.GroupN == 0:
		why = append(why, o.Empty)
	case o.N == 0:
		g.N = o.GroupN
		why = append(why, o.Absent)
	default:
		g.Value, g.N = o.Mean, o.N
		if o.Mean+Tolerance >= s.Value {
			g.Status = outcome.Pass
		} else {
			why = append(why, outcome.Clause{Code: outcome.BelowFloor, Name: o.Label, Value: o.Mean, Threshold: s.Value})
		}
		var note outcome.Clause
		g.Detectable, note = detectable(s.Value, o)
		why = append(why, note)
	}
	if strings.HasPrefix(s.Group, LocalePrefix) {
		why = append(why, outcome.Clause{Code: outcome.IndicativeOnly})
	}
	g.Why = why
	return g
}

// Tolerance absorbs floating-point noise when a mean equals its floor.
const Tolerance = 1e-9

// detectable is the smallest difference from the floor that o's n detects at
// metrics.DefaultPower and DefaultAlpha, in the direction of the observed mean
// (binomial for 0/1 values, from the observed sd otherwise), and the sentence
// comparing it with the distance to the floor.
func detectable(floor float64, o Observation) (float64, outcome.Clause) {
	dist := math.Abs(o.Mean - floor)
	c := outcome.Clause{N: o.N, Distance: dist, Power: metrics.DefaultPower, Alpha: metrics.DefaultAlpha}
	var mdd float64
	if o.Binary {
		down, up := metrics.MDDProportion(floor, o.N, metrics.DefaultAlpha, metrics.DefaultPower)
		mdd = up
		if o.Mean < floor {
			mdd = down
		}
		if math.IsNaN(mdd) {
			c.Code, c.Below = outcome.CannotDetect, o.Mean < floor
			return math.NaN(), c
		}
	} else {
		switch {
		case math.IsNaN(o.SD):
			c.Code = outcome.TooFewToEstimate
			return math.NaN(), c
		case o.SD == 0:
			c.Code, c.Value = outcome.NoSpread, o.Mean
			return math.NaN(), c
		}
		mdd = metrics.MDDMean(o.SD, o.N, metrics.DefaultAlpha, metrics.DefaultPower)
	}
	c.Code, c.Detectable, c.Only = outcome.Detects, mdd, dist < mdd
	return mdd, c
}

// AddLines adds to l the floors of v, one expression per line (the --floors
// flag, the floors Action input); blank lines and lines starting with # are
// skipped, and a second floor on one measure and group is refused.
func (g Grammar) AddLines(l *List, v string) error {
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := g.Parse(line)
		if err != nil {
			return err
		}
		if err := l.Add(s); err != nil {
			return err
		}
	}
	return nil
}

// Usage is the help text of a --floor flag of this grammar.
func (g Grammar) Usage() string {
	keys := make([]string, len(g.Measures))
	for i, m := range g.Measures {
		keys[i] = m.Key
	}
	return fmt.Sprintf("floor `MEASURE[@GROUP]=F`: the mean of MEASURE over GROUP must be at least F; repeatable. MEASURE: %s; GROUP: %s",
		strings.Join(keys, ", "), g.GroupUsage())
}

// GroupUsage is what a flag's help says of the GROUP of an expression in this
// grammar: its forms and, with groups, the quoted form of a name or tag (the
// help of --floor and of check's --max-drop, which reads the same grammar).
func (g Grammar) GroupUsage() string {
	if !g.Groups {
		return "@overall (the default)"
	}
	return "@overall (the default), @type:NAME or @locale:TAG; a NAME or TAG with '=', surrounding space, a leading '\"' or unprintable characters is written as a Go quoted string: @type:\"a=b\"=0.5"
}
