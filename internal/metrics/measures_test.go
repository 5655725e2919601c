package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One key per measure: no key is registered twice, in a table or across the
// two (Lookup finds exactly the measure of its key), and a measure's own
// parameters have distinct names.
func TestOneKeyPerMeasure(t *testing.T) {
	seen := map[string]bool{}
	infos := make([]Info, 0, NumCase+NumGraded)
	for i := range CaseMeasures {
		infos = append(infos, CaseMeasures[i].Info)
	}
	for i := range QueryMeasures {
		infos = append(infos, QueryMeasures[i].Info)
	}
	for _, info := range infos {
		require.NotEmpty(t, info.Key)
		assert.False(t, seen[info.Key], "key %s registered twice", info.Key)
		seen[info.Key] = true
		got, ok := Lookup(info.Key)
		require.True(t, ok, info.Key)
		assert.Equal(t, info.Label, got.Label, info.Key)
		names := map[string]bool{}
		for _, p := range info.Own {
			assert.False(t, names[p.Name], "%s: parameter %s twice", info.Key, p.Name)
			names[p.Name] = true
			assert.NotEmpty(t, p.Doc, "%s: parameter %s has no description", info.Key, p.Name)
		}
	}
}
