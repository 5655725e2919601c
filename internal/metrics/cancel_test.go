package metrics

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countdownCtx is a context that ends once its Err has been asked left times:
// the resampling loops are stopped at a known point of their work, with no
// clock involved.
type countdownCtx struct {
	context.Context
	left  atomic.Int64
	asked atomic.Int64
}

func countdown(n int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background()}
	c.left.Store(n)
	return c
}

func (c *countdownCtx) Err() error {
	c.asked.Add(1)
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// spread is a histogram of n distinct values, each twice.
func spread(n int) *Histogram {
	h := NewHistogram()
	for i := range n {
		h.AddN(float64(i)/float64(n)-0.25, 2)
	}
	return h
}

// The histogram bootstrap (BCa, check's intervals from 30 to 10,000 cases)
// and the sign-flip test of a paired histogram (check --baseline) cost
// O(distinct values) a resample and never looked at a context: 10,000
// resamples of 10,000 distinct values took 14 s, of 5,000 distinct
// differences 2.5 s, after a signal (by binomials; item draws and coins now
// take well under a second there). Their Context forms end with the
// context's error within 16 resamples of its end: here after the third
// check, which the loops reach at once. Both samplers of each (binomials
// with few distinct values, item draws or coins with many) check it.
func TestHistogramResamplingStopsOnCancel(t *testing.T) {
	tests := []struct {
		name         string
		h            *Histogram
		items, coins bool // the samplers the histogram takes
	}{
		{"few distinct values: binomials", spread(20), false, false},
		{"many distinct values: item draws and coins", spread(2000), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			vals, _ := h.sorted()
			require.Equal(t, tc.items, drawItems(len(vals), h.N()))
			abs := map[float64]bool{}
			for _, v := range vals {
				if v != 0 {
					abs[math.Abs(v)] = true
				}
			}
			require.Equal(t, tc.coins, len(abs) >= signFlipCoinsMinDistinct)

			ctx := countdown(2)
			_, err := h.BCaCI95Context(ctx, 10000, DefaultSeed, -1, 1)
			require.ErrorIs(t, err, context.Canceled)
			assert.EqualValues(t, 3, ctx.asked.Load(), "no check after the one that saw the end")

			ctx = countdown(2)
			_, err = h.SignFlipPContext(ctx, 10000, DefaultSeed)
			require.ErrorIs(t, err, context.Canceled)
			assert.EqualValues(t, 3, ctx.asked.Load())

			// Not cancelled: the same interval and p-value as the plain forms.
			iv, err := h.BCaCI95Context(context.Background(), 500, DefaultSeed, -1, 1)
			require.NoError(t, err)
			assert.Equal(t, h.BCaCI95(500, DefaultSeed, -1, 1), iv)
			p, err := h.SignFlipPContext(context.Background(), 500, DefaultSeed)
			require.NoError(t, err)
			assert.Equal(t, h.SignFlipP(500, DefaultSeed), p)
		})
	}
	ctx := countdown(2)
	_, err := SummarizeContext(ctx, spread(4000), 10000, DefaultSeed, -1, 1) // 8,000 items: BCa
	require.ErrorIs(t, err, context.Canceled)
}
