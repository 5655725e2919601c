package history_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

func TestNewRecordFromProvenance(t *testing.T) {
	p := history.Provenance{Commit: "abc", Branch: "feature", Base: "main", Time: time.Unix(86400, 0)}
	rec, err := history.NewRecord(t.Context(), p, "check", nil, map[string]string{"k": "5"}, []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "check", rec.Command)
	assert.Equal(t, "abc", rec.Commit)
	assert.Equal(t, "feature", rec.Branch)
	assert.Equal(t, "1970-01-02T00:00:00Z", rec.Time, "UTC, RFC 3339, whatever the time's zone")

	p.Time = time.Date(2026, 1, 1, 12, 0, 0, 999, time.FixedZone("X", 3600))
	assert.Equal(t, "2026-01-01T11:00:00Z", p.TimeText())
}
