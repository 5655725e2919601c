package checkreport

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKChoiceWarning(t *testing.T) {
	for _, tc := range []struct {
		name, from string
		k, runK    int
		want       string
	}{
		{"agree", "flag", 5, 5, ""},
		{"run records none", "default", 5, 0, ""},
		{"flag", "flag", 3, 2, "--k 3 differs from the run's k (retrieval.k = 2 at run.jsonl:1): the measures are at k = 3"},
		{"baseline", "baseline", 5, 2, "the run's k (retrieval.k = 2 at run.jsonl:1) differs from the baseline's k = 5: the measures are at k = 5, the baseline's, so the comparison is at one cutoff (give --k to choose)"},
		{"other", "default", 5, 2, "the run's k (retrieval.k = 2 at run.jsonl:1) differs from the k = 5 used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, KChoiceWarning(tc.k, tc.from, tc.runK, "run.jsonl", 1))
		})
	}
}
