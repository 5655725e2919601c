package trend_test

import (
	"context"
	"errors"
	"fmt"
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

// A read of the history branch cut short by the run's context (SIGINT,
// SIGTERM) is an error, not an unread history: check --history-branch,
// interrupted while GitHub was answering, went on to write its outputs and
// exit 0 with a "no trend" warning.
func TestReadRunBranchCancelled(t *testing.T) {
	tests := []struct {
		name string
		open func(cancel context.CancelFunc) func(context.Context, string) (io.Reader, error)
	}{
		{"while opening", func(cancel context.CancelFunc) func(context.Context, string) (io.Reader, error) {
			return func(ctx context.Context, _ string) (io.Reader, error) {
				cancel()
				return nil, fmt.Errorf("could not read history.jsonl: cancelled (%w)", ctx.Err())
			}
		}},
		{"while reading the records", func(cancel context.CancelFunc) func(context.Context, string) (io.Reader, error) {
			return func(ctx context.Context, _ string) (io.Reader, error) {
				return io.MultiReader(strings.NewReader(`{"schema":`), readerFunc(func([]byte) (int, error) {
					cancel()
					return 0, ctx.Err()
				})), nil
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			got, err := trend.ReadRun(ctx, trend.RunRead{
				Branch: "h", OpenBranch: tt.open(cancel), NoHistory: errors.New("no history"),
				Provenance: history.Provenance{Base: "main"}, Command: "check",
				Inputs: map[string]string{}, Params: map[string]string{},
				Doc:  func(w io.Writer) error { _, err := io.WriteString(w, `{"verdict":"pass"}`); return err },
				Runs: 5, Measures: []trend.Measure{{Group: "overall", Key: "retrieval_hit_at_k"}},
			})
			require.ErrorIs(t, err, context.Canceled)
			assert.NoError(t, got.Unread, "not the branch's read error: the run's")
		})
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
