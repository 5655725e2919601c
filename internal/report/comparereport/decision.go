package comparereport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// Decision is the comparison's one decision (compare.Decision): the verdict,
// the best strategy, the strategies the decision keeps (contenders, best
// first), what they say of the reranker ("use", "skip", "either"; empty: the
// names do not say) and the simplest of them.
type Decision struct {
	BelowFloors []BelowFloor `json:"below_floors,omitempty"`
	Best        string       `json:"best"`
	Contenders  []string     `json:"contenders"`
	Reranker    string       `json:"reranker,omitempty"`
	Simplest    string       `json:"simplest"`
	Verdict     string       `json:"verdict"`
}

// BelowFloor is a floor of the gate that the decision's strategy fails
// (compare.BelowFloor): the measure, the floor, its mean and n.
type BelowFloor struct {
	Measure   string       `json:"measure"`
	N         int64        `json:"n"`
	Threshold format.Float `json:"threshold"`
	Value     format.Float `json:"value"`
}

func newDecision(d compare.Decision) *Decision {
	if d.Verdict == "" {
		return nil
	}
	var below []BelowFloor
	for _, f := range d.BelowFloors {
		below = append(below, BelowFloor{Measure: f.Measure, N: f.N, Threshold: format.Float(f.Threshold), Value: format.Float(f.Value)})
	}
	return &Decision{Verdict: string(d.Verdict), Best: d.Best, Contenders: strs(d.Contenders), Reranker: string(d.Reranker), Simplest: d.Simplest, BelowFloors: below}
}

// floorsWords is the sentence that follows the decision when its strategy
// fails floors of the gate ("": none).
func (d *Document) floorsWords(x *Decision, name func(string) string) string {
	if len(x.BelowFloors) == 0 {
		return ""
	}
	taken := x.Best
	if compare.Verdict(x.Verdict) == compare.VerdictLevel {
		taken = x.Simplest
	}
	parts := make([]string, len(x.BelowFloors))
	for i, f := range x.BelowFloors {
		v, t := format.Distinct(f.Value.V(), f.Threshold.V())
		parts[i] = fmt.Sprintf("%s %s < %s (n = %d)", d.label(f.Measure), v, t, f.N)
	}
	floors := "floor"
	if len(parts) > 1 {
		floors = "floors"
	}
	return fmt.Sprintf(" %s is below the gate's %s: %s, so taking it alone does not pass the gate.", name(taken), floors, strings.Join(parts, ", "))
}

// rerankerWords is what the decision says of the reranker ("": nothing).
func (x *Decision) rerankerWords() string {
	switch compare.RerankerChoice(x.Reranker) {
	case compare.RerankerUse:
		return "enable the reranker"
	case compare.RerankerSkip:
		return "leave the reranker off"
	case compare.RerankerEither:
		return "the reranker is optional"
	}
	return ""
}

// DecisionWords is the decision in words: Head is the card's value (what to
// take), Line the sentence every report gives after the recommendation
// (empty: nothing beyond the recommendation).
type DecisionWords struct{ Head, Line string }

// decisionWords puts the decision into words (names rendered by name).
func (d *Document) decisionWords(name func(string) string) DecisionWords {
	x := d.Decision
	if x == nil {
		return DecisionWords{}
	}
	primary := d.label(d.Primary)
	switch compare.Verdict(x.Verdict) {
	case compare.VerdictOnly:
		return DecisionWords{Head: name(x.Best), Line: "Decision: " + name(x.Best) + ", the only strategy." + d.floorsWords(x, name)}
	case compare.VerdictWinner:
		line := "Decision: use " + name(x.Best)
		if r := x.rerankerWords(); r != "" && compare.RerankerChoice(x.Reranker) != compare.RerankerEither {
			line += " (" + r + ")"
		}
		return DecisionWords{Head: "use " + name(x.Best), Line: line + "." + d.floorsWords(x, name)}
	}
	// Level: take the simplest of the contenders.
	others := make([]string, 0, len(x.Contenders))
	for _, c := range x.Contenders {
		if c != x.Simplest {
			others = append(others, name(c))
		}
	}
	var parts []string
	if r := x.rerankerWords(); r != "" {
		parts = append(parts, r)
	}
	verb := "is"
	if len(others) > 1 {
		verb = "are"
	}
	take := fmt.Sprintf("take %s", name(x.Simplest))
	if x.Simplest != x.Best {
		take = fmt.Sprintf("take the simplest, %s (%s %s not significantly better on %s)", name(x.Simplest), strings.Join(others, ", "), verb, primary)
	} else {
		take += fmt.Sprintf(" (the best mean and the simplest; %s %s level with it on %s)", strings.Join(others, ", "), verb, primary)
	}
	parts = append(parts, take)
	return DecisionWords{Head: "no clear winner: take " + name(x.Simplest), Line: "Decision: " + strings.Join(parts, "; ") + "." + d.floorsWords(x, name)}
}

// DecisionText is the decision in words for the HTML page (names unescaped:
// the page escapes them).
func (d *Document) DecisionText() DecisionWords { return d.decisionWords(identity) }

// bearing is how a scenario bears on the decision, in words, and whether it
// replaces the scenario's action (an outranked scenario's action is not the
// decision's).
func (d *Document) bearing(s Scenario, name func(string) string) (text string, replaces bool) {
	x := d.Decision
	if x == nil {
		return "", false
	}
	contenders := make([]string, len(x.Contenders))
	for i, c := range x.Contenders {
		contenders[i] = name(c)
	}
	among := strings.Join(contenders, " and ")
	switch compare.Bearing(s.Bearing) {
	case compare.BearingDecides:
		return "This is the decision's own comparison: " + among + " are level.", false
	case compare.BearingSupports:
		return "Agrees with the decision.", false
	case compare.BearingOutranked:
		return fmt.Sprintf("Does not change the decision: neither %s nor %s is among the decision's strategies (%s).", name(s.Strategy), name(s.Versus), among), true
	case compare.BearingQualifies:
		if s.Code == string(compare.AllLow) {
			return "Check this before acting on the decision.", false
		}
		return "The decision may change with more queries.", false
	}
	return "", false
}
