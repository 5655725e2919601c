package checkreport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
)

// Each integrity problem reads as the reports wrote it before problems became
// kinds; a kind without a row here, or that ProblemReason does not word, fails.
func TestProblemReason(t *testing.T) {
	tests := []struct {
		kind gate.ProblemKind
		want string
	}{
		{gate.UnknownCard, "unknown card"},
		{gate.EmptyID, "empty card id"},
		{gate.UnknownRelevant, "unknown card (relevant_ids)"},
		{gate.EmptyRelevant, "empty card id (relevant_ids)"},
		{"new_kind", "new_kind"},
	}
	covered := map[gate.ProblemKind]bool{}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			assert.Equal(t, tt.want, ProblemReason(tt.kind))
		})
		covered[tt.kind] = true
	}
	for _, k := range gate.ProblemKinds {
		require.True(t, covered[k], "problem kind %q has no row in this table", k)
		assert.NotEqual(t, string(k), ProblemReason(k), "ProblemReason does not word %q", k)
	}
}
