package trend_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// A history branch that cannot be read, or whose history is not readable, is
// no trend and no error: the reading says which step failed and why, as data.
func TestReadRunUnreadBranch(t *testing.T) {
	errOpen := errors.New("GitHub answered 404 Not Found")
	tests := []struct {
		name    string
		open    func(context.Context, string) (io.Reader, error)
		records bool
	}{
		{"branch unread", func(context.Context, string) (io.Reader, error) { return nil, errOpen }, false},
		{"records unreadable", func(context.Context, string) (io.Reader, error) { return strings.NewReader("{not json\n"), nil }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := trend.ReadRun(t.Context(), trend.RunRead{
				Branch: "h", OpenBranch: tt.open, NoHistory: errors.New("no history"),
				Provenance: history.Provenance{Base: "main"}, Command: "check",
				Inputs: map[string]string{}, Params: map[string]string{},
				Doc:  func(w io.Writer) error { _, err := io.WriteString(w, `{"verdict":"pass"}`); return err },
				Runs: 5, Measures: []trend.Measure{{Group: "overall", Key: "retrieval_hit_at_k"}},
			})
			require.NoError(t, err)
			require.Error(t, got.Unread)
			assert.Nil(t, got.Trend)
			assert.Equal(t, "h", got.Branch)
			assert.Equal(t, "main", got.Base, "the trend is of the provenance's base branch")
			assert.Equal(t, tt.records, got.UnreadRecords)
			if !tt.records {
				assert.ErrorIs(t, got.Unread, errOpen)
			}
		})
	}
}
