package llmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// The Batch API of the fake, on the same server as chat completions:
//
//	POST /v1/files (multipart/form-data: purpose=batch, file)   -> file object
//	GET  /v1/files/{id}                                          -> file object
//	GET  /v1/files/{id}/content                                  -> the bytes
//	POST /v1/batches {input_file_id, endpoint, completion_window} -> batch object
//	GET  /v1/batches/{id}                                        -> batch object
//	POST /v1/batches/{id}/cancel                                 -> batch object
//
// Written from OpenAI's API reference, "Batch" and "Files"
// (https://platform.openai.com/docs/api-reference/batch) and the guide
// "Batch API", as of 2026. A batch starts validating; each retrieval moves it
// on after BatchOptions.PollsPerStatus retrievals: validating -> in_progress
// -> finalizing -> completed (or failed when the input file does not
// validate, or BatchOptions.End). The requests are answered by the chat
// handler itself when the batch has been in_progress for its retrievals: a
// 200 answer is an output-file line, any other (or a query with the
// [[batch-error]] marker: a 500) an error-file line, in the formats of the
// Batch API: {"id", "custom_id", "response": {"status_code", "request_id",
// "body"}, "error"}. request_counts follow the answers as they come. A batch
// of more than backgroundAbove requests is answered in the background, as
// the Anthropic and Gemini stand-ins do (processBatch): it stays in_progress,
// its request_counts growing, until every answer is in, so no retrieval
// outlasts a client's per-call timeout; a cancel stops the answering at the
// next request. output_file_id and error_file_id are set only once the batch
// has ended (completed, expired or cancelled: the results of the requests
// answered before it ended), as the Batch object documents; finalizing is
// the API preparing them.

// BatchOptions configure the fake's Batch API.
type BatchOptions struct {
	// PollsPerStatus is the number of retrievals a batch spends in each
	// non-terminal status (default 1).
	PollsPerStatus int
	// End is the terminal status after finalizing: "" (completed), "expired"
	// or "cancelled" (the server cancels it); "failed" fails the batch at
	// validation.
	End string
	// Answer is the number of requests answered before an expired or
	// cancelled end (their lines are in the output and error files; the rest
	// have none). 0 with End "" answers every request.
	Answer int
	// Background is the largest batch answered within the retrieval that
	// ends in_progress (0: 10,000); a bigger one is answered in the
	// background. The Anthropic and Gemini stand-ins take it too.
	Background int
}

type fakeFile struct {
	id, name, purpose string
	data              []byte
}

type fakeBatch struct {
	id, input, status   string
	polls               int
	output, errors      string
	total, done, failed int
	errs                []map[string]any
	cancel              bool
	// started and processed: a batch of more than backgroundAbove requests
	// is answered in the background (processBatch).
	started, processed bool
}

// Uploads is the number of files uploaded (not the output and error files).
func (s *Server) Uploads() int { s.mu.Lock(); defer s.mu.Unlock(); return s.nUploads }

// Batches is the number of batches created.
func (s *Server) Batches() int { s.mu.Lock(); defer s.mu.Unlock(); return s.nBatches }

func (s *Server) serveBatchAPI(w http.ResponseWriter, r *http.Request) {
	if s.opt.APIKey != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || got != s.opt.APIKey {
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key", "Incorrect API key provided: "+maskKey(got)+".")
			return
		}
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // v1 files|batches [id [content|cancel]]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files, s.batches = map[string]*fakeFile{}, map[string]*fakeBatch{}
	}
	switch {
	case parts[1] == "files" && len(parts) == 2 && r.Method == http.MethodPost:
		s.upload(w, r)
	case parts[1] == "files" && len(parts) == 3 && r.Method == http.MethodGet:
		f, ok := s.files[parts[2]]
		if !ok {
			writeError(w, http.StatusNotFound, "invalid_request_error", "", "", "No such File object: "+parts[2])
			return
		}
		writeJSON(w, fileObject(f))
	case parts[1] == "files" && len(parts) == 4 && parts[3] == "content" && r.Method == http.MethodGet:
		f, ok := s.files[parts[2]]
		if !ok {
			writeError(w, http.StatusNotFound, "invalid_request_error", "", "", "No such File object: "+parts[2])
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(f.data)
	case parts[1] == "batches" && len(parts) == 2 && r.Method == http.MethodPost:
		var req struct {
			InputFileID      string `json:"input_file_id"`
			Endpoint         string `json:"endpoint"`
			CompletionWindow string `json:"completion_window"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "We could not parse the JSON body of your request.")
			return
		}
		f, ok := s.files[req.InputFileID]
		switch {
		case !ok:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "input_file_id", "", "No such File object: "+req.InputFileID)
			return
		case f.purpose != "batch":
			writeError(w, http.StatusBadRequest, "invalid_request_error", "input_file_id", "", "The input file must have purpose 'batch'.")
			return
		case req.Endpoint != "/v1/chat/completions":
			writeError(w, http.StatusBadRequest, "invalid_request_error", "endpoint", "", "Invalid value for 'endpoint'.")
			return
		case req.CompletionWindow != "24h":
			writeError(w, http.StatusBadRequest, "invalid_request_error", "completion_window", "", "Invalid value for 'completion_window': only '24h' is supported.")
			return
		}
		s.nBatches++
		b := &fakeBatch{id: fmt.Sprintf("batch_fake%d", s.nBatches), input: f.id, status: "validating"}
		s.batches[b.id] = b
		writeJSON(w, batchObject(b))
	case parts[1] == "batches" && len(parts) == 3 && r.Method == http.MethodGet:
		b, ok := s.batches[parts[2]]
		if !ok {
			writeError(w, http.StatusNotFound, "invalid_request_error", "", "", "No such Batch object: "+parts[2])
			return
		}
		s.advance(b)
		writeJSON(w, batchObject(b))
	case parts[1] == "batches" && len(parts) == 4 && parts[3] == "cancel" && r.Method == http.MethodPost:
		b, ok := s.batches[parts[2]]
		if !ok {
			writeError(w, http.StatusNotFound, "invalid_request_error", "", "", "No such Batch object: "+parts[2])
			return
		}
		if b.status == "validating" || b.status == "in_progress" || b.status == "finalizing" {
			b.status, b.cancel = "cancelling", true
		}
		writeJSON(w, batchObject(b))
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "unknown_url", "Unknown request URL: "+r.Method+" "+r.URL.Path+".")
	}
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "The request must be multipart/form-data.")
		return
	}
	f := &fakeFile{}
	seenFile := false
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "Malformed multipart body.")
			return
		}
		data, _ := io.ReadAll(io.LimitReader(p, 200<<20))
		switch p.FormName() {
		case "purpose":
			f.purpose = string(data)
		case "file":
			f.name, f.data, seenFile = p.FileName(), data, true
		}
	}
	if !seenFile || f.purpose == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "'file' and 'purpose' are required.")
		return
	}
	s.nFiles++
	s.nUploads++
	f.id = fmt.Sprintf("file-fake%d", s.nFiles)
	s.files[f.id] = f
	writeJSON(w, fileObject(f))
}

func (s *Server) addFile(name string, data []byte) string {
	s.nFiles++
	f := &fakeFile{id: fmt.Sprintf("file-fake%d", s.nFiles), name: name, purpose: "batch_output", data: data}
	s.files[f.id] = f
	return f.id
}

// advance moves b one retrieval on.
func (s *Server) advance(b *fakeBatch) {
	per := max(s.opt.Batch.PollsPerStatus, 1)
	b.polls++
	switch b.status {
	case "validating":
		if b.polls < per {
			return
		}
		b.polls = 0
		if s.validate(b) {
			b.status = "in_progress"
		} else {
			b.status = "failed"
		}
	case "in_progress":
		if b.polls < per {
			return
		}
		if !s.processBatch(&b.started, &b.processed, b.total, func() { s.process(b) }) {
			return // still answering in the background
		}
		b.polls = 0
		b.status = "finalizing"
	case "finalizing":
		if b.polls < per {
			return
		}
		b.status = "completed"
		switch s.opt.Batch.End {
		case "expired":
			b.status = "expired"
		case "cancelled":
			b.status = "cancelled"
		}
	case "cancelling":
		if b.total == 0 && !s.validate(b) {
			b.status = "failed"
			return
		}
		if b.started && !b.processed {
			return // the background answering stops at its next request
		}
		if b.output == "" && b.errors == "" {
			s.process(b)
		}
		b.status = "cancelled"
	}
}

type inputLine struct {
	CustomID *string         `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// validate checks the input file as the Batch API does: every line a JSON
// request with a unique custom_id, method POST, url the batch's endpoint, a
// body with one model for the whole file.
func (s *Server) validate(b *fakeBatch) bool {
	if s.opt.Batch.End == "failed" {
		b.errs = append(b.errs, map[string]any{"code": "invalid_request", "message": "The batch failed validation.", "param": nil, "line": nil})
		return false
	}
	seen := map[string]bool{}
	model := ""
	sc := bufio.NewScanner(bytes.NewReader(s.files[b.input].data))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var l inputLine
		bad := func(code, msg string) bool {
			b.errs = append(b.errs, map[string]any{"code": code, "message": msg, "param": nil, "line": n})
			return false
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			return bad("invalid_json_line", "This line is not parseable as valid JSON.")
		}
		if l.CustomID == nil || *l.CustomID == "" {
			return bad("missing_required_parameter", "Missing required parameter: 'custom_id'.")
		}
		if seen[*l.CustomID] {
			return bad("duplicate_custom_id", "The custom_id for this request is a duplicate of another request.")
		}
		seen[*l.CustomID] = true
		if l.Method != http.MethodPost || l.URL != "/v1/chat/completions" {
			return bad("invalid_url", "The URL provided for this request does not match the batch endpoint.")
		}
		var body struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(l.Body, &body) != nil {
			return bad("invalid_request", "'body' is not a JSON object.")
		}
		if n == 1 {
			model = body.Model
		} else if body.Model != model {
			return bad("mismatched_model", "The model must be the same for every request of a batch.")
		}
	}
	b.total = n
	if n == 0 {
		b.errs = append(b.errs, map[string]any{"code": "empty_file", "message": "The batch input file is empty.", "param": nil, "line": nil})
		return false
	}
	return true
}

// process answers the batch's requests through the chat handler and writes
// the output and error files (s.mu held, released while the handler runs: a
// cancel that comes meanwhile stops the answering at the next request).
func (s *Server) process(b *fakeBatch) {
	limit := func() int {
		if s.opt.Batch.End != "" || b.cancel {
			return min(s.opt.Batch.Answer, b.total)
		}
		return b.total
	}
	var out, errs bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(s.files[b.input].data))
	sc.Buffer(nil, 64<<20)
	for n := 0; n < limit() && sc.Scan(); n++ {
		var l inputLine
		_ = json.Unmarshal(sc.Bytes(), &l)
		id := fmt.Sprintf("batch_req_%s_%d", b.id, n+1)
		reqID := fmt.Sprintf("req_%s_%d", b.id, n+1)
		if bytes.Contains(l.Body, []byte("[[batch-error]]")) {
			b.failed++
			line, _ := json.Marshal(map[string]any{"id": id, "custom_id": *l.CustomID, "response": nil,
				"error": map[string]any{"code": "server_error", "message": "The request could not be completed."}})
			errs.Write(append(line, '\n'))
			continue
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(l.Body))
		if s.opt.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+s.opt.APIKey)
		}
		s.mu.Unlock()
		s.serve(rec, req)
		s.mu.Lock()
		var body json.RawMessage = bytes.TrimSpace(rec.Body.Bytes())
		line, _ := json.Marshal(map[string]any{"id": id, "custom_id": *l.CustomID,
			"response": map[string]any{"status_code": rec.Code, "request_id": reqID, "body": body}, "error": nil})
		if rec.Code == http.StatusOK {
			b.done++
			out.Write(append(line, '\n'))
		} else {
			b.failed++
			errs.Write(append(line, '\n'))
		}
	}
	if out.Len() > 0 || b.done > 0 {
		b.output = s.addFile(b.id+"_output.jsonl", out.Bytes())
	}
	if errs.Len() > 0 {
		b.errors = s.addFile(b.id+"_error.jsonl", errs.Bytes())
	}
}

func fileObject(f *fakeFile) map[string]any {
	return map[string]any{"id": f.id, "object": "file", "bytes": len(f.data), "created_at": 1700000000, "filename": f.name, "purpose": f.purpose}
}

func batchObject(b *fakeBatch) map[string]any {
	output, errors := "", ""
	if b.status == "completed" || b.status == "expired" || b.status == "cancelled" {
		output, errors = b.output, b.errors
	}
	o := map[string]any{"id": b.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": nil, "input_file_id": b.input,
		"completion_window": "24h", "status": b.status, "output_file_id": nullable(output), "error_file_id": nullable(errors),
		"created_at": 1700000000, "request_counts": map[string]int{"total": b.total, "completed": b.done, "failed": b.failed}, "metadata": nil}
	if len(b.errs) > 0 {
		o["errors"] = map[string]any{"object": "list", "data": b.errs}
	}
	if b.status == "validating" {
		o["request_counts"] = map[string]int{"total": 0, "completed": 0, "failed": 0}
	}
	return o
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
