package checkreport

import "fmt"

// KChoiceWarning is the warning of a run scored at k (chosen from: check's
// KFromFlag "flag", KFromBaseline "baseline", or another source) when the
// cases record another, runK (retrieval.k, written by retrieve, at
// runFile:runLine), naming both; "" when they agree or the run records none.
func KChoiceWarning(k int, from string, runK int, runFile string, runLine int) string {
	if runK <= 0 || runK == k {
		return ""
	}
	at := fmt.Sprintf("retrieval.k = %d at %s:%d", runK, runFile, runLine)
	switch from {
	case "flag":
		return fmt.Sprintf("--k %d differs from the run's k (%s): the measures are at k = %d", k, at, k)
	case "baseline":
		return fmt.Sprintf("the run's k (%s) differs from the baseline's k = %d: the measures are at k = %d, the baseline's, so the comparison is at one cutoff (give --k to choose)", at, k, k)
	}
	return fmt.Sprintf("the run's k (%s) differs from the k = %d used", at, k)
}
