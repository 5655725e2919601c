package judge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// parseResult reads one result line in the format of provider (llm.Providers;
// "" is OpenAI's).
func parseResult(provider string, line []byte) (BatchResult, error) {
	switch provider {
	case llm.ProviderAnthropic:
		return ParseAnthropicResult(line)
	case llm.ProviderGemini:
		return ParseGeminiResult(line)
	}
	return ParseBatchResult(line)
}

// checkObject is the one JSON rule of the inputs for a result line: a JSON
// object without a repeated key.
func checkObject(line []byte) error {
	var sc jsonpos.Scanner
	if err := sc.Check(line); err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) && se.NotSyntax() {
			return errors.New(se.Describe())
		}
		return errors.New("not a JSON object")
	}
	if len(line) == 0 || line[0] != '{' {
		return errors.New("not a JSON object")
	}
	return llm.CheckFoldedKeys(line)
}

// ParseAnthropicResult reads one line of a Message Batch's results (Anthropic
// API reference, Message Batches, Retrieve results, as of 2026):
// {"custom_id", "result": {"type": "succeeded", "message": Message} |
// {"type": "errored", "error": {"type": "error", "error": {"type",
// "message"}}} | {"type": "canceled"} | {"type": "expired"}}. A succeeded
// line carries its completion; errored is a failure; canceled and expired are
// Missing (never processed). A line with a repeated key, without custom_id,
// of another result type, or whose message is not a Message is malformed.
func ParseAnthropicResult(line []byte) (BatchResult, error) {
	if err := checkObject(line); err != nil {
		return BatchResult{}, err
	}
	var l struct {
		CustomID *string `json:"custom_id"`
		Result   *struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
			Error   *struct {
				Type  string `json:"type"`
				Error *struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			} `json:"error"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return BatchResult{}, fmt.Errorf("not a message batch result line: %v", jsonErrText(err))
	}
	if l.CustomID == nil || *l.CustomID == "" {
		return BatchResult{}, errors.New("no custom_id")
	}
	if l.Result == nil {
		return BatchResult{}, errors.New("no result")
	}
	r := BatchResult{CustomID: *l.CustomID}
	switch l.Result.Type {
	case "succeeded":
		m, err := llm.ParseAnthropicMessage(l.Result.Message)
		if err != nil {
			return BatchResult{}, fmt.Errorf("result.message: %w", err)
		}
		r.Status, r.Completion = 200, m
	case "errored":
		r.Err = "errored"
		if e := l.Result.Error; e != nil && e.Error != nil {
			r.Err = cmp.Or(errText(e.Error.Type, e.Error.Message), r.Err)
		}
	case "canceled", "expired":
		r.Missing, r.Err = true, l.Result.Type
	default:
		return BatchResult{}, fmt.Errorf("result.type %s: not succeeded, errored, canceled or expired", quoteSnippet(l.Result.Type))
	}
	return r, nil
}

// ParseGeminiResult reads one line of a Gemini batch's responses file (or an
// inline response as GeminiInlinedToJSONL writes it; Gemini API, Batch API
// guide, as of 2026): {"key", "response": GenerateContentResponse} or {"key",
// "error": {"code", "message", "status"}}. A response without a candidate (a
// blocked prompt) is a failure, not a malformed line.
func ParseGeminiResult(line []byte) (BatchResult, error) {
	if err := checkObject(line); err != nil {
		return BatchResult{}, err
	}
	var l struct {
		Key      *string         `json:"key"`
		Response json.RawMessage `json:"response"`
		Error    *struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
			Status  string          `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return BatchResult{}, fmt.Errorf("not a batch response line: %v", jsonErrText(err))
	}
	if l.Key == nil || *l.Key == "" {
		return BatchResult{}, errors.New("no key")
	}
	r := BatchResult{CustomID: *l.Key}
	hasResp := len(l.Response) > 0 && string(l.Response) != "null"
	switch {
	case l.Error != nil:
		// {"error": {}} is still an error: a result is exactly one kind.
		r.Err = cmp.Or(errText(rawText(l.Error.Code)+" "+l.Error.Status, l.Error.Message), "error with no code, status or message")
	case hasResp:
		g, err := llm.ParseGeminiResponse(l.Response)
		if errors.Is(err, llm.ErrNoCandidates) {
			r.Status, r.Err = 200, err.Error()
			return r, nil
		}
		if err != nil {
			return BatchResult{}, fmt.Errorf("response: %w", err)
		}
		r.Status, r.Completion = 200, g
	default:
		return BatchResult{}, errors.New("neither a response nor an error")
	}
	return r, nil
}

// errText is a result line's error as "head: message", or whichever of the
// two is not blank, or "" when both are ({"error": {}} is still an error: the
// caller names it). The separator never stands alone or trails ("13: ").
func errText(head, msg string) string {
	head, msg = strings.TrimSpace(head), strings.TrimSpace(msg)
	if head != "" && msg != "" {
		return head + ": " + msg
	}
	return head + msg
}
