package cli

import (
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// floorFlag collects --floor MEASURE[@GROUP]=F (repeatable) and --floors (the
// `floors` Action input: one expression per line) into one list; a second floor
// on the same measure and group is refused.
type floorFlag struct {
	grammar floor.Grammar
	list    floor.List
}

func (f *floorFlag) String() string {
	if f == nil {
		return ""
	}
	s := make([]string, len(f.list))
	for i, x := range f.list {
		s[i] = x.String()
	}
	return strings.Join(s, "\n")
}

func (f *floorFlag) Set(v string) error { return f.grammar.AddLines(&f.list, v) }

// checkFloorGrammar is what check's floors may name: its registered measures
// (metrics.CaseMeasures), over overall, type:NAME or locale:TAG.
var checkFloorGrammar = check.FloorGrammar

// compareFloorGrammar is what compare's floors may name.
var compareFloorGrammar = compare.FloorGrammar

// shorthand is a floor flag of its own (--min-hit, --min-recall) on the
// overall mean of key.
type shorthand struct {
	flag string
	set  bool
	key  string
}

// shorthandConflict refuses a --min-hit / --min-recall together with a --floor
// on the same measure of the overall group (two thresholds on one number).
func shorthandConflict(cmd string, src *sources, floors floor.List, shorthands ...shorthand) error {
	for _, sh := range shorthands {
		if !sh.set {
			continue
		}
		if s, ok := floors.Find(sh.key, outcome.GroupOverall); ok {
			return usagef("%s: %s and %s %s both set a floor on %s; give one", cmd, src.name(sh.flag), src.first("floor", "floors"), s, s.Target())
		}
	}
	return nil
}

// floorUsage is the help text of --floor for a grammar.
func floorUsage(g floor.Grammar) string { return g.Usage() }
