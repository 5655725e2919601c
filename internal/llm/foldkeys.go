package llm

import (
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// CheckFoldedKeys refuses JSON text in which one object has a key twice, or
// two keys that differ only in case: httpretry.CheckFoldedKeys, the rule of
// every JSON answer of a server (the embedders' and the reranker's too).
func CheckFoldedKeys(data []byte) error { return httpretry.CheckFoldedKeys(data) }

// unmarshalAnswer decodes the JSON answer of u (a batch API's answer: a file,
// a batch, its status) into out. An answer in which one object has a key
// twice, or two keys that differ only in case, is malformed (CheckFoldedKeys),
// as a result line and a chat completion are.
func unmarshalAnswer(data []byte, u string, out any) error {
	if err := httpretry.UnmarshalAnswer(data, out); err != nil {
		return fmt.Errorf("%s: malformed answer: %w", u, err)
	}
	return nil
}
