package cli

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
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

func (f *floorFlag) Set(v string) error {
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := f.grammar.Parse(line)
		if err != nil {
			return err
		}
		if err := f.list.Add(s); err != nil {
			return err
		}
	}
	return nil
}

// checkFloorGrammar is what check's floors may name: its registered measures
// (metrics.CaseMeasures), over overall, type:NAME or locale:TAG.
var checkFloorGrammar = check.FloorGrammar

// compareFloorGrammar is what compare's floors may name: its registered measures
// (metrics.QueryMeasures) over all the evaluated queries.
var compareFloorGrammar = floor.Grammar{Measures: queryInfos()}

func queryInfos() []metrics.Info {
	out := make([]metrics.Info, len(metrics.QueryMeasures))
	for i, m := range metrics.QueryMeasures {
		out[i] = m.Info
	}
	return out
}

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
func floorUsage(g floor.Grammar) string {
	keys := make([]string, len(g.Measures))
	for i, m := range g.Measures {
		keys[i] = m.Key
	}
	groups := "@overall (the default)"
	if g.Groups {
		groups = "@overall (the default), @type:NAME or @locale:TAG"
	}
	return fmt.Sprintf("floor `MEASURE[@GROUP]=F`: the mean of MEASURE over GROUP must be at least F; repeatable. MEASURE: %s; GROUP: %s",
		strings.Join(keys, ", "), groups)
}
