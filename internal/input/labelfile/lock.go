package labelfile

import (
	"bytes"
	"context"
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

	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

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
	// CarriedOver declares the dimension unchanged by the change under review
	// (`carried_over`, false when absent): its human labels must be identical to
	// those at the base ref (calibrate --lock-base).
	CarriedOver bool
	// Definition is the construct's definition as the lock freezes it
	// (`definition`, "" when absent): the rubric both sides apply, compared
	// with the base ref's (calibrate --lock-base) like the construct's name.
	Definition string
}

// PanelAdoption is the lock's record of the one-time move from the single-rater
// framing to a rater panel (ADR-0028; `panel_adoption`): why, and which
// dimensions it carried over. Against a base whose lock is single-rater,
// calibrate --lock-base accepts the changes it declares (raters single -> panel,
// the owner named, the listed dimensions' carried_over false -> true); once at
// the base it is frozen like every other constant.
type PanelAdoption struct {
	Reason      string
	CarriedOver []string // dimension names, sorted
}

// Rater framings of a lock (`raters`): who the judge is calibrated against.
const (
	// RatersSingle: one human label per case and dimension (the default).
	RatersSingle = "single"
	// RatersPanel: several raters per case, each label with its rater id, the
	// owner's adjudication only where the panel disagrees.
	RatersPanel = "panel"
)

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
	// Raters is the rater framing, RatersSingle or RatersPanel; RatersSingle when
	// the lock does not set it (RatersSet false). A frozen constant like the others.
	Raters    string
	RatersSet bool
	// Owner is the rater id of the owner (`owner`, "" when absent; needs a
	// panel): the one who adjudicates and who saw the judge's scores, so never
	// a panel rater outside the carried-over dimensions.
	Owner string
	// Adoption is the declared panel adoption (`panel_adoption`), nil when absent.
	Adoption *PanelAdoption
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

// checkDimension: the label's dimension is one of the lock's.
func (l *Lock) checkDimension(lb *Label) error {
	if _, ok := l.Dimensions[lb.Dimension]; !ok {
		return input.Errorf(lb.File, lb.Line, "dimension %q is not in the lock %s (lock dimensions: %s)",
			lb.Dimension, l.File, strings.Join(l.DimensionNames(), ", "))
	}
	return nil
}

// checkBin: a given bin is one of the lock's; else the score's bin is filled in.
func (l *Lock) checkBin(lb *Label) error {
	if lb.HasBin {
		if lb.Bin >= l.NumBins() {
			return input.Errorf(lb.File, lb.Line, "bin %d is out of range: the lock has %d bins (0..%d)", lb.Bin, l.NumBins(), l.NumBins()-1)
		}
		return nil
	}
	lb.Bin, lb.HasBin = l.BinOf(lb.Score), true
	return nil
}

// MaxLockBytes caps the size of a lock file (a lock is a few hundred bytes): a
// YAML lock's tree takes about 230 bytes per byte of input (1 MiB of
// "[0,0,…]" took 240 MB), so the cap is what bounds its memory.
const MaxLockBytes = 64 << 10

// ReadLockFile reads and parses the lock at path (ReadLock). A cancelled ctx ends
// the read with ctx.Err() within moments, even on a FIFO that never sends; a file
// over MaxLockBytes is an *input.Error.
func ReadLockFile(ctx context.Context, path string) (*Lock, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(input.Reader(ctx, f), MaxLockBytes+1))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("failed to read %s: %w", path, err)
	}
	return ReadLock(data, path)
}

// ReadLock parses a lock file, JSON or YAML with the same keys (see isYAMLLock). Unknown keys, missing keys, wrong types, bin edges
// not strictly ascending within [0,1], an unknown weighting, min_kappa outside
// [-1,1] and a lock over MaxLockBytes are *input.Error with file and line.
func ReadLock(data []byte, file string) (*Lock, error) {
	if len(data) > MaxLockBytes { // also a lock read from git (calibrate --lock-base)
		return nil, input.Errorf(file, 0, "the lock is larger than %d KiB", MaxLockBytes>>10)
	}
	data = bytes.TrimPrefix(data, input.BOM)
	var root *lockNode
	var err error
	if isYAMLLock(data, file) {
		root, err = parseLockYAML(data, file)
	} else {
		if err := notJSONLock(data, file); err != nil {
			return nil, err
		}
		root, err = parseLockJSON(data, file)
		var ie *input.Error
		if errors.As(err, &ie) && strings.HasPrefix(ie.Msg, "malformed JSON") {
			ie.Msg += lockFormatNote(file)
		}
	}
	if err != nil {
		return nil, err
	}
	return lockFromNode(root, file)
}

// notJSONLock refuses a lock read as JSON (its name, or its first byte) that
// does not start as JSON does, saying which format the lock is read as and
// why: a lock.json holding YAML was parsed as JSON, and its first YAML line
// reported as malformed JSON. Nothing the file holds is quoted.
func notJSONLock(data []byte, file string) error {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || t[0] == '{' || t[0] == '[' {
		return nil // empty, or JSON: the parser says what is wrong
	}
	line := 1 + bytes.Count(data[:len(data)-len(t)], []byte{'\n'})
	looks := "it does not start with '{'"
	if yamlKeyLine.Match(t) {
		looks = "it looks like YAML (KEY: value)"
	}
	return input.Errorf(file, line, "not JSON: %s, and %s; a lock is JSON (an object {\"dimensions\": …}) or YAML with the same keys: name a YAML lock .yaml or .yml", lockFormatWhy(file), looks)
}

// yamlKeyLine is a line that starts with a YAML mapping key.
var yamlKeyLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*[ \t]*:`)

// lockFormatWhy says why a lock is read as JSON.
func lockFormatWhy(file string) string {
	if strings.EqualFold(filepath.Ext(file), ".json") {
		return "a lock whose name ends in .json is read as JSON"
	}
	return "a lock whose first character is '{' is read as JSON"
}

// lockFormatNote is what a JSON error of a lock adds: the format it was read as.
func lockFormatNote(file string) string { return " (" + lockFormatWhy(file) + ")" }

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

// parseLockJSON reads a JSON lock with jsonpos (nesting limited to 64).
func parseLockJSON(data []byte, file string) (*lockNode, error) {
	var p jsonpos.Parser
	v, err := p.Parse(data, 1, 64)
	if err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) {
			line, msg := se.DescribeAt(data)
			return nil, input.Errorf(file, line, "%s", msg)
		}
		return nil, input.Errorf(file, 0, "malformed JSON: %v", err)
	}
	return lockFromJSON(data, file, v)
}

func lockFromJSON(data []byte, file string, v *jsonpos.Value) (*lockNode, error) {
	n := &lockNode{line: v.Line}
	switch v.Kind {
	case jsonpos.Object:
		n.kind = "object"
		for _, m := range v.Members {
			c, err := lockFromJSON(data, file, m.Value)
			if err != nil {
				return nil, err
			}
			c.line = m.Line // a member is named at its key's line
			n.keys, n.vals = append(n.keys, m.Key), append(n.vals, c)
		}
	case jsonpos.Array:
		n.kind = "array"
		for _, e := range v.Elems {
			c, err := lockFromJSON(data, file, e)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, c)
		}
	case jsonpos.String:
		n.kind, n.str = "string", v.Str
	case jsonpos.Number:
		f, ok := v.Float64(data)
		if !ok {
			return nil, input.Errorf(file, v.Line, "number %s is out of range", v.Raw(data))
		}
		n.kind, n.num = "number", f
	case jsonpos.Bool:
		n.kind, n.b = "bool", v.Bool
	default:
		n.kind = "null"
	}
	return n, nil
}

var lockYAMLLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseLockYAML(data []byte, file string) (*lockNode, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := lockYAMLLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, input.Errorf(file, line, "malformed YAML: %s", m[2])
		}
		return nil, input.Errorf(file, 0, "malformed YAML: %s", strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, input.Errorf(file, 0, "the lock is empty")
	}
	return lockYAMLToTree(doc.Content[0], file, 0)
}

func lockYAMLToTree(y *yaml.Node, file string, depth int) (*lockNode, error) {
	if depth > 64 {
		return nil, input.Errorf(file, y.Line, "nesting deeper than 64")
	}
	n := &lockNode{line: y.Line}
	switch y.Kind {
	case yaml.MappingNode:
		n.kind = "object"
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, input.Errorf(file, k.Line, "keys must be plain strings")
			}
			if slices.Contains(n.keys, k.Value) {
				return nil, input.Errorf(file, k.Line, "duplicate key %s at column %d", jsonpos.QuoteKey([]byte(k.Value)), k.Column)
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
				return nil, input.Errorf(file, y.Line, "%q is not a number", y.Value)
			}
			n.kind, n.num = "number", f
		case "!!bool":
			var b bool
			if err := y.Decode(&b); err != nil {
				return nil, input.Errorf(file, y.Line, "%q is not a boolean", y.Value)
			}
			n.kind, n.b = "bool", b
		case "!!null":
			n.kind = "null"
		default:
			n.kind, n.str = "string", y.Value
		}
	case yaml.AliasNode:
		return nil, input.Errorf(file, y.Line, "YAML aliases are not allowed in a lock")
	default:
		return nil, input.Errorf(file, y.Line, "unexpected YAML node")
	}
	return n, nil
}

func lockFromNode(root *lockNode, file string) (*Lock, error) {
	if root.kind != "object" {
		return nil, input.Errorf(file, root.line, "the lock must be an object with dimensions, bins, kappa_weighting and min_kappa, got %s", root.kind)
	}
	lock := &Lock{File: file, Dimensions: map[string]LockDimension{}}
	for i, k := range root.keys {
		switch k {
		case "dimensions", "bins", "kappa_weighting", "min_kappa", "min_n", "raters", "owner", "panel_adoption":
		default:
			return nil, input.Errorf(file, root.vals[i].line, "unknown key %q (allowed: dimensions, bins, kappa_weighting, min_kappa, min_n, raters, owner, panel_adoption)", k)
		}
	}
	need := func(key, kind string) (*lockNode, error) {
		v := root.get(key)
		if v == nil {
			return nil, input.Errorf(file, root.line, "the lock has no %q", key)
		}
		if v.kind != kind {
			return nil, input.Errorf(file, v.line, "%q must be %s %s, got %s", key, lockArticle(kind), kind, v.kind)
		}
		return v, nil
	}
	dims, err := need("dimensions", "object")
	if err != nil {
		return nil, err
	}
	if len(dims.keys) == 0 {
		return nil, input.Errorf(file, dims.line, "\"dimensions\" is empty")
	}
	for i, name := range dims.keys {
		d := dims.vals[i]
		if strings.TrimSpace(name) == "" {
			return nil, input.Errorf(file, d.line, "a dimension name is empty")
		}
		if d.kind != "object" {
			return nil, input.Errorf(file, d.line, "dimension %q must be an object with construct and gated, got %s", name, d.kind)
		}
		var ld LockDimension
		var hasC, hasG bool
		for j, k := range d.keys {
			v := d.vals[j]
			switch k {
			case "construct":
				if v.kind != "string" || strings.TrimSpace(v.str) == "" {
					return nil, input.Errorf(file, v.line, "dimension %q: construct must be a non-empty string", name)
				}
				ld.Construct, hasC = v.str, true
			case "gated":
				if v.kind != "bool" {
					return nil, input.Errorf(file, v.line, "dimension %q: gated must be true or false, got %s", name, v.kind)
				}
				ld.Gated, hasG = v.b, true
			case "carried_over":
				if v.kind != "bool" {
					return nil, input.Errorf(file, v.line, "dimension %q: carried_over must be true or false, got %s", name, v.kind)
				}
				ld.CarriedOver = v.b
			case "definition":
				if v.kind != "string" || strings.TrimSpace(v.str) == "" {
					return nil, input.Errorf(file, v.line, "dimension %q: definition must be a non-empty string (the construct's definition, frozen with the lock)", name)
				}
				ld.Definition = v.str
			default:
				return nil, input.Errorf(file, v.line, "dimension %q: unknown key %q (allowed: construct, gated, carried_over, definition)", name, k)
			}
		}
		if !hasC {
			return nil, input.Errorf(file, d.line, "dimension %q has no construct", name)
		}
		if !hasG {
			return nil, input.Errorf(file, d.line, "dimension %q has no gated (true or false)", name)
		}
		lock.Dimensions[name] = ld
	}
	bins, err := need("bins", "array")
	if err != nil {
		return nil, err
	}
	if len(bins.vals) == 0 {
		return nil, input.Errorf(file, bins.line, "\"bins\" needs at least one edge (two bins)")
	}
	if len(bins.vals) > MaxLockEdges {
		return nil, input.Errorf(file, bins.line, "\"bins\" has %d edges; at most %d are allowed", len(bins.vals), MaxLockEdges)
	}
	for i, e := range bins.vals {
		if e.kind != "number" {
			return nil, input.Errorf(file, e.line, "bins[%d] must be a number, got %s", i, e.kind)
		}
		if math.IsNaN(e.num) || e.num < 0 || e.num > 1 {
			return nil, input.Errorf(file, e.line, "bins[%d] = %v is outside [0,1]", i, e.num)
		}
		if i > 0 && e.num <= lock.Bins[i-1] {
			return nil, input.Errorf(file, e.line, "bins must be strictly ascending: bins[%d] = %v follows %v", i, e.num, lock.Bins[i-1])
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
		return nil, input.Errorf(file, w.line, "kappa_weighting %q is not one of none, linear, quadratic", w.str)
	}
	mk, err := need("min_kappa", "number")
	if err != nil {
		return nil, err
	}
	if math.IsNaN(mk.num) || mk.num < -1 || mk.num > 1 {
		return nil, input.Errorf(file, mk.line, "min_kappa %v is outside [-1,1]", mk.num)
	}
	lock.MinKappa = mk.num
	lock.MinN = DefaultLockMinN
	if v := root.get("min_n"); v != nil {
		if v.kind != "number" {
			return nil, input.Errorf(file, v.line, "\"min_n\" must be a number, got %s", v.kind)
		}
		if v.num != math.Trunc(v.num) || v.num < 1 || v.num > math.MaxInt32 {
			return nil, input.Errorf(file, v.line, "min_n %v is not an integer >= 1", v.num)
		}
		lock.MinN, lock.MinNSet = int(v.num), true
	}
	lock.Raters = RatersSingle
	if v := root.get("raters"); v != nil {
		if v.kind != "string" || (v.str != RatersSingle && v.str != RatersPanel) {
			return nil, input.Errorf(file, v.line, "\"raters\" must be %q or %q", RatersSingle, RatersPanel)
		}
		lock.Raters, lock.RatersSet = v.str, true
	}
	if err := lockPanelRoles(lock, root, file); err != nil {
		return nil, err
	}
	return lock, nil
}

// lockPanelRoles reads the owner and the panel adoption: both need a panel, the
// adoption names the owner, a reason and carried-over dimensions of the lock.
func lockPanelRoles(lock *Lock, root *lockNode, file string) error {
	if v := root.get("owner"); v != nil {
		if v.kind != "string" || strings.TrimSpace(v.str) == "" {
			return input.Errorf(file, v.line, "\"owner\" must be a non-empty string (the owner's rater id)")
		}
		if lock.Raters != RatersPanel {
			return input.Errorf(file, v.line, "\"owner\" names who adjudicates a rater panel: it needs \"raters\": %q", RatersPanel)
		}
		lock.Owner = v.str
	}
	v := root.get("panel_adoption")
	if v == nil {
		return nil
	}
	if v.kind != "object" {
		return input.Errorf(file, v.line, "\"panel_adoption\" must be an object with reason and carried_over, got %s", v.kind)
	}
	if lock.Raters != RatersPanel {
		return input.Errorf(file, v.line, "\"panel_adoption\" records the move to a rater panel: it needs \"raters\": %q", RatersPanel)
	}
	if lock.Owner == "" {
		return input.Errorf(file, v.line, "\"panel_adoption\" needs \"owner\": the rater id of the owner, whose single-rater labels the panel replaces")
	}
	a := &PanelAdoption{CarriedOver: []string{}}
	hasReason := false
	for i, k := range v.keys {
		e := v.vals[i]
		switch k {
		case "reason":
			if e.kind != "string" || strings.TrimSpace(e.str) == "" {
				return input.Errorf(file, e.line, "panel_adoption: reason must be a non-empty string (why the panel was adopted)")
			}
			a.Reason, hasReason = e.str, true
		case "carried_over":
			if e.kind != "array" {
				return input.Errorf(file, e.line, "panel_adoption: carried_over must be an array of dimension names, got %s", e.kind)
			}
			for _, d := range e.vals {
				if d.kind != "string" {
					return input.Errorf(file, d.line, "panel_adoption: carried_over must be an array of dimension names, got %s in it", d.kind)
				}
				ld, ok := lock.Dimensions[d.str]
				switch {
				case !ok:
					return input.Errorf(file, d.line, "panel_adoption: carried_over names %q, which is not a dimension of the lock (%s)", d.str, strings.Join(lock.DimensionNames(), ", "))
				case !ld.CarriedOver:
					return input.Errorf(file, d.line, "panel_adoption: carried_over names %q, whose \"carried_over\" is not true", d.str)
				case slices.Contains(a.CarriedOver, d.str):
					return input.Errorf(file, d.line, "panel_adoption: carried_over names %q twice", d.str)
				}
				a.CarriedOver = append(a.CarriedOver, d.str)
			}
		default:
			return input.Errorf(file, e.line, "panel_adoption: unknown key %q (allowed: reason, carried_over)", k)
		}
	}
	if !hasReason {
		return input.Errorf(file, v.line, "panel_adoption has no reason: the adoption is recorded with why it was made")
	}
	slices.Sort(a.CarriedOver)
	lock.Adoption = a
	return nil
}

func lockArticle(kind string) string {
	if kind == "object" || kind == "array" {
		return "an"
	}
	return "a"
}
