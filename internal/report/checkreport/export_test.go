package checkreport

import (
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// Read reads a check document from r (readback.Parse, then ReadParsed).
func Read(r io.Reader) (*Document, error) {
	data, root, err := readback.Parse(r, "")
	if err != nil {
		return nil, err
	}
	return ReadParsed(data, root)
}
