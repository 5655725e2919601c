package cli

import (
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/check"
)

// kChoiceWarning is the warning of a run scored at another k than the one its
// cases record (retrieval.k, written by retrieve), naming both; "" when they
// agree or the run records none.
func kChoiceWarning(c check.KChoice) string {
	if !c.Differs() {
		return ""
	}
	at := fmt.Sprintf("retrieval.k = %d at %s:%d", c.RunK, c.RunKFile, c.RunKLine)
	switch c.From {
	case check.KFromFlag:
		return fmt.Sprintf("--k %d differs from the run's k (%s): the measures are at k = %d", c.K, at, c.K)
	case check.KFromBaseline:
		return fmt.Sprintf("the run's k (%s) differs from the baseline's k = %d: the measures are at k = %d, the baseline's, so the comparison is at one cutoff (give --k to choose)", at, c.K, c.K)
	}
	return fmt.Sprintf("the run's k (%s) differs from the k = %d used", at, c.K)
}
