package compare

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A comparison of runs in increasing query order is scored as the runs are
// read (stream.go), and its statistics (seconds of resampling at a few
// thousand queries and --bootstrap 10000) were computed by finish with no
// look at the context: a signal was heeded once they were done, the reports
// written. They are given up now when the context ends, as Compare's are
// (compareUntil). The hook ends the context as the statistics start and
// holds them there: Run must return context.Canceled while they are held,
// in the streamed comparison and in the one read whole.
func TestStatisticsGivenUpOnCancel(t *testing.T) {
	const qrels = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\nq3 0 d3 3\n"
	sorted := "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq2 Q0 d3 1 1 t\nq3 Q0 d3 1 1 t\n"
	backwards := "q3 Q0 d3 1 1 t\nq2 Q0 d3 1 1 t\nq1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"
	for _, tc := range []struct {
		name   string
		second string
		stream bool
	}{{"streamed", sorted, true}, {"read whole", backwards, false}} {
		t.Run(tc.name, func(t *testing.T) {
			in := In{Qrels: Reader{Name: "qrels", R: strings.NewReader(qrels)}, Runs: []RunReader{
				{Strategy: "a", Reader: Reader{Name: "a", R: strings.NewReader(sorted)}},
				{Strategy: "b", Reader: Reader{Name: "b", R: strings.NewReader(tc.second)}},
			}}
			o := NewOptions()
			o.Resamples = 100
			_, ok := streamable(context.Background(), in, o)
			require.True(t, ok, "positioned readers: the streamed path is tried")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			release := make(chan struct{})
			started := make(chan struct{})
			statisticsHook = func() {
				close(started)
				cancel()
				<-release
			}
			t.Cleanup(func() { statisticsHook = nil })
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, in, o)
				done <- err
			}()
			defer close(release) // the held statistics end, and the goroutine
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("the statistics never started")
			}
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(10 * time.Second):
				t.Fatal("Run waited for the statistics after the context ended")
			}
		})
	}
}
