package cli

import (
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
)

// floorFlag collects --floor MEASURE[@GROUP]=F (repeatable) and --floors (the
// `floors` Action input: one expression per line) into one list; a second floor
// on the same measure and group is refused.
type floorFlag struct {
	grammar floor.Grammar
	list    *floor.List
}

func (f *floorFlag) String() string {
	if f == nil || f.list == nil {
		return ""
	}
	s := make([]string, len(*f.list))
	for i, x := range *f.list {
		s[i] = x.String()
	}
	return strings.Join(s, "\n")
}

func (f *floorFlag) Set(v string) error { return f.grammar.AddLines(f.list, v) }

// checkFloorGrammar is what check's floors may name: its registered measures
// (metrics.CaseMeasures), over overall, type:NAME or locale:TAG.
var checkFloorGrammar = check.FloorGrammar

// compareFloorGrammar is what compare's floors may name.
var compareFloorGrammar = compare.FloorGrammar

// floorUsage is the help text of --floor for a grammar.
func floorUsage(g floor.Grammar) string { return g.Usage() }
