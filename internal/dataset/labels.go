package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"
	"go.yaml.in/yaml/v3"
)

// labelBOM is skipped at the start of a label or lock file (editors on Windows write it).
var labelBOM = []byte("\xef\xbb\xbf")

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
}

// ReadLabels reads a human-labels or judge-scores JSONL file (named file in errors).
// Blank lines are skipped; unknown keys are ignored. Every other problem is an
// *Error with file and line: malformed JSON, a missing or mistyped field, a score
// outside [0,1], a timestamp that is not RFC 3339, a duplicate (case_id, dimension).
// When lock is not nil, a dimension absent from the lock and a bin outside the lock's
// bins are errors too, and every label gets its Bin from the lock's edges.
func ReadLabels(r io.Reader, file string, side LabelSide, lock *Lock) ([]Label, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var p fastjson.Parser
	var out []Label
	type key struct{ c, d string }
	seen := map[key]int{}
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, labelBOM)
		}
		if isBlank(b) {
			continue
		}
		l, err := parseLabelLine(&p, b, file, line, side)
		if err != nil {
			return nil, err
		}
		if lock != nil {
			if err := lock.checkLabel(&l); err != nil {
				return nil, err
			}
		}
		k := key{l.CaseID, l.Dimension}
		if first, dup := seen[k]; dup {
			return nil, Errorf(file, line, "duplicate label for case %q, dimension %q (first at line %d)", l.CaseID, l.Dimension, first)
		}
		seen[k] = line
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, Errorf(file, line+1, "line longer than 16 MiB")
		}
		return nil, fmt.Errorf("failed to read %s: %w", file, err)
	}
	return out, nil
}

func parseLabelLine(p *fastjson.Parser, b []byte, file string, line int, side LabelSide) (Label, error) {
	l := Label{File: file, Line: line, Side: side}
	v, err := p.ParseBytes(b)
	if err != nil {
		return l, Errorf(file, line, "malformed JSON: %v", err)
	}
	o, err := v.Object()
	if err != nil {
		return l, Errorf(file, line, "a %s label must be a JSON object, got %s", side, v.Type())
	}
	var perr error
	var seen uint8 // known keys met so far, one bit each
	str := func(key string, val *fastjson.Value, dst *string) {
		if val.Type() != fastjson.TypeString {
			perr = Errorf(file, line, "field %q must be a string, got %s", key, val.Type())
			return
		}
		*dst = string(val.GetStringBytes())
		if strings.TrimSpace(*dst) == "" {
			perr = Errorf(file, line, "field %q is empty", key)
		}
	}
	var at string
	o.Visit(func(k []byte, val *fastjson.Value) {
		if perr != nil {
			return
		}
		key := string(k)
		if bit := labelKeyBit(key, side); bit != 0 {
			if seen&bit != 0 {
				perr = Errorf(file, line, "key %q appears twice", key)
				return
			}
			seen |= bit
		}
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
			if val.Type() != fastjson.TypeNumber {
				perr = Errorf(file, line, "field \"score\" must be a number in [0,1], got %s", val.Type())
				return
			}
			f := val.GetFloat64()
			if math.IsNaN(f) || f < 0 || f > 1 {
				perr = Errorf(file, line, "score %s is outside [0,1]", val.String())
				return
			}
			l.Score, l.HasScore = f, true
		case "bin":
			if side == JudgeSide {
				perr = Errorf(file, line, "a judge score gives \"score\", not \"bin\"")
				return
			}
			if val.Type() != fastjson.TypeNumber {
				perr = Errorf(file, line, "field \"bin\" must be a non-negative integer, got %s", val.Type())
				return
			}
			f := val.GetFloat64()
			if f < 0 || f != math.Trunc(f) || f > 1<<20 {
				perr = Errorf(file, line, "bin %s is not a non-negative integer", val.String())
				return
			}
			l.Bin, l.HasBin = int(f), true
		}
	})
	if perr != nil {
		return l, perr
	}
	for _, req := range []struct {
		key string
		v   string
	}{{"case_id", l.CaseID}, {"dimension", l.Dimension}, {"construct", l.Construct}, {side.timeKey(), at}} {
		if req.v == "" {
			return l, Errorf(file, line, "%s label has no %q", side, req.key)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return l, Errorf(file, line, "%s %q is not an RFC 3339 timestamp", side.timeKey(), at)
	}
	l.At = t
	switch {
	case l.HasScore && l.HasBin:
		return l, Errorf(file, line, "human label has both \"score\" and \"bin\"; give one")
	case !l.HasScore && !l.HasBin && side == HumanSide:
		return l, Errorf(file, line, "human label has neither \"score\" nor \"bin\"")
	case !l.HasScore && side == JudgeSide:
		return l, Errorf(file, line, "judge label has no \"score\"")
	}
	return l, nil
}

// labelKeyBit is the bit of a known label key, 0 for keys the reader ignores.
func labelKeyBit(key string, side LabelSide) uint8 {
	switch key {
	case "case_id":
		return 1
	case "dimension":
		return 2
	case "construct":
		return 4
	case "score":
		return 8
	case "bin":
		return 16
	case side.timeKey():
		return 32
	}
	return 0
}

// Lock weighting schemes for weighted kappa.
const (
	WeightingNone      = "none"
	WeightingLinear    = "linear"
	WeightingQuadratic = "quadratic"
)

// LockDimension is one frozen dimension: the construct both sides must measure,
// and whether its kappa is gated.
type LockDimension struct {
	Construct string
	Gated     bool
}

// Lock is the file of frozen calibration constants.
type Lock struct {
	File           string
	Dimensions     map[string]LockDimension
	Bins           []float64 // edges, strictly ascending, within [0,1]
	KappaWeighting string    // none, linear or quadratic
	MinKappa       float64   // in [-1,1]
	// MinN is the fewest paired cases a gated dimension needs (min_n, an integer
	// ≥ 1); DefaultLockMinN when the lock does not set it (MinNSet false).
	MinN    int
	MinNSet bool
}

// DefaultLockMinN is the lock's min_n when it does not set one.
const DefaultLockMinN = 30

// NumBins is the number of bins: one more than the number of edges.
func (l *Lock) NumBins() int { return len(l.Bins) + 1 }

// BinOf is the bin of score s: the number of edges ≤ s.
func (l *Lock) BinOf(s float64) int {
	return sort.Search(len(l.Bins), func(i int) bool { return l.Bins[i] > s })
}

// DimensionNames returns the lock's dimensions, sorted.
func (l *Lock) DimensionNames() []string {
	names := make([]string, 0, len(l.Dimensions))
	for n := range l.Dimensions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkLabel validates a label against the lock and fills its Bin.
func (l *Lock) checkLabel(lb *Label) error {
	if _, ok := l.Dimensions[lb.Dimension]; !ok {
		return Errorf(lb.File, lb.Line, "dimension %q is not in the lock %s (lock dimensions: %s)",
			lb.Dimension, l.File, strings.Join(l.DimensionNames(), ", "))
	}
	if lb.HasBin {
		if lb.Bin >= l.NumBins() {
			return Errorf(lb.File, lb.Line, "bin %d is out of range: the lock has %d bins (0..%d)", lb.Bin, l.NumBins(), l.NumBins()-1)
		}
		return nil
	}
	lb.Bin, lb.HasBin = l.BinOf(lb.Score), true
	return nil
}

// ReadLock parses a lock file, JSON or YAML with the same keys (see isYAMLLock). Unknown keys, missing keys, wrong types, bin edges
// not strictly ascending within [0,1], an unknown weighting and min_kappa outside
// [-1,1] are *Error with file and line.
func ReadLock(data []byte, file string) (*Lock, error) {
	data = bytes.TrimPrefix(data, labelBOM)
	var root *lockNode
	var err error
	if isYAMLLock(data, file) {
		root, err = parseLockYAML(data, file)
	} else {
		root, err = parseLockJSON(data, file)
	}
	if err != nil {
		return nil, err
	}
	return lockFromNode(root, file)
}

// isYAMLLock: a .yaml or .yml name is YAML, a .json name JSON; any other name is
// JSON when its first non-blank byte is '{', else YAML.
func isYAMLLock(data []byte, file string) bool {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
		return true
	case ".json":
		return false
	}
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) == 0 || t[0] != '{'
}

// lockNode is a parsed JSON or YAML value with the line it starts on.
type lockNode struct {
	line int
	kind string // object, array, string, number, bool, null
	keys []string
	vals []*lockNode // object values (parallel to keys) or array items
	str  string
	num  float64
	b    bool
}

func (n *lockNode) get(key string) *lockNode {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func parseLockJSON(data []byte, file string) (*lockNode, error) {
	lines := lockLineStarts(data)
	lineAt := func(off int64) int {
		return sort.Search(len(lines), func(i int) bool { return int64(lines[i]) > off })
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := min(se.Offset, int64(len(data))-1) // the offending byte
			return Errorf(file, lineAt(off), "malformed JSON: %v", se)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Errorf(file, lineAt(int64(len(data))-1), "malformed JSON: unexpected end of file")
		}
		return Errorf(file, 0, "malformed JSON: %v", err)
	}
	// tokStart finds the line of the token that ends at the decoder's offset.
	var walk func(depth int) (*lockNode, error)
	walk = func(depth int) (*lockNode, error) {
		if depth > 64 {
			return nil, Errorf(file, lineAt(dec.InputOffset()), "nesting deeper than 64")
		}
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		n := &lockNode{line: lineAt(lockSkipSpace(data, before))}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' {
				n.kind = "object"
				for dec.More() {
					kb := dec.InputOffset()
					kt, err := dec.Token()
					if err != nil {
						return nil, syntax(err)
					}
					k, _ := kt.(string)
					if slices.Contains(n.keys, k) {
						return nil, Errorf(file, lineAt(lockSkipSpace(data, kb)), "key %q appears twice", k)
					}
					v, err := walk(depth + 1)
					if err != nil {
						return nil, err
					}
					n.keys, n.vals = append(n.keys, k), append(n.vals, v)
				}
			} else {
				n.kind = "array"
				for dec.More() {
					v, err := walk(depth + 1)
					if err != nil {
						return nil, err
					}
					n.vals = append(n.vals, v)
				}
			}
			if _, err := dec.Token(); err != nil { // closing delimiter
				return nil, syntax(err)
			}
		case string:
			n.kind, n.str = "string", t
		case json.Number:
			f, err := strconv.ParseFloat(string(t), 64)
			if err != nil {
				return nil, Errorf(file, n.line, "number %s is out of range", t)
			}
			n.kind, n.num = "number", f
		case bool:
			n.kind, n.b = "bool", t
		case nil:
			n.kind = "null"
		}
		return n, nil
	}
	root, err := walk(0)
	if err != nil {
		return nil, err
	}
	if off := dec.InputOffset(); lockSkipSpace(data, off) < int64(len(data)) {
		return nil, Errorf(file, lineAt(lockSkipSpace(data, off)), "unexpected data after the lock object")
	}
	return root, nil
}

func lockSkipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// lockLineStarts returns the offset just past each newline, so the 1-based line of
// offset o is the number of entries ≤ o, plus one.
func lockLineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

var lockYAMLLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseLockYAML(data []byte, file string) (*lockNode, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := lockYAMLLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, Errorf(file, line, "malformed YAML: %s", m[2])
		}
		return nil, Errorf(file, 0, "malformed YAML: %s", strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, Errorf(file, 0, "the lock is empty")
	}
	return lockYAMLToTree(doc.Content[0], file, 0)
}

func lockYAMLToTree(y *yaml.Node, file string, depth int) (*lockNode, error) {
	if depth > 64 {
		return nil, Errorf(file, y.Line, "nesting deeper than 64")
	}
	n := &lockNode{line: y.Line}
	switch y.Kind {
	case yaml.MappingNode:
		n.kind = "object"
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, Errorf(file, k.Line, "keys must be plain strings")
			}
			if slices.Contains(n.keys, k.Value) {
				return nil, Errorf(file, k.Line, "key %q appears twice", k.Value)
			}
			v, err := lockYAMLToTree(y.Content[i+1], file, depth+1)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k.Value), append(n.vals, v)
		}
	case yaml.SequenceNode:
		n.kind = "array"
		for _, c := range y.Content {
			v, err := lockYAMLToTree(c, file, depth+1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
	case yaml.ScalarNode:
		switch y.ShortTag() {
		case "!!int", "!!float":
			var f float64
			if err := y.Decode(&f); err != nil {
				return nil, Errorf(file, y.Line, "%q is not a number", y.Value)
			}
			n.kind, n.num = "number", f
		case "!!bool":
			var b bool
			if err := y.Decode(&b); err != nil {
				return nil, Errorf(file, y.Line, "%q is not a boolean", y.Value)
			}
			n.kind, n.b = "bool", b
		case "!!null":
			n.kind = "null"
		default:
			n.kind, n.str = "string", y.Value
		}
	case yaml.AliasNode:
		return nil, Errorf(file, y.Line, "YAML aliases are not allowed in a lock")
	default:
		return nil, Errorf(file, y.Line, "unexpected YAML node")
	}
	return n, nil
}

func lockFromNode(root *lockNode, file string) (*Lock, error) {
	if root.kind != "object" {
		return nil, Errorf(file, root.line, "the lock must be an object with dimensions, bins, kappa_weighting and min_kappa, got %s", root.kind)
	}
	lock := &Lock{File: file, Dimensions: map[string]LockDimension{}}
	for i, k := range root.keys {
		switch k {
		case "dimensions", "bins", "kappa_weighting", "min_kappa", "min_n":
		default:
			return nil, Errorf(file, root.vals[i].line, "unknown key %q (allowed: dimensions, bins, kappa_weighting, min_kappa, min_n)", k)
		}
	}
	need := func(key, kind string) (*lockNode, error) {
		v := root.get(key)
		if v == nil {
			return nil, Errorf(file, root.line, "the lock has no %q", key)
		}
		if v.kind != kind {
			return nil, Errorf(file, v.line, "%q must be %s %s, got %s", key, lockArticle(kind), kind, v.kind)
		}
		return v, nil
	}
	dims, err := need("dimensions", "object")
	if err != nil {
		return nil, err
	}
	if len(dims.keys) == 0 {
		return nil, Errorf(file, dims.line, "\"dimensions\" is empty")
	}
	for i, name := range dims.keys {
		d := dims.vals[i]
		if strings.TrimSpace(name) == "" {
			return nil, Errorf(file, d.line, "a dimension name is empty")
		}
		if d.kind != "object" {
			return nil, Errorf(file, d.line, "dimension %q must be an object with construct and gated, got %s", name, d.kind)
		}
		var ld LockDimension
		var hasC, hasG bool
		for j, k := range d.keys {
			v := d.vals[j]
			switch k {
			case "construct":
				if v.kind != "string" || strings.TrimSpace(v.str) == "" {
					return nil, Errorf(file, v.line, "dimension %q: construct must be a non-empty string", name)
				}
				ld.Construct, hasC = v.str, true
			case "gated":
				if v.kind != "bool" {
					return nil, Errorf(file, v.line, "dimension %q: gated must be true or false, got %s", name, v.kind)
				}
				ld.Gated, hasG = v.b, true
			default:
				return nil, Errorf(file, v.line, "dimension %q: unknown key %q (allowed: construct, gated)", name, k)
			}
		}
		if !hasC {
			return nil, Errorf(file, d.line, "dimension %q has no construct", name)
		}
		if !hasG {
			return nil, Errorf(file, d.line, "dimension %q has no gated (true or false)", name)
		}
		lock.Dimensions[name] = ld
	}
	bins, err := need("bins", "array")
	if err != nil {
		return nil, err
	}
	if len(bins.vals) == 0 {
		return nil, Errorf(file, bins.line, "\"bins\" needs at least one edge (two bins)")
	}
	if len(bins.vals) > MaxLockEdges {
		return nil, Errorf(file, bins.line, "\"bins\" has %d edges; at most %d are allowed", len(bins.vals), MaxLockEdges)
	}
	for i, e := range bins.vals {
		if e.kind != "number" {
			return nil, Errorf(file, e.line, "bins[%d] must be a number, got %s", i, e.kind)
		}
		if math.IsNaN(e.num) || e.num < 0 || e.num > 1 {
			return nil, Errorf(file, e.line, "bins[%d] = %v is outside [0,1]", i, e.num)
		}
		if i > 0 && e.num <= lock.Bins[i-1] {
			return nil, Errorf(file, e.line, "bins must be strictly ascending: bins[%d] = %v follows %v", i, e.num, lock.Bins[i-1])
		}
		lock.Bins = append(lock.Bins, e.num)
	}
	w, err := need("kappa_weighting", "string")
	if err != nil {
		return nil, err
	}
	switch w.str {
	case WeightingNone, WeightingLinear, WeightingQuadratic:
		lock.KappaWeighting = w.str
	default:
		return nil, Errorf(file, w.line, "kappa_weighting %q is not one of none, linear, quadratic", w.str)
	}
	mk, err := need("min_kappa", "number")
	if err != nil {
		return nil, err
	}
	if math.IsNaN(mk.num) || mk.num < -1 || mk.num > 1 {
		return nil, Errorf(file, mk.line, "min_kappa %v is outside [-1,1]", mk.num)
	}
	lock.MinKappa = mk.num
	lock.MinN = DefaultLockMinN
	if v := root.get("min_n"); v != nil {
		if v.kind != "number" {
			return nil, Errorf(file, v.line, "\"min_n\" must be a number, got %s", v.kind)
		}
		if v.num != math.Trunc(v.num) || v.num < 1 || v.num > math.MaxInt32 {
			return nil, Errorf(file, v.line, "min_n %v is not an integer >= 1", v.num)
		}
		lock.MinN, lock.MinNSet = int(v.num), true
	}
	return lock, nil
}

func lockArticle(kind string) string {
	if kind == "object" || kind == "array" {
		return "an"
	}
	return "a"
}
