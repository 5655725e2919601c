package casefile

import "context"

// orderedBatch is a batch of results on its way from the workers back to the
// caller: MapCasesWith's blocks of lines and the Parquet rows' batches.
type orderedBatch[T any] interface {
	// order is the batch's place in the input, from 0.
	order() int
	// done is the batch's results, in input order, and the error that ended
	// it (after those results), if any.
	done() ([]T, error)
}

// emitInOrder emits the results of the batches that come on done in input
// order, whatever order the workers finish them in: pending[seq%inflight]
// holds a finished batch until its turn (at most inflight batches exist). Each
// emitted batch is given to recycle with its results cleared, then its token
// is returned. After the first error (emit's or a batch's) it cancels and
// drains done; it returns that error, or nil once done is closed.
func emitInOrder[T any, B orderedBatch[T]](done <-chan B, inflight int, tokens <-chan struct{}, cancel context.CancelFunc, emit func(*T) error, recycle func(B)) error {
	pending := make([]B, inflight)
	held := make([]bool, inflight)
	next := 0
	var result error
	for b := range done {
		if result != nil {
			continue // drain after the first error
		}
		pending[b.order()%inflight], held[b.order()%inflight] = b, true
		for result == nil {
			slot := next % inflight
			if !held[slot] || pending[slot].order() != next {
				break
			}
			b := pending[slot]
			var zero B
			pending[slot], held[slot] = zero, false
			results, err := b.done()
			for i := range results {
				if err := emit(&results[i]); err != nil {
					result = err
					break
				}
			}
			if result == nil && err != nil {
				result = err
			}
			if result != nil {
				cancel()
				break
			}
			next++
			clear(results)
			recycle(b)
			<-tokens
		}
	}
	return result
}
