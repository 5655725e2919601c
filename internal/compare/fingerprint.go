package compare

import "strconv"

// Fingerprint is what a comparison's numbers depend on, as its history record
// keeps it: the qrels, each run by name, the human sheet when there is one
// (the corrected figures are another series), and every parameter.
func Fingerprint(f Files, o Options) (inputs, params map[string]string) {
	inputs = map[string]string{"qrels": f.Qrels}
	params = map[string]string{"k": strconv.Itoa(o.K), "gain": o.Gain.String(), "relevant-level": strconv.Itoa(o.RelevantLevel),
		"baseline": o.Baseline, "bootstrap": strconv.Itoa(o.Resamples), "seed": strconv.FormatUint(o.Seed, 10)}
	for _, r := range f.Runs {
		inputs["run:"+r.Name] = r.Path
	}
	if o.JudgedOnly { // other measures: a history of its own (absent otherwise, so earlier fingerprints hold)
		params["judged-only"] = "true"
	}
	if f.HumanQrels != "" {
		inputs["human-qrels"] = f.HumanQrels
	}
	if f.Clusters != "" { // other intervals and tests: a history of its own
		inputs["clusters"] = f.Clusters
	}
	if f.Queries != "" { // its cases' clusters: other intervals and tests
		inputs["queries"] = f.Queries
	}
	return inputs, params
}
