package gate

import (
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// SuggestFloors is a floor for every registered measure of every group of the
// run (overall, then the types, then the locales, each in the registry's
// order of measures), by floor.Suggest: what `check --suggest-floors` prints.
// Groups beyond MaxGroups are not computed and get none.
func (r *Result) SuggestFloors() []floor.Suggestion {
	var out []floor.Suggestion
	add := func(group string, g *Group) {
		for _, info := range metrics.CaseMeasures {
			m, ok := g.Metric(info.Key)
			if !ok {
				continue
			}
			out = append(out, floor.Suggest(floor.Observed{Measure: info.Key, Group: group, Summary: m.Summary, SD: m.SD, Binary: m.Binary,
				Clusters: m.Clusters, SE: m.SE}))
		}
	}
	add(outcome.GroupOverall, &r.Overall)
	for i := range r.ByType {
		add(floor.TypePrefix+r.ByType[i].Name, &r.ByType[i])
	}
	for i := range r.ByLocale {
		add(floor.LocalePrefix+r.ByLocale[i].Name, &r.ByLocale[i])
	}
	return out
}
