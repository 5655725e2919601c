package outcome

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVerdictAndFailed(t *testing.T) {
	tests := []struct {
		name    string
		gates   Gates
		verdict Status
		failed  []string
	}{
		{"no gates pass", nil, Pass, nil},
		{"off never fails", Gates{New("a", Off), New("b", Pass)}, Pass, nil},
		{"one failure fails", Gates{New("a", Pass), New("b", Fail), New("c", Off), New("d", Fail)}, Fail, []string{"b", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.verdict, tt.gates.Verdict())
			assert.Equal(t, tt.failed, tt.gates.Failed())
		})
	}
}

func TestNewAndFind(t *testing.T) {
	g := New("integrity", Pass)
	assert.True(t, math.IsNaN(g.Threshold))
	assert.True(t, math.IsNaN(g.Value))
	gs := Gates{g, New("min_hit", Off)}
	got, ok := gs.Find("min_hit")
	assert.True(t, ok)
	assert.Equal(t, Off, got.Status)
	_, ok = gs.Find("nope")
	assert.False(t, ok)
}
