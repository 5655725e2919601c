package llm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// geminiInlinedReference is GeminiInlinedToJSONL as it was before it read the
// operation as a stream: the whole operation read, decoded with
// encoding/json, every line made, the whole checked for repeated keys, then
// written. The streaming reader is held to it (FuzzGeminiInlinedToJSONL,
// TestGeminiInlinedMatchesReference).
func geminiInlinedReference(r io.Reader, w io.Writer) error {
	var op struct {
		Response *struct {
			InlinedResponses *struct {
				InlinedResponses []json.RawMessage `json:"inlinedResponses"`
			} `json:"inlinedResponses"`
		} `json:"response"`
		Metadata struct {
			Output *struct {
				InlinedResponses *struct {
					InlinedResponses []json.RawMessage `json:"inlinedResponses"`
				} `json:"inlinedResponses"`
			} `json:"output"`
		} `json:"metadata"`
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &op); err != nil {
		return fmt.Errorf("malformed batch operation: %w", err)
	}
	var items []json.RawMessage
	switch {
	case op.Response != nil && op.Response.InlinedResponses != nil:
		items = op.Response.InlinedResponses.InlinedResponses
	case op.Metadata.Output != nil && op.Metadata.Output.InlinedResponses != nil:
		items = op.Metadata.Output.InlinedResponses.InlinedResponses
	default:
		return errors.New("the batch operation has no inlinedResponses")
	}
	var lines []byte
	for i, raw := range items {
		var it struct {
			Metadata struct {
				Key string `json:"key"`
			} `json:"metadata"`
			Response json.RawMessage `json:"response"`
			Error    json.RawMessage `json:"error"`
		}
		err := llm.CheckFoldedKeys(raw)
		if err == nil {
			err = json.Unmarshal(raw, &it)
		}
		if err != nil {
			return fmt.Errorf("inline response %d: %w", i+1, err)
		}
		line := map[string]any{"key": it.Metadata.Key}
		if len(it.Response) > 0 {
			line["response"] = it.Response
		}
		if len(it.Error) > 0 {
			line["error"] = it.Error
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		lines = append(lines, append(b, '\n')...)
	}
	if err := llm.CheckFoldedKeys(data); err != nil {
		return fmt.Errorf("malformed batch operation: %w", err)
	}
	_, err = w.Write(lines)
	return err
}
