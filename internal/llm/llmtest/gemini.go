package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The stand-in of the Gemini API's batch mode, on the same server as the chat
// completions, written from Google's documentation ("Gemini API, Batch API
// guide (batch mode)" and the reference "Batch mode: models.batchGenerateContent,
// batches.get, batches.cancel", the Files API's resumable upload and
// download, GenerateContentRequest, GenerationConfig and UsageMetadata,
// ai.google.dev, as of 2026):
//
//	POST /v1beta/models/{model}:batchGenerateContent {"batch": {"display_name",
//	     "input_config": {"requests": {"requests": [{"request", "metadata": {"key"}}]}}
//	     or {"file_name": "files/ID"}}}                  -> operation {"name": "batches/ID", "metadata"}
//	GET  /v1beta/batches/{id}                            -> operation ("done", "metadata.state",
//	     "response": {"inlinedResponses": {"inlinedResponses": [...]}} or {"responsesFile"}, "error")
//	POST /v1beta/batches/{id}:cancel                     -> {}
//	POST /upload/v1beta/files (resumable: start; then upload, finalize) -> {"file": {"name"}}
//	GET  /download/v1beta/files/{id}:download?alt=media -> the file's bytes
//
// The key is x-goog-api-key (or ?key=): with Options.APIKey set, another is a
// 400 INVALID_ARGUMENT "API key not valid". States are the REST API's
// BATCH_STATE_PENDING (BatchOptions.PollsPerStatus retrievals), RUNNING (as
// many), then SUCCEEDED; BatchOptions.End "expired" ends EXPIRED with no
// response, "cancelled" ends CANCELLED with the first BatchOptions.Answer
// responses, "failed" ends FAILED with an error (the input did not
// validate). Inline requests are answered inline, an input file by a
// responses file of {"key", "response"} or {"key", "error"} lines. Each
// request is answered by the chat handler (systemInstruction, contents,
// generationConfig's temperature and responseMimeType application/json with
// responseJsonSchema as response_format json_schema) and written as a
// GenerateContentResponse (candidates[0].content.parts[0].text,
// usageMetadata promptTokenCount and candidatesTokenCount). A query with the
// [[batch-error]] marker gets an error status (13 INTERNAL).

type gemBatch struct {
	id, model, state string
	polls            int
	reqs             []gemRequest
	file             bool
	responses        []json.RawMessage // inline: {"metadata", "response"|"error"}
	responsesFile    string
	done, ok, failed int
	// started and processed: a large batch is answered in the background
	// (processBatch).
	started, processed bool
}

type gemRequest struct {
	Key     string
	Request json.RawMessage
}

func gemError(w http.ResponseWriter, status, code int, st, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": st}})
}

// GeminiBatches is the number of Gemini batches created; GeminiUploads the
// files uploaded.
func (s *Server) GeminiBatches() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.prov().gem) }

// GeminiUploads is the number of files uploaded to the Gemini stand-in.
func (s *Server) GeminiUploads() int { s.mu.Lock(); defer s.mu.Unlock(); return s.prov().gemUploads }

func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if s.opt.APIKey != "" && key != s.opt.APIKey {
		gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prov()
	path := r.URL.Path
	switch {
	case path == "/upload/v1beta/files" && r.Method == http.MethodPost:
		s.gemUpload(w, r)
	case strings.HasPrefix(path, "/download/v1beta/files/") && strings.HasSuffix(path, ":download") && r.Method == http.MethodGet:
		if r.URL.Query().Get("alt") != "media" {
			gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "alt=media is required to download a file's content.")
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path, "/download/v1beta/"), ":download")
		data, ok := p.gemFiles[name]
		if !ok {
			gemError(w, http.StatusNotFound, 404, "NOT_FOUND", "File "+name+" not found.")
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	case strings.HasPrefix(path, "/v1beta/models/") && strings.HasSuffix(path, ":batchGenerateContent") && r.Method == http.MethodPost:
		s.gemCreate(w, r, strings.TrimSuffix(strings.TrimPrefix(path, "/v1beta/"), ":batchGenerateContent"))
	case strings.HasPrefix(path, "/v1beta/batches/") && strings.HasSuffix(path, ":cancel") && r.Method == http.MethodPost:
		b := p.gem[strings.TrimSuffix(strings.TrimPrefix(path, "/v1beta/"), ":cancel")]
		if b == nil {
			gemError(w, http.StatusNotFound, 404, "NOT_FOUND", "Batch not found.")
			return
		}
		if b.state == "BATCH_STATE_PENDING" || b.state == "BATCH_STATE_RUNNING" {
			s.gemProcess(b, min(s.opt.Batch.Answer, len(b.reqs)))
			b.state = "BATCH_STATE_CANCELLED"
		}
		writeJSON(w, map[string]any{})
	case strings.HasPrefix(path, "/v1beta/batches/") && r.Method == http.MethodGet:
		b := p.gem[strings.TrimPrefix(path, "/v1beta/")]
		if b == nil {
			gemError(w, http.StatusNotFound, 404, "NOT_FOUND", "Batch not found.")
			return
		}
		s.gemAdvance(b)
		writeJSON(w, b.operation())
	default:
		gemError(w, http.StatusNotFound, 404, "NOT_FOUND", "Method not found: "+r.Method+" "+path)
	}
}

// gemUpload is the resumable upload: a start (metadata, the size and type in
// X-Goog-Upload-Header-*), answered with X-Goog-Upload-URL, then the bytes to
// that URL with the command "upload, finalize".
func (s *Server) gemUpload(w http.ResponseWriter, r *http.Request) {
	p := s.prov()
	if r.Header.Get("X-Goog-Upload-Protocol") == "resumable" && r.Header.Get("X-Goog-Upload-Command") == "start" {
		if _, err := strconv.ParseInt(r.Header.Get("X-Goog-Upload-Header-Content-Length"), 10, 64); err != nil {
			gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "X-Goog-Upload-Header-Content-Length is required.")
			return
		}
		p.gemUploadSeq++
		id := strconv.Itoa(p.gemUploadSeq)
		p.gemPending[id] = r.Header.Get("X-Goog-Upload-Header-Content-Length")
		w.Header().Set("X-Goog-Upload-URL", "http://"+r.Host+"/upload/v1beta/files?upload_id="+id+"&upload_protocol=resumable")
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.WriteHeader(http.StatusOK)
		return
	}
	id := r.URL.Query().Get("upload_id")
	size, ok := p.gemPending[id]
	if !ok || r.Header.Get("X-Goog-Upload-Command") != "upload, finalize" || r.Header.Get("X-Goog-Upload-Offset") != "0" {
		gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "Unknown upload, or not an 'upload, finalize' at offset 0.")
		return
	}
	data, _ := io.ReadAll(io.LimitReader(r.Body, 2<<30))
	if strconv.Itoa(len(data)) != size {
		gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "The uploaded size differs from X-Goog-Upload-Header-Content-Length.")
		return
	}
	delete(p.gemPending, id)
	p.gemUploads++
	name := fmt.Sprintf("files/fake-upload-%d", p.gemUploads)
	p.gemFiles[name] = data
	w.Header().Set("X-Goog-Upload-Status", "final")
	writeJSON(w, map[string]any{"file": map[string]any{"name": name, "mimeType": "application/jsonl", "sizeBytes": size, "state": "ACTIVE"}})
}

func (s *Server) gemCreate(w http.ResponseWriter, r *http.Request, model string) {
	var body struct {
		Batch struct {
			DisplayName string `json:"display_name"`
			InputConfig struct {
				Requests *struct {
					Requests []struct {
						Request  json.RawMessage `json:"request"`
						Metadata struct {
							Key string `json:"key"`
						} `json:"metadata"`
					} `json:"requests"`
				} `json:"requests"`
				FileName string `json:"file_name"`
			} `json:"input_config"`
		} `json:"batch"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 20<<20)).Decode(&body); err != nil {
		gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "Invalid JSON payload received: "+err.Error())
		return
	}
	p := s.prov()
	b := &gemBatch{id: fmt.Sprintf("batches/fake%d", len(p.gem)+1), model: model, state: "BATCH_STATE_PENDING"}
	ic := body.Batch.InputConfig
	switch {
	case ic.Requests != nil && ic.FileName == "":
		for _, q := range ic.Requests.Requests {
			b.reqs = append(b.reqs, gemRequest{Key: q.Metadata.Key, Request: q.Request})
		}
	case ic.Requests == nil && ic.FileName != "":
		data, ok := p.gemFiles[ic.FileName]
		if !ok {
			gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "File "+ic.FileName+" not found.")
			return
		}
		b.file = true
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var l struct {
				Key     string          `json:"key"`
				Request json.RawMessage `json:"request"`
			}
			if json.Unmarshal(line, &l) != nil || len(l.Request) == 0 {
				gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", fmt.Sprintf("Line %d of %s is not a {\"key\", \"request\"} object.", i+1, ic.FileName))
				return
			}
			b.reqs = append(b.reqs, gemRequest{Key: l.Key, Request: l.Request})
		}
	default:
		gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "input_config needs exactly one of requests and file_name.")
		return
	}
	if len(b.reqs) == 0 {
		gemError(w, http.StatusBadRequest, 400, "INVALID_ARGUMENT", "The batch has no request.")
		return
	}
	p.gem[b.id] = b
	writeJSON(w, b.operation())
}

func (s *Server) gemAdvance(b *gemBatch) {
	per := max(s.opt.Batch.PollsPerStatus, 1)
	b.polls++
	switch b.state {
	case "BATCH_STATE_PENDING":
		if b.polls < per {
			return
		}
		b.polls = 0
		b.state = "BATCH_STATE_RUNNING"
		if s.opt.Batch.End == "failed" {
			b.state = "BATCH_STATE_FAILED"
		}
	case "BATCH_STATE_RUNNING":
		if b.polls < per {
			return
		}
		switch s.opt.Batch.End {
		case "expired":
			b.state = "BATCH_STATE_EXPIRED"
		case "cancelled":
			s.gemProcess(b, min(s.opt.Batch.Answer, len(b.reqs)))
			b.state = "BATCH_STATE_CANCELLED"
		default:
			if s.processBatch(&b.started, &b.processed, len(b.reqs), func() { s.gemProcess(b, len(b.reqs)) }) {
				b.state = "BATCH_STATE_SUCCEEDED"
			}
		}
	}
}

// gemProcess answers the first n requests through the chat handler.
func (s *Server) gemProcess(b *gemBatch, n int) {
	var file bytes.Buffer
	for _, q := range b.reqs[:n] {
		resp, errStatus := s.gemAnswer(b.model, q.Request)
		b.done++
		item := map[string]any{}
		if errStatus != nil {
			b.failed++
			item["error"] = errStatus
		} else {
			b.ok++
			item["response"] = resp
		}
		if b.file {
			item["key"] = q.Key
			line, _ := json.Marshal(item)
			file.Write(append(line, '\n'))
			continue
		}
		item["metadata"] = map[string]string{"key": q.Key}
		raw, _ := json.Marshal(item)
		b.responses = append(b.responses, raw)
	}
	if b.file {
		b.responsesFile = "files/" + strings.ReplaceAll(b.id, "/", "-") + "-responses"
		s.prov().gemFiles[b.responsesFile] = file.Bytes()
	}
}

// gemAnswer answers one GenerateContentRequest: a GenerateContentResponse, or
// an error status.
func (s *Server) gemAnswer(model string, raw json.RawMessage) (map[string]any, map[string]any) {
	if bytes.Contains(raw, []byte("[[batch-error]]")) {
		return nil, map[string]any{"code": 13, "message": "Internal error encountered.", "status": "INTERNAL"}
	}
	type part struct {
		Text string `json:"text"`
	}
	var req struct {
		SystemInstruction *struct {
			Parts []part `json:"parts"`
		} `json:"systemInstruction"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []part `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			Temperature        *float64        `json:"temperature"`
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
			ResponseSchema     json.RawMessage `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(raw, &req); err != nil || len(req.Contents) == 0 {
		return nil, map[string]any{"code": 3, "message": "contents is required.", "status": "INVALID_ARGUMENT"}
	}
	join := func(ps []part) string {
		var b strings.Builder
		for _, p := range ps {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	msgs := []map[string]string{}
	if si := req.SystemInstruction; si != nil {
		msgs = append(msgs, map[string]string{"role": "system", "content": join(si.Parts)})
	}
	for _, c := range req.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": join(c.Parts)})
	}
	chat := map[string]any{"model": strings.TrimPrefix(model, "models/"), "messages": msgs}
	gc := req.GenerationConfig
	if gc.Temperature != nil {
		chat["temperature"] = *gc.Temperature
	}
	schema := gc.ResponseJSONSchema
	if len(schema) == 0 {
		schema = gc.ResponseSchema
	}
	if gc.ResponseMimeType == "application/json" && len(schema) > 0 {
		chat["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "response", "schema": schema, "strict": true}}
	}
	content, pt, ct, status, msg := s.chat(chat)
	if status != http.StatusOK {
		return nil, map[string]any{"code": 3, "message": msg, "status": "INVALID_ARGUMENT"}
	}
	return map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": content}}, "role": "model"}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": pt, "candidatesTokenCount": ct, "totalTokenCount": pt + ct},
		"modelVersion":  strings.TrimPrefix(model, "models/"),
	}, nil
}

func (b *gemBatch) operation() map[string]any {
	stats := map[string]string{"requestCount": strconv.Itoa(len(b.reqs)), "pendingRequestCount": strconv.Itoa(len(b.reqs) - b.done)}
	if b.done > 0 {
		stats["successfulRequestCount"] = strconv.Itoa(b.ok)
		stats["failedRequestCount"] = strconv.Itoa(b.failed)
	}
	meta := map[string]any{"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch", "model": b.model,
		"displayName": "retrieval-gate", "createTime": "2026-01-01T00:00:00Z", "updateTime": "2026-01-01T00:05:00Z",
		"batchStats": stats, "state": b.state, "name": b.id}
	op := map[string]any{"name": b.id, "metadata": meta}
	switch b.state {
	case "BATCH_STATE_PENDING", "BATCH_STATE_RUNNING":
		return op
	case "BATCH_STATE_FAILED":
		op["done"] = true
		op["error"] = map[string]any{"code": 3, "message": "The batch failed validation."}
		return op
	}
	op["done"] = true
	out := map[string]any{"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"}
	switch {
	case b.file && b.responsesFile != "":
		out["responsesFile"] = b.responsesFile
	case !b.file && b.responses != nil:
		out["inlinedResponses"] = map[string]any{"inlinedResponses": b.responses}
	}
	op["response"] = out
	return op
}
