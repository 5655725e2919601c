package calibrate

import "github.com/retrieval-gate/retrieval-gate/internal/outcome"

// panelGates are the gates of the ADR-0028 process checks: carried-over:NAME per
// carried-over dimension (with --lock-base) and blind-labels (with
// --git-anchoring). Finish appends them after the others.
func (r *Result) panelGates() {
	if co := r.CarriedOver; co != nil {
		for _, d := range co.Dimensions {
			g := outcome.New("carried-over:"+d.Name, outcome.Pass)
			g.Group, g.Measure, g.N = d.Name, outcome.MeasureChangedCases, int64(d.Labels)
			g.Value = float64(len(d.Changed))
			if d.Code != CarriedIdentical {
				name := ""
				if d.Code != CarriedChanged {
					name = string(d.Code)
				}
				g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.LabelsChanged, N: int64(len(d.Changed)), Name: name, Text: co.Base}}
			}
			r.Gates = append(r.Gates, g)
		}
	}
	if b := r.Blind; b != nil {
		g := outcome.New("blind-labels", outcome.Pass)
		var bad, total int64
		var raters []string
		for _, rb := range b.Raters {
			total += int64(rb.Labels)
			bad += int64(len(rb.Violations))
			if len(rb.Violations) > 0 {
				raters = append(raters, rb.Rater)
			}
		}
		g.Measure, g.N, g.Value = outcome.MeasureNotBlindLabels, total, float64(bad)
		if bad > 0 {
			g.Status, g.Why = outcome.Fail, []outcome.Clause{{Code: outcome.NotBlind, N: bad, M: total, Names: raters}}
		}
		r.Gates = append(r.Gates, g)
	}
}
