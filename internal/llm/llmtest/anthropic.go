package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
)

// The stand-in of Anthropic's Message Batches API, on the same server as the
// chat completions, written from Anthropic's documentation ("Anthropic API
// reference, Message Batches: Create, Retrieve, Cancel, Results" and the
// guide "Batch processing", as of 2026; the Messages API reference for the
// params, output_config.format and usage; "Errors" for the error bodies):
//
//	POST /v1/messages/batches {"requests": [{"custom_id", "params"}]} -> Message Batch
//	GET  /v1/messages/batches/{id}                                   -> Message Batch
//	POST /v1/messages/batches/{id}/cancel                            -> Message Batch
//	GET  /v1/messages/batches/{id}/results                           -> JSON Lines
//
// Every call needs the x-api-key header (the Options' APIKey when set: 401
// authentication_error otherwise) and anthropic-version (400 without). The
// create call validates as the API does, refusing the whole batch with a 400
// invalid_request_error: 1 to 100,000 requests, each custom_id unique and of
// 1-64 characters of [a-zA-Z0-9_-], params with model, max_tokens ≥ 1 and
// messages. A batch is in_progress for BatchOptions.PollsPerStatus
// retrievals, then ended; each request is answered by the chat handler
// (params translated to a chat completion: system, messages, temperature,
// output_config.format json_schema as response_format) and its answer
// written as a Message (content text block, usage input_tokens and
// output_tokens). BatchOptions.End "expired" answers the first
// BatchOptions.Answer requests and reports the rest "expired" (the 24-hour
// expiry); "cancelled" goes through canceling and reports the rest
// "canceled"; "failed" refuses the batch at creation (400). A query with the
// [[batch-error]] marker is an errored result (api_error); one with the
// [[batch-error-echo]] marker is an errored result whose message echoes the
// x-api-key the batch was created with (a hostile or careless server: the
// client must not show it).

type anthBatch struct {
	id, status string
	key        string // the x-api-key of the creating request
	base       string // the server's URL, as the client reached it
	polls      int
	reqs       []anthRequest
	results    []byte
	counts     map[string]int
	cancel     bool
	// started and processed: a batch of more than backgroundAbove requests
	// is answered in the background (processBatch).
	started, processed bool
}

type anthRequest struct {
	CustomID string          `json:"custom_id"`
	Params   json.RawMessage `json:"params"`
}

var anthCustomID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func anthError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// AnthropicBatches is the number of message batches created.
func (s *Server) AnthropicBatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.prov().anth)
}

func (s *Server) serveAnthropic(w http.ResponseWriter, r *http.Request) {
	if s.opt.APIKey != "" && r.Header.Get("X-Api-Key") != s.opt.APIKey {
		anthError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		anthError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // v1 messages batches [id [cancel|results]]
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prov()
	var b *anthBatch
	if len(parts) >= 4 {
		if b = p.anth[parts[3]]; b == nil {
			anthError(w, http.StatusNotFound, "not_found_error", "No batch found with id "+parts[3])
			return
		}
	}
	switch {
	case len(parts) == 3 && r.Method == http.MethodPost:
		s.anthCreate(w, r)
	case len(parts) == 4 && r.Method == http.MethodGet:
		s.anthAdvance(b)
		writeJSON(w, s.anthObject(b))
	case len(parts) == 5 && parts[4] == "cancel" && r.Method == http.MethodPost:
		if b.status == "in_progress" {
			b.status, b.cancel, b.polls = "canceling", true, 0
		}
		writeJSON(w, s.anthObject(b))
	case len(parts) == 5 && parts[4] == "results" && r.Method == http.MethodGet:
		if b.status != "ended" {
			anthError(w, http.StatusBadRequest, "invalid_request_error", "Message Batch "+b.id+" has not yet ended and results are not available.")
			return
		}
		w.Header().Set("Content-Type", "application/binary")
		_, _ = w.Write(b.results)
	default:
		anthError(w, http.StatusNotFound, "not_found_error", "Not found: "+r.Method+" "+r.URL.Path)
	}
}

func (s *Server) anthCreate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Requests []anthRequest `json:"requests"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 256<<20)).Decode(&body); err != nil {
		anthError(w, http.StatusBadRequest, "invalid_request_error", "The request body is not valid JSON: "+err.Error())
		return
	}
	if s.opt.Batch.End == "failed" {
		anthError(w, http.StatusBadRequest, "invalid_request_error", "The batch failed validation.")
		return
	}
	if n := len(body.Requests); n < 1 || n > 100_000 {
		anthError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("requests: expected between 1 and 100000 items, got %d", n))
		return
	}
	seen := map[string]bool{}
	for i, q := range body.Requests {
		if !anthCustomID.MatchString(q.CustomID) {
			anthError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("requests.%d.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i))
			return
		}
		if seen[q.CustomID] {
			anthError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("requests.%d: Duplicate custom_id %s. Each request in a batch must have a unique custom_id.", i, q.CustomID))
			return
		}
		seen[q.CustomID] = true
		var params struct {
			Model     string            `json:"model"`
			MaxTokens int               `json:"max_tokens"`
			Messages  []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(q.Params, &params) != nil || params.Model == "" || params.MaxTokens < 1 || len(params.Messages) == 0 {
			anthError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("requests.%d.params: model, max_tokens (at least 1) and messages are required", i))
			return
		}
	}
	p := s.prov()
	b := &anthBatch{id: fmt.Sprintf("msgbatch_fake%d", len(p.anth)+1), status: "in_progress", base: "http://" + r.Host, key: r.Header.Get("X-Api-Key"), reqs: body.Requests, counts: map[string]int{}}
	p.anth[b.id] = b
	writeJSON(w, s.anthObject(b))
}

func (s *Server) anthAdvance(b *anthBatch) {
	b.polls++
	switch b.status {
	case "in_progress":
		if b.polls < max(s.opt.Batch.PollsPerStatus, 1) {
			return
		}
		if s.opt.Batch.End == "cancelled" {
			b.status, b.cancel, b.polls = "canceling", true, 0
			return
		}
		if s.processBatch(&b.started, &b.processed, len(b.reqs), func() { s.anthProcess(b) }) {
			b.status = "ended"
		}
	case "canceling":
		s.anthProcess(b)
		b.status = "ended"
	}
}

// backgroundAbove is the largest batch a stand-in answers within the
// retrieval that ends it; a bigger one is answered in the background, as a
// real provider does, and ends on the first retrieval after its answers are
// in (its retrievals stay quick: a client's per-call timeout never runs out
// while a large batch is answered).
const backgroundAbove = 10_000

// processBatch runs process (s.mu held, as it is) for a batch of n requests
// and reports whether its answers are in: at once for a small batch; for a
// large one, started in the background on the first call.
func (s *Server) processBatch(started, processed *bool, n int, process func()) bool {
	if above := s.opt.Batch.Background; n <= above || above == 0 && n <= backgroundAbove {
		process()
		return true
	}
	if !*started {
		*started = true
		go func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			process()
			*processed = true
		}()
	}
	return *processed
}

// anthProcess answers the batch's requests and writes its results.
func (s *Server) anthProcess(b *anthBatch) {
	limit := len(b.reqs)
	if s.opt.Batch.End != "" || b.cancel {
		limit = min(s.opt.Batch.Answer, limit)
	}
	var out bytes.Buffer
	for i, q := range b.reqs {
		var result map[string]any
		switch {
		case i >= limit && b.cancel:
			result = map[string]any{"type": "canceled"}
		case i >= limit:
			result = map[string]any{"type": "expired"}
		case bytes.Contains(q.Params, []byte("[[batch-error-echo]]")):
			result = map[string]any{"type": "errored", "error": map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error",
				"message": "this request's x-api-key " + b.key + " may not be used here"}}}
		case bytes.Contains(q.Params, []byte("[[batch-error]]")):
			result = map[string]any{"type": "errored", "error": map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": "Internal server error"}}}
		default:
			result = s.anthAnswer(q.Params, fmt.Sprintf("msg_fake_%s_%d", b.id, i+1))
		}
		b.counts[result["type"].(string)]++
		line, _ := json.Marshal(map[string]any{"custom_id": q.CustomID, "result": result})
		out.Write(append(line, '\n'))
	}
	b.results = out.Bytes()
}

// anthAnswer answers one request's params through the chat handler.
func (s *Server) anthAnswer(params json.RawMessage, id string) map[string]any {
	var p struct {
		Model       string   `json:"model"`
		System      string   `json:"system"`
		Temperature *float64 `json:"temperature"`
		Messages    []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		OutputConfig *struct {
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return map[string]any{"type": "errored", "error": map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": err.Error()}}}
	}
	chat := map[string]any{"model": p.Model}
	msgs := []map[string]string{}
	if p.System != "" {
		msgs = append(msgs, map[string]string{"role": "system", "content": p.System})
	}
	for _, m := range p.Messages {
		msgs = append(msgs, map[string]string{"role": m.Role, "content": m.Content})
	}
	chat["messages"] = msgs
	if p.Temperature != nil {
		chat["temperature"] = *p.Temperature
	}
	if oc := p.OutputConfig; oc != nil && oc.Format != nil && oc.Format.Type == "json_schema" {
		chat["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": oc.Format.Schema, "strict": true}}
	}
	content, pt, ct, status, msg := s.chat(chat)
	if status != http.StatusOK {
		return map[string]any{"type": "errored", "error": map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}}
	}
	return map[string]any{"type": "succeeded", "message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": p.Model,
		"content": []any{map[string]any{"type": "text", "text": content}}, "stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": pt, "output_tokens": ct, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}
}

// chat answers one chat-completions request body through the chat handler
// (with the server's key): the content, the usage, the status and an error
// message. The caller holds s.mu, released while the handler runs.
func (s *Server) chat(req map[string]any) (content string, pt, ct int64, status int, msg string) {
	body, _ := json.Marshal(req)
	rec := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	if s.opt.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+s.opt.APIKey)
	}
	s.mu.Unlock()
	s.serve(rec, hr)
	s.mu.Lock()
	if rec.Code != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		return "", 0, 0, rec.Code, e.Error.Message
	}
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &resp)
	if len(resp.Choices) > 0 {
		content = resp.Choices[0].Message.Content
	}
	return content, resp.Usage.PromptTokens, resp.Usage.CompletionTokens, http.StatusOK, ""
}

func (s *Server) anthObject(b *anthBatch) map[string]any {
	processing := 0
	if b.status != "ended" {
		processing = len(b.reqs)
	}
	o := map[string]any{"id": b.id, "type": "message_batch", "processing_status": b.status,
		"request_counts": map[string]int{"processing": processing, "succeeded": b.counts["succeeded"], "errored": b.counts["errored"],
			"canceled": b.counts["canceled"], "expired": b.counts["expired"]},
		"created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z", "ended_at": nil, "archived_at": nil,
		"cancel_initiated_at": nil, "results_url": nil}
	if b.cancel {
		o["cancel_initiated_at"] = "2026-01-01T00:01:00Z"
	}
	if b.status == "ended" {
		o["ended_at"] = "2026-01-01T00:10:00Z"
		o["results_url"] = b.base + "/v1/messages/batches/" + b.id + "/results"
	}
	return o
}
