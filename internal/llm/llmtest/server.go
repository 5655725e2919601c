// Package llmtest is a local OpenAI-compatible chat-completions server for tests:
// it follows the protocol (POST /v1/chat/completions, bearer auth, OpenAI error
// bodies {"error": {"message", "type", "param", "code"}}, 429 with Retry-After,
// 5xx, `usage`, response_format json_schema) and plays two models:
//
//   - a deterministic relevance judge: for a user message holding <query>…</query>
//     and <document>…</document> (or the tags of judge.Messages, <query-ID>…
//     </query-ID>) it answers the grade of a hidden relevance table
//     (absent pairs: 0), as {"reason", "score"} JSON when response_format asks for
//     it, else as a text ending in "Final score: N";
//   - a query generator: for a user message holding only <document>…</document>
//     (or <document-ID>…</document-ID>; the counts asked for may be in the system
//     message) it
//     writes questions and keyword queries made of the document's own words.
//
// Markers in a query (judge) or document (generator) text inject answer faults:
// [[malformed]] (never a score), [[out-of-range]] (score 7), [[flaky]] (the first
// answer of each pair is malformed, the next ones good), [[flicker]] (a pair's
// calls alternate between its grade and the next one, mod 4), [[offtopic]]
// (generator: queries of words the document does not contain), [[echo-key]]
// (a hostile judge: its reason, and the answer of [[malformed]], quote the
// credential the request carried, bare: a bearer token as sent, Basic
// credentials decoded; the Batch APIs' requests carry Options.APIKey; a
// hostile generator: its first question and its first keyword query of the
// document quote it).
package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Options configure a Server.
type Options struct {
	// APIKey, when set, is the only bearer token accepted (401 otherwise).
	APIKey string
	// Grades is the hidden relevance table: query text -> document text -> grade
	// (absent: 0). Without a table the grade is Overlap(query, document).
	Grades map[string]map[string]int
	// Delay is waited before each answer (an answer "takes" this long).
	Delay time.Duration
	// RateLimitEvery makes every Nth request (1-based count) a 429.
	RateLimitEvery int
	// RetryAfter is the Retry-After of a 429, in seconds.
	RetryAfter int
	// FailFirst are statuses served, in order, to the first requests.
	FailFirst []int
	// NoSchema rejects response_format json_schema with a 400, as a server
	// without structured output does.
	NoSchema bool
	// NoUsage omits `usage` from answers.
	NoUsage bool
	// Batch configures the Batch API (/v1/files, /v1/batches; see batch.go).
	Batch BatchOptions
}

// Server is a running fake.
type Server struct {
	*httptest.Server
	opt                   Options
	requests              atomic.Int64 // every request to the endpoint
	answered              atomic.Int64 // 200 answers
	inFlight, maxInFlight atomic.Int64
	mu                    sync.Mutex
	pairs                 map[string]int // calls per (query, document), for [[flaky]] and [[flicker]]
	fails                 []int
	files                 map[string]*fakeFile
	batches               map[string]*fakeBatch
	nFiles, nBatches      int
	nUploads              int
	providers             *providerState // the Anthropic and Gemini stand-ins (providers.go)
}

// New starts a server; Close it when done.
func New(opt Options) *Server {
	s := newServer(opt)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// newServer is a Server not yet listening.
func newServer(opt Options) *Server {
	return &Server{opt: opt, pairs: map[string]int{}, fails: append([]int(nil), opt.FailFirst...)}
}

// Requests is the number of requests received on the chat-completions path.
func (s *Server) Requests() int64 { return s.requests.Load() }

// MaxInFlight is the largest number of requests answered at once.
func (s *Server) MaxInFlight() int64 { return s.maxInFlight.Load() }

// Answered is the number of completions answered with 200.
func (s *Server) Answered() int64 { return s.answered.Load() }

func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nullable(param), "code": nullable(code)}}
	_ = json.NewEncoder(w).Encode(body)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature    *float64 `json:"temperature"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/rerank" { // the offline reranker (rerank.go)
		s.serveRerank(w, r)
		return
	}
	if s.serveProvider(w, r) {
		return
	}
	if p := r.URL.Path; p == "/v1/files" || p == "/v1/batches" || strings.HasPrefix(p, "/v1/files/") || strings.HasPrefix(p, "/v1/batches/") {
		s.serveBatchAPI(w, r)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "unknown_url", "Unknown request URL: "+r.Method+" "+r.URL.Path+".")
		return
	}
	n := s.requests.Add(1)
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_supported", "Invalid method for URL (only POST is supported).")
		return
	}
	if s.opt.APIKey != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || got != s.opt.APIKey {
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key", "Incorrect API key provided: "+maskKey(got)+".")
			return
		}
	}
	s.mu.Lock()
	var fail int
	if len(s.fails) > 0 {
		fail, s.fails = s.fails[0], s.fails[1:]
	}
	s.mu.Unlock()
	if fail == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(s.opt.RetryAfter))
		writeError(w, fail, "requests", "", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later.")
		return
	}
	if fail != 0 {
		writeError(w, fail, "server_error", "", "", "The server had an error while processing your request.")
		return
	}
	if s.opt.RateLimitEvery > 0 && n%int64(s.opt.RateLimitEvery) == 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s.opt.RetryAfter))
		writeError(w, http.StatusTooManyRequests, "requests", "", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later.")
		return
	}
	var req request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 32<<20))
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "messages", "", "'messages' is a required property")
		return
	}
	schema := false
	if rf := req.ResponseFormat; rf != nil {
		switch {
		case rf.Type == "json_schema" && s.opt.NoSchema:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "response_format", "", "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.")
			return
		case rf.Type == "json_schema" && (rf.JSONSchema == nil || rf.JSONSchema.Name == "" || len(rf.JSONSchema.Schema) == 0):
			writeError(w, http.StatusBadRequest, "invalid_request_error", "response_format.json_schema", "", "Missing required parameter: 'response_format.json_schema.name' or 'schema'.")
			return
		case rf.Type == "json_schema":
			schema = true
		case rf.Type != "text" && rf.Type != "json_object":
			writeError(w, http.StatusBadRequest, "invalid_request_error", "response_format.type", "", "Invalid value for 'response_format.type'.")
			return
		}
	}
	cur := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if cur <= m || s.maxInFlight.CompareAndSwap(m, cur) {
			break
		}
	}
	if s.opt.Delay > 0 {
		t := time.NewTimer(s.opt.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	first, system := "", ""
	for _, m := range req.Messages {
		if m.Role == "system" && system == "" {
			system = m.Content
		}
		if m.Role == "user" {
			first = m.Content
			break
		}
	}
	var content string
	switch {
	case tagOpen(first, "query") != "":
		content = s.judge(first, schema, r.Header.Get("Authorization"))
	case tagOpen(first, "document") != "":
		content = s.generate(system, first, req, schema, r.Header.Get("Authorization"))
	default:
		content = "I can only judge relevance or write queries."
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	completion := len(strings.Fields(content))
	model := req.Model
	if model == "" {
		model = "fake-llm"
	}
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-fake-%d", n), "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "logprobs": nil, "finish_reason": "stop"}},
	}
	if !s.opt.NoUsage {
		resp["usage"] = map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	}
	s.answered.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func maskKey(k string) string {
	if len(k) < 8 {
		return "****"
	}
	return k[:3] + "****" + k[len(k)-4:]
}

// tagRE is an opening tag <name> or <name-ID> (the prompts' delimiters) at
// the start of a line.
var tagRE = regexp.MustCompile(`(?m)^<(query|document)(-[0-9a-f]+)?>$`)

// tagOpen is the first opening tag of name in s, "" when there is none.
func tagOpen(s, name string) string {
	for _, m := range tagRE.FindAllStringSubmatch(s, -1) {
		if m[1] == name {
			return m[0]
		}
	}
	return ""
}

// tagged is the text of the first <name…> element of s, up to its own closing
// tag (the last one, for untagged names).
func tagged(s, name string) string {
	open := tagOpen(s, name)
	if open == "" {
		return ""
	}
	return between(s[tagRE.FindStringIndex(s)[0]:], open, "</"+open[1:])
}

// between returns the text between open and the last close after it, without
// the newline that follows open and the one that precedes close.
func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	j := strings.LastIndex(s, close)
	if j < 0 {
		return ""
	}
	s = s[:j]
	s = strings.TrimPrefix(s, "\n")
	return strings.TrimSuffix(s, "\n")
}

// judge answers the grade of the hidden table, through the faults of the
// query; auth is the request's Authorization header ([[echo-key]]).
func (s *Server) judge(prompt string, schema bool, auth string) string {
	q := tagged(prompt, "query")
	d := tagged(prompt, "document")
	grade := s.opt.Grades[q][d]
	if s.opt.Grades == nil {
		grade = Overlap(q, d)
	}
	s.mu.Lock()
	key := q + "\x00" + d
	call := s.pairs[key]
	s.pairs[key]++
	s.mu.Unlock()
	echo := ""
	if strings.Contains(q, "[[echo-key]]") {
		echo = ", says the key " + credential(auth)
	}
	switch {
	case strings.Contains(q, "[[malformed]]"):
		return "This passage looks quite relevant to me" + echo + "."
	case strings.Contains(q, "[[out-of-range]]"):
		grade = 7
	case strings.Contains(q, "[[flaky]]") && call == 0:
		return "Hmm, let me think about it."
	case strings.Contains(q, "[[flicker]]") && call%2 == 1:
		grade = (grade + 1) % 4
	}
	reason := fmt.Sprintf("intent match M=%d, trustworthiness T=%d", grade, grade) + echo
	if schema {
		b, _ := json.Marshal(map[string]any{"reason": reason, "score": grade})
		return string(b)
	}
	return reason + "\nFinal score: " + strconv.Itoa(grade)
}

// credential is the credential of an Authorization header, bare: a bearer
// token as sent, Basic credentials decoded ("user:password"); "" for none.
func credential(auth string) string {
	scheme, v, _ := strings.Cut(auth, " ")
	if strings.EqualFold(scheme, "basic") {
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			return string(b)
		}
	}
	return v
}

// Overlap is the grade of the judge without a table: the share of the query's
// words of 4+ letters found in the document, 3 for all, 2 for half or more, 1
// for some, 0 for none (case-insensitive, exact words).
func Overlap(query, doc string) int {
	words := func(s string) []string {
		var out []string
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) >= 4 {
				out = append(out, w)
			}
		}
		return out
	}
	in := map[string]bool{}
	for _, w := range words(doc) {
		in[w] = true
	}
	qw := words(query)
	hit := 0
	for _, w := range qw {
		if in[w] {
			hit++
		}
	}
	switch {
	case len(qw) == 0 || hit == 0:
		return 0
	case hit == len(qw):
		return 3
	case 2*hit >= len(qw):
		return 2
	}
	return 1
}

var countRE = regexp.MustCompile(`(\d+) (natural-language question|keyword quer)`)

// generate writes questions and keyword queries from the document's words;
// auth is the request's Authorization header ([[echo-key]]).
func (s *Server) generate(system, prompt string, req request, schema bool, auth string) string {
	doc := tagged(prompt, "document")
	nq, nk := 0, 0
	for _, m := range countRE.FindAllStringSubmatch(system+"\n"+prompt, -1) {
		v, _ := strconv.Atoi(m[1])
		if strings.HasPrefix(m[2], "natural") {
			nq = v
		} else {
			nk = v
		}
	}
	var words []string
	for _, w := range strings.FieldsFunc(doc, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 4 {
			words = append(words, strings.ToLower(w))
		}
	}
	if strings.Contains(doc, "[[offtopic]]") || len(words) == 0 {
		words = []string{"zebra", "quantum", "volcano", "saxophone", "glacier", "tangerine"}
	}
	word := func(i int) string { return words[i%len(words)] }
	qs := make([]string, nq)
	for i := range qs {
		qs[i] = fmt.Sprintf("what does it say about %s %s?", word(2*i), word(2*i+1))
	}
	ks := make([]string, nk)
	for i := range ks {
		ks[i] = word(3*i+1) + " " + word(3*i+2)
	}
	if strings.Contains(doc, "[[echo-key]]") && nq > 0 && nk > 0 {
		qs[0] = strings.TrimSuffix(qs[0], "?") + ", says the key " + credential(auth) + "?"
		ks[0] += " " + credential(auth)
	}
	if schema {
		b, _ := json.Marshal(map[string]any{"questions": qs, "keywords": ks})
		return string(b)
	}
	var b strings.Builder
	for _, q := range qs {
		b.WriteString("question: " + q + "\n")
	}
	for _, k := range ks {
		b.WriteString("keyword: " + k + "\n")
	}
	return b.String()
}
