package check

import (
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
)

// Fingerprint is what a check run's numbers depend on, as its history record
// keeps it: the cases file (unless read from standard input, "-") and the KB,
// k, the reference locale, the two floors and the parent separator.
func Fingerprint(cases, kb string, o Options) (inputs, params map[string]string) {
	inputs = map[string]string{"kb": kb}
	params = map[string]string{"k": strconv.Itoa(o.K), "reference-locale": o.ReferenceLocale,
		"min-hit": floorParam(o.MinHit), "min-recall": floorParam(o.MinRecall), "parent-from-id": o.ParentSep}
	if cases == "-" {
		params["cases"] = "stdin (not fingerprinted)"
	} else {
		inputs["cases"] = cases
	}
	return inputs, params
}

func floorParam(f gate.Floor) string {
	if !f.Set {
		return "off"
	}
	return strconv.FormatFloat(f.Value, 'g', -1, 64)
}
