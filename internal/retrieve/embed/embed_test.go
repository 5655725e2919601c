package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/text"
)

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashProperties(t *testing.T) {
	docs := []string{
		"Reset your password from the sign-in page.",
		"Refunds go back to the original payment method.",
		"Two-factor authentication protects your account.",
		"Cancel your subscription at any time; your password is not needed.",
	}
	h := NewHash(256, docs)
	vecs, err := h.EmbedDocuments(context.Background(), docs)
	require.NoError(t, err)
	t.Run("unit length", func(t *testing.T) {
		for _, v := range vecs {
			require.Len(t, v, 256)
			assert.InDelta(t, 1.0, dot(v, v), 1e-5)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		assert.Equal(t, vecs[1], NewHash(256, docs).Vector(docs[1]))
	})
	t.Run("bit-identical despite collisions", func(t *testing.T) {
		// 3 positions for 60 terms: every position sums many weights, in an
		// order that must not follow Go's randomised map iteration.
		var words []string
		for i := range 60 {
			words = append(words, fmt.Sprintf("w%d", i), fmt.Sprintf("w%d", i*i%17))
		}
		doc := strings.Join(words, " ")
		small := NewHash(3, []string{doc, "w1 w2 w3", "w5 w8"})
		want := slices.Clone(small.weightsInto(doc, false, &scratch{}))
		for range 100 {
			require.Equal(t, want, small.weightsInto(doc, false, &scratch{}))
		}
		u := make([]float32, len(want))
		unitInto(want, u)
		assert.Equal(t, u, small.Vector(doc))
	})
	t.Run("into a buffer: the same vectors, buffers reused", func(t *testing.T) {
		// Long, short, empty, repeated and unknown-word texts, so that a
		// reused map, term list or accumulator that kept anything would show.
		texts := []string{docs[0], "reset", "", docs[1] + " " + docs[0], "zzz qqq", "reset", docs[2]}
		want, err := h.EmbedDocuments(context.Background(), texts)
		require.NoError(t, err)
		dst := make([]float32, len(texts)*h.Dim())
		for i := range dst {
			dst[i] = 7 // garbage the embedder must overwrite
		}
		require.NoError(t, h.EmbedDocumentsInto(context.Background(), texts, dst))
		for i := range texts {
			require.Equal(t, want[i], dst[i*h.Dim():(i+1)*h.Dim()], "text %d", i)
		}
		require.EqualError(t, h.EmbedDocumentsInto(context.Background(), texts, dst[1:]),
			fmt.Sprintf("hash embedder: %d floats for 7 texts of dimension %d", len(dst)-1, h.Dim()))
	})
	t.Run("case and accents do not matter", func(t *testing.T) {
		assert.InDelta(t, 1.0, dot(h.Vector("Sesión de PASSWORD"), h.Vector("sesion de password")), 1e-6)
	})
	t.Run("word order does not matter", func(t *testing.T) {
		assert.InDelta(t, 1.0, dot(h.Vector("reset password"), h.Vector("password reset")), 1e-6)
	})
	t.Run("the right document is nearest", func(t *testing.T) {
		q := h.Vector("how do I reset my password")
		best, bestS := -1, -2.0
		for i, v := range vecs {
			if s := dot(q, v); s > bestS {
				best, bestS = i, s
			}
		}
		assert.Equal(t, 0, best)
	})
	t.Run("rare terms weigh more", func(t *testing.T) {
		assert.Greater(t, h.IDF("refunds"), h.IDF("password"))
		assert.Greater(t, h.IDF("never-seen"), h.IDF("refunds"))
	})
	t.Run("sublinear tf", func(t *testing.T) {
		// "refunds refunds refunds" vs "refunds": same direction (single term).
		assert.InDelta(t, 1.0, dot(h.Vector("refunds refunds refunds"), h.Vector("refunds")), 1e-6)
		// With a second term, tripling the first moves the vector only by 1+ln3, not 3.
		a := h.Vector("refunds refunds refunds payment")
		ratio := math.Abs(float64(a[idx(h, "refunds")]) / float64(a[idx(h, "payment")]))
		want := (1 + math.Log(3)) * h.IDF("refunds") / h.IDF("payment")
		assert.InDelta(t, want, ratio, 1e-4)
	})
	t.Run("queries drop terms the KB never uses", func(t *testing.T) {
		q, err := h.EmbedQueries(context.Background(), []string{"zzz qqq refunds", "zzz"})
		require.NoError(t, err)
		assert.Equal(t, h.Vector("refunds"), q[0])
		assert.InDelta(t, 0.0, dot(q[1], q[1]), 0)
	})
	t.Run("no terms gives zero vector", func(t *testing.T) {
		assert.InDelta(t, 0.0, dot(h.Vector("!!! ..."), h.Vector("!!! ...")), 0)
	})
}

// idx finds the slot of a single-term text.
func idx(h *Hash, term string) int {
	v := h.Vector(term)
	for i, x := range v {
		if x != 0 {
			return i
		}
	}
	return -1
}

// openAIServer speaks the OpenAI embeddings protocol: POST /v1/embeddings with
// {"model", "input": [...]}, answering {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}]}
// in reverse order (the protocol's index decides). Each vector is [len(text), 1].
func openAIServer(t *testing.T, statuses []int, requests *atomic.Int32) *httptest.Server {
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(requests.Add(1))
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		mu.Lock()
		st := 200
		if n <= len(statuses) {
			st = statuses[n-1]
		}
		mu.Unlock()
		if st != 200 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"slow down"}}`, st)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test-KEY" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "bge-small" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, []float32{float32(len(req.Input[i])), 1}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
}

func fastPolicy() httpretry.Policy {
	return httpretry.Policy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, Timeout: 5 * time.Second}
}

func TestOpenAI(t *testing.T) {
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	tests := []struct {
		name     string
		statuses []int
		key      string
		wantReqs int32
		wantErr  string
	}{
		{"batched, order by index", nil, "sk-test-KEY", 3, ""},
		{"429 then success", []int{429}, "sk-test-KEY", 4, ""},
		{"500s exhausted", []int{500, 500, 500}, "sk-test-KEY", 3, "answered HTTP 500 after 3 attempt(s)"},
		{"bad key is not retried and not logged", nil, "sk-wrong-KEY", 1, "HTTP 401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reqs atomic.Int32
			srv := openAIServer(t, tt.statuses, &reqs)
			defer srv.Close()
			e, err := NewOpenAI(OpenAIConfig{URL: srv.URL, Model: "bge-small", APIKey: tt.key,
				Batching: Batching{Size: 2, Concurrency: 1}, Policy: fastPolicy()})
			require.NoError(t, err)
			vecs, err := e.EmbedDocuments(context.Background(), texts)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), tt.key)
				assert.Equal(t, tt.wantReqs, reqs.Load())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantReqs, reqs.Load())
			require.Len(t, vecs, len(texts))
			for i, v := range vecs {
				assert.Equal(t, []float32{float32(len(texts[i])), 1}, v)
			}
		})
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	e, err := NewOpenAI(OpenAIConfig{URL: "http://" + addr + "/v1", Policy: fastPolicy()})
	require.NoError(t, err)
	start := time.Now()
	_, err = e.EmbedQueries(context.Background(), []string{"q"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "embedding server: http://"+addr+"/v1/embeddings unreachable after 3 attempt(s)")
	assert.Contains(t, err.Error(), "connection refused")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestOllama runs the Ollama client against a server speaking
// Ollama's POST /api/embed {"model","input":[...]} -> {"embeddings":[[...]]},
// failing the first request with 503 to exercise the retrying transport.
func TestOllama(t *testing.T) {
	var reqs atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reqs.Add(1) == 1 {
			http.Error(w, "loading model", http.StatusServiceUnavailable)
			return
		}
		// assert, not require: a handler runs outside the test's goroutine.
		if !assert.Equal(t, "/api/embed", r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		if !assert.NoError(t, json.NewDecoder(r.Body).Decode(&req)) {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		var in []string
		if err := json.Unmarshal(req.Input, &in); err != nil {
			var one string
			if !assert.NoError(t, json.Unmarshal(req.Input, &one)) {
				http.Error(w, "input is neither a string nor a list of strings", http.StatusBadRequest)
				return
			}
			in = []string{one}
		}
		assert.Equal(t, "nomic-embed-text", req.Model)
		out := [][]float32{}
		for _, s := range in {
			out = append(out, []float32{float32(len(s)), float32(strings.Count(s, "x"))})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out})
	}))
	defer srv.Close()
	e, err := NewOllama(OllamaConfig{URL: srv.URL, Model: "nomic-embed-text", Batching: Batching{Size: 2},
		HTTP: httpretry.NewHTTPClient(&httpretry.Transport{Policy: fastPolicy()})})
	require.NoError(t, err)
	vecs, err := e.EmbedDocuments(context.Background(), []string{"x", "xx y", "abc"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 1}, {4, 2}, {3, 0}}, vecs)
	assert.Equal(t, int32(3), reqs.Load(), "one 503 retried, then two batches")

	_, err = NewOllama(OllamaConfig{URL: srv.URL})
	assert.ErrorContains(t, err, "--embedder-model")
}

// TestHashFingerprintNamesTheTerms: the hash embedder's vectors are a function
// of the terms text.Each gives, so its fingerprint (hence a kept collection's)
// names their version: a collection embedded from older terms is rebuilt.
func TestHashFingerprintNamesTheTerms(t *testing.T) {
	assert.Contains(t, NewHash(64, nil).Fingerprint(), fmt.Sprintf(":text=%d:", text.Version))
}

func TestFNV64a(t *testing.T) {
	for _, s := range []string{"", "a", "password", "sesión"} {
		f := fnv.New64a()
		_, _ = f.Write([]byte(s))
		assert.Equal(t, f.Sum64(), fnv64a(s), s)
	}
}

// Batching sends batches of Size texts with at most Concurrency in flight, keeps
// the input order, and stops at the first error.
func TestBatchingBoundsConcurrency(t *testing.T) {
	texts := make([]string, 41)
	for i := range texts {
		texts[i] = fmt.Sprint(i)
	}
	var inFlight, peak, calls atomic.Int32
	fn := func(ctx context.Context, batch []string) ([][]float32, error) {
		calls.Add(1)
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		assert.LessOrEqual(t, len(batch), 4)
		time.Sleep(5 * time.Millisecond)
		out := make([][]float32, len(batch))
		for i, s := range batch {
			var x float32
			_, _ = fmt.Sscan(s, &x)
			out[i] = []float32{x, 1}
		}
		return out, nil
	}
	vecs, err := Batching{Size: 4, Concurrency: 3}.run(context.Background(), texts, fn)
	require.NoError(t, err)
	assert.Equal(t, int32(11), calls.Load(), "ceil(41/4) batches")
	assert.Equal(t, int32(3), peak.Load(), "at most 3 requests in flight, and 3 are used")
	for i, v := range vecs {
		assert.Equal(t, float32(i), v[0])
	}

	_, err = Batching{Size: 4, Concurrency: 2}.run(context.Background(), texts, func(ctx context.Context, batch []string) ([][]float32, error) {
		return nil, fmt.Errorf("server says no")
	})
	assert.ErrorContains(t, err, "server says no")
}

// An embedder answering all-zero vectors is an error, not empty retrieved lists
// (issue 10 item 15).
func TestOpenAIZeroVectors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[0.5,0.1]},{"index":1,"embedding":[0,0]}]}`))
	}))
	defer srv.Close()
	e, err := NewOpenAI(OpenAIConfig{URL: srv.URL, Policy: fastPolicy()})
	require.NoError(t, err)
	_, err = e.EmbedDocuments(context.Background(), []string{"a", "b"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "all-zero vector for text 1")
}

// The API key echoed by a server never reaches an error message.
func TestOpenAIRedactsEchoedKey(t *testing.T) {
	const key = "sk-test-ECHOED-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	e, err := NewOpenAI(OpenAIConfig{URL: srv.URL, APIKey: key, Policy: fastPolicy()})
	require.NoError(t, err)
	_, err = e.EmbedQueries(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Incorrect API key provided: ***")
	assert.NotContains(t, err.Error(), "ECHOED")
}

// endlessServer answers 200 with a body that never ends, counting what it sent.
func endlessServer(t *testing.T, head string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	chunk := []byte(strings.Repeat("1,", 16<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(head))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// Issue 20 item 5, the embedders of the class: an endless vector is refused at
// the batch's cap (1 MiB + 256 KiB a text), by both clients; Ollama's used to
// decode it without end.
func TestEmbedEndlessAnswer(t *testing.T) {
	srv, sent := endlessServer(t, `{"embeddings":[[`)
	o, err := NewOllama(OllamaConfig{URL: srv.URL, Model: "m", Batching: Batching{Size: 2},
		HTTP: httpretry.NewHTTPClient(&httpretry.Transport{Policy: fastPolicy()})})
	require.NoError(t, err)
	_, err = o.EmbedDocuments(context.Background(), []string{"a", "b"})
	var tl *httpretry.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, httpretry.EmbedAnswerCap(2), tl.Cap)
	assert.Less(t, sent.Load(), int64(64<<20))

	srv2, sent2 := endlessServer(t, `{"data":[{"embedding":[`)
	e, err := NewOpenAI(OpenAIConfig{URL: srv2.URL, Batching: Batching{Size: 3}, Policy: fastPolicy()})
	require.NoError(t, err)
	_, err = e.EmbedDocuments(context.Background(), []string{"a", "b", "c"})
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, httpretry.EmbedAnswerCap(3), tl.Cap)
	assert.Less(t, sent2.Load(), int64(64<<20))
}

// The ollama embedder names its server without the URL's credentials in every
// error: an HTTP error whose body echoes them, a malformed answer quoting
// them, an unreachable server (it printed the URL as given).
func TestOllamaErrorsKeepURLCredentialsOut(t *testing.T) {
	const pass = "AUDITPASS789"
	for _, answer := range []struct {
		code int
		body string
	}{{http.StatusUnauthorized, "bad creds AUDITUSER:" + pass}, {http.StatusOK, `"creds were AUDITUSER:` + pass + `"`}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(answer.code)
			_, _ = io.WriteString(w, answer.body)
		}))
		u := strings.Replace(srv.URL, "http://", "http://AUDITUSER:"+pass+"@", 1)
		e, err := NewOllama(OllamaConfig{URL: u, Model: "m", Batching: Batching{Size: 1},
			HTTP: httpretry.NewHTTPClient(&httpretry.Transport{Policy: httpretry.Policy{Attempts: 1, Timeout: 5 * time.Second}})})
		require.NoError(t, err)
		_, err = e.EmbedQueries(context.Background(), []string{"q"})
		require.Error(t, err)
		assert.NotContains(t, err.Error(), pass)
		assert.Contains(t, err.Error(), "ollama embedder at http://***@")
		assert.NotContains(t, e.Fingerprint(), pass)
		srv.Close()
	}
	_, err := NewOllama(OllamaConfig{URL: "AUDITUSER:" + pass + "@h:1", Model: "m"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), pass)
}

// The openai embedder names its server without the URL's credentials (its user
// information) in the errors it words itself, a malformed
// answer and one whose indexes are not the texts', as the ollama embedder and
// the HTTP errors do: the library (gate.Live) hands them to its caller
// unredacted, and a Go test prints them.
func TestOpenAIErrorsKeepURLCredentialsOut(t *testing.T) {
	const pass = "AUDITPASS789"
	for _, body := range []string{`not json`, `{"data":[{"index":1,"embedding":[1]}]}`} {
		e, err := NewOpenAI(OpenAIConfig{URL: "http://AUDITUSER:" + pass + "@embed.test/v1", HTTP: jsontest.AnswerClient([]byte(body)),
			Policy: httpretry.Policy{Attempts: 1}})
		require.NoError(t, err)
		_, err = e.EmbedQueries(context.Background(), []string{"q"})
		require.Error(t, err, body)
		assert.NotContains(t, err.Error(), pass, body)
		assert.Contains(t, err.Error(), "embedding server http://***@embed.test/v1", body)
	}
}

// teiEmbeddings is TEI's OpenAI-compatible POST /v1/embeddings as its router
// serves it (Hugging Face text-embeddings-inference, "POST /v1/embeddings" in
// its OpenAPI document): the request {"input": a string or strings, "model",
// "encoding_format", "dimensions", "user"}; the answer {"object": "list",
// "data": [{"object": "embedding", "embedding": [...], "index": i}], "model",
// "usage"}, in input order; errors written as its OpenAI-compatible routes
// write them, {"message", "code", "type"}: 413 Validation "batch size N >
// maximum allowed batch size M" past --max-client-batch-size (maxBatch; 32 by
// default), 400 Empty for no input, 422 for a body it cannot read. Each vector
// is [len(text), 1]. sizes receives the inputs of each request.
func teiEmbeddings(maxBatch int, sizes chan<- int) http.HandlerFunc {
	fail := func(w http.ResponseWriter, status int, msg, typ string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"message": msg, "code": status, "type": typ})
	}
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fail(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error(), "Tokenizer")
			return
		}
		var inputs []string
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			inputs = []string{one}
		} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
			fail(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: input: "+err.Error(), "Tokenizer")
			return
		}
		if sizes != nil {
			sizes <- len(inputs)
		}
		if len(inputs) == 0 {
			fail(w, http.StatusBadRequest, "`inputs` cannot be empty", "Empty")
			return
		}
		if len(inputs) > maxBatch {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("batch size %d > maximum allowed batch size %d", len(inputs), maxBatch), "Validation")
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		data := make([]item, len(inputs))
		tokens := 0
		for i, s := range inputs {
			data[i] = item{"embedding", []float32{float32(len(s)), 1}, i}
			tokens += len(strings.Fields(s))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "BAAI/bge-small-en-v1.5",
			"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
	}
}

// The openai embedder works against TEI with its defaults: TEI's
// /v1/embeddings refuses a request of more inputs than --max-client-batch-size
// (32 by default) with 413 {"message": "batch size N > maximum allowed batch
// size 32", ...} (its router, openai_embed; the OpenAPI document's 413 "Batch
// size error"), and the embedder sent 64, so every run of more than 32 chunks
// against a stock TEI failed.
func TestOpenAIBatchesWithinTEIDefault(t *testing.T) {
	const teiMaxClientBatch = 32
	var most atomic.Int32
	tei := teiEmbeddings(teiMaxClientBatch, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		var req struct {
			Input []string `json:"input"`
		}
		assert.NoError(t, json.Unmarshal(b, &req))
		for n := int32(len(req.Input)); ; {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		tei(w, r)
	}))
	defer srv.Close()
	e, err := Lookup("openai")
	require.NoError(t, err)
	emb, err := e.New(Config{URL: srv.URL})
	require.NoError(t, err)
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	vecs, err := emb.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 100)
	assert.Equal(t, []float32{100, 1}, vecs[99])
	assert.Equal(t, int32(teiMaxClientBatch), most.Load())
}

// A TEI started with a --max-client-batch-size below the embedder's 32
// refuses every request of 32 texts with 413 "batch size 32 > maximum allowed
// batch size 8" (its router's openai_embed): the embedder takes the limit the
// server states, sends the same texts again that many a request, and keeps to
// it for the batches after, as the reranker does (one code, batchanswer). A
// 413 that states no lower limit ends the run as before.
func TestOpenAIFollowsTheServersBatchLimit(t *testing.T) {
	sizes := make(chan int, 64)
	srv := httptest.NewServer(teiEmbeddings(8, sizes))
	defer srv.Close()
	e, err := NewOpenAI(OpenAIConfig{URL: srv.URL, Batching: Batching{Concurrency: 1}, Policy: fastPolicy()})
	require.NoError(t, err)
	texts := make([]string, 40)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 40)
	for i, v := range vecs {
		assert.Equal(t, []float32{float32(i + 1), 1}, v, "text %d", i)
	}
	close(sizes)
	var got []int
	for n := range sizes {
		got = append(got, n)
	}
	assert.Equal(t, []int{32, 8, 8, 8, 8, 8}, got)

	tooLong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(`{"message":"Input validation error: ` + "`inputs`" + ` must have less than 512 tokens. Given: 600","code":413,"type":"Validation"}`))
	}))
	defer tooLong.Close()
	e, err = NewOpenAI(OpenAIConfig{URL: tooLong.URL, Policy: fastPolicy()})
	require.NoError(t, err)
	_, err = e.EmbedDocuments(context.Background(), texts[:3])
	require.ErrorContains(t, err, "HTTP 413")
}

// An answer's items are placed by their "index", and each fault is named: an
// item without one (it read as 0, so [{no index}, {index 1}] was taken for
// texts 0 and 1), a repeated one, one outside the texts sent, a text no item
// has, an item without its vector; a batch the server's limit split names the
// texts of the request (the indexes are the request's).
func TestOpenAINamesTheBadItem(t *testing.T) {
	tests := []struct {
		name   string
		n      int    // texts
		answer string // to the last request
		want   string
	}{
		{"index missing", 2, `{"data":[{"embedding":[1,1]},{"index":1,"embedding":[2,1]}]}`, `the 2 texts sent: item 0 has no "index"`},
		{"index null", 2, `{"data":[{"index":1,"embedding":[1,1]},{"index":null,"embedding":[2,1]}]}`, `the 2 texts sent: item 1 has no "index"`},
		{"index repeated", 2, `{"data":[{"index":1,"embedding":[1,1]},{"index":0,"embedding":[2,1]},{"index":1,"embedding":[3,1]}]}`, `the 2 texts sent: items 0 and 2 both have index 1`},
		{"index past the texts", 2, `{"data":[{"index":0,"embedding":[1,1]},{"index":2,"embedding":[2,1]}]}`, `the 2 texts sent: item 1 has index 2, outside 0..1`},
		{"index negative", 1, `{"data":[{"index":-1,"embedding":[1,1]}]}`, `the one text sent: item 0 has index -1, outside 0..0`},
		{"embedding missing", 2, `{"data":[{"index":1,"embedding":[1,1]},{"index":0}]}`, `the 2 texts sent: item 1 (index 0) has no "embedding"`},
		{"a text without an item", 3, `{"data":[{"index":2,"embedding":[1,1]},{"index":0,"embedding":[2,1]}]}`, `the 3 texts sent: no item has index 1 (2 items for 3 texts)`},
		{"a batch split by the server's limit", 12, `{"data":[{"index":0,"embedding":[1,1]},{"index":4,"embedding":[2,1]}]}`, `texts 8..11 of 12, sent as 0..3: item 1 has index 4, outside 0..3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reqs atomic.Int32
			tei := teiEmbeddings(8, nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// The split case: 12 refused, then 8 answered, then the last 4.
				if n := reqs.Add(1); tt.n > 8 && n < 3 {
					tei(w, r)
					return
				}
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			e, err := NewOpenAI(OpenAIConfig{URL: srv.URL, Batching: Batching{Size: tt.n, Concurrency: 1}, Policy: fastPolicy()})
			require.NoError(t, err)
			texts := make([]string, tt.n)
			for i := range texts {
				texts[i] = "t"
			}
			_, err = e.EmbedDocuments(context.Background(), texts)
			require.EqualError(t, err, "embedding server "+srv.URL+"/v1/embeddings: malformed response to "+tt.want)
		})
	}
}
