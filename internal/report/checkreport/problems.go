package checkreport

import "github.com/retrieval-gate/retrieval-gate/internal/gate"

// ProblemReason is the words of an integrity problem (gate.ProblemKind), as the
// reports, the JSON "reason" and the annotations say it. A kind it does not
// know reads as the kind.
func ProblemReason(k gate.ProblemKind) string {
	switch k {
	case gate.UnknownCard:
		return "unknown card"
	case gate.EmptyID:
		return "empty card id"
	case gate.UnknownRelevant:
		return "unknown card (relevant_ids)"
	case gate.EmptyRelevant:
		return "empty card id (relevant_ids)"
	}
	return string(k)
}
