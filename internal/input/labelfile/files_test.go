package labelfile

import (
	"context"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// The file form of the labels reader, for the package's tests: the commands open
// their inputs in their front end and hand the readers over
// (internal/input/inputtest has them for other packages' tests).

// ReadLabelsFile reads the labels file at path with ReadLabels. Opening a FIFO
// that no writer opens ends with ctx.Err() when ctx ends (input.Open).
func ReadLabelsFile(ctx context.Context, path string, side LabelSide, lock *Lock) (*Labels, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLabels(ctx, f, path, side, lock)
}
