package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// forgeGeminiKey is the Gemini API key of the runs against a hostile Gemini
// server: it echoes it, with forged commands, in what it answers.
const forgeGeminiKey = "gm-forge-secret-gemini-3c7d"

// forgeURLPassword is the password of the server's URL (--judge-url
// https://user:password@host), which every message names without it.
const forgeURLPassword = "pwUrlHidden5e6f91b0zq"

// A judge's server that echoes forged commands, its API key and the password
// of its URL (--judge-url http://user:password@host, as a proxy may) into what
// it answers: a repeated key of the Gemini batch's operation (read as a
// stream, llm.readGeminiOperation) and of a chat completion, whose malformed
// answer error quotes it outside the client's own words, a failed batch's
// error and the inline responses' errors (in the report). None of it forges a
// command, and neither the key nor the password reaches a stream, the job
// summary or a file; the password was shown where the error quoted the key.
func TestNoForgedCommandServerEcho(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":"b","text":"beta"}`+"\n")
	runF := write("run.jsonl", `{"id":"q1","query":"alpha","retrieved":["a","b"]}`+"\n")
	all := strings.Join(forgePayloads, " ")

	for _, mode := range []string{"repeated key", "failed", "inline errors", "chat"} {
		t.Run(mode, func(t *testing.T) {
			var keys atomic.Value // the request keys of the batch submitted
			keys.Store([]string(nil))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				key := r.Header.Get("X-Goog-Api-Key")
				// The password of the URL's user information (sent as basic
				// authentication, or to a proxy), echoed bare: first, as the key
				// of a repeated key is cut at 80 characters.
				echo := js(forgeURLPassword + " " + key + " " + all)
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
					// A chat completion whose answer repeats a key.
					fmt.Fprintf(w, `{"id":"x","object":"chat.completion",%s:1,%s:2}`, echo, echo)
				case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":batchGenerateContent"):
					var body struct {
						Batch struct {
							InputConfig struct {
								Requests struct {
									Requests []struct {
										Metadata struct{ Key string } `json:"metadata"`
									} `json:"requests"`
								} `json:"requests"`
							} `json:"input_config"`
						} `json:"batch"`
					}
					data, _ := io.ReadAll(r.Body)
					_ = json.Unmarshal(data, &body)
					var ks []string
					for _, rq := range body.Batch.InputConfig.Requests.Requests {
						ks = append(ks, rq.Metadata.Key)
					}
					keys.Store(ks)
					fmt.Fprintf(w, `{"name":"batches/b1","metadata":{"state":"BATCH_STATE_PENDING"}}`)
				case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/batches/b1"):
					switch mode {
					case "repeated key":
						fmt.Fprintf(w, `{"name":"batches/b1","metadata":{"state":%s,%s:1,%s:2}}`, echo, echo, echo)
					case "failed":
						fmt.Fprintf(w, `{"name":"batches/b1","done":true,"metadata":{"state":"BATCH_STATE_FAILED"},"error":{"code":3,"message":%s}}`, echo)
					default:
						var items []string
						for _, k := range keys.Load().([]string) {
							items = append(items, fmt.Sprintf(`{"metadata":{"key":%s},"error":{"code":13,"message":%s}}`, js(k), echo))
						}
						fmt.Fprintf(w, `{"name":"batches/b1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED","output":{"inlinedResponses":{"inlinedResponses":[%s]}}},"response":{"inlinedResponses":{"inlinedResponses":[%s]}}}`,
							strings.Join(items, ","), strings.Join(items, ","))
					}
				default:
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"error":{"code":400,"message":%s,"status":"INVALID_ARGUMENT"}}`, echo)
				}
			}))
			defer srv.Close()
			forgeSecrets["GEMINI_API_KEY"] = forgeGeminiKey
			forgeSecrets["URL_PASSWORD"] = forgeURLPassword // not in the environment: --judge-url's
			defer delete(forgeSecrets, "GEMINI_API_KEY")
			defer delete(forgeSecrets, "URL_PASSWORD")
			cache := filepath.Join(dir, strings.ReplaceAll(mode, " ", "-")+".cache.jsonl")
			report := filepath.Join(dir, strings.ReplaceAll(mode, " ", "-")+".json")
			// The inline responses' errors reach the report alone (no stream):
			// the report is read below.
			args := []string{"judge", "--kb", kbF, "--run", "r=" + runF, "--k", "2",
				"--judge-url", strings.Replace(srv.URL, "//", "//gm:"+forgeURLPassword+"@", 1), "--judge-model", "fake", "--cache", cache, "--qrels", filepath.Join(dir, "g.qrels"),
				"--json", report}
			if mode != "chat" {
				args = append(args, "--batch", "--batch-api", "gemini", "--batch-poll", "10ms")
			}
			forgeRunData(t, dir, -1, mode != "inline errors", args...)
			if mode == "inline errors" {
				data, err := os.ReadFile(report)
				require.NoError(t, err)
				require.Contains(t, string(data), "FORGED", "the responses' errors reached the report")
			}
		})
	}
}

// forgeResultsSig is the signature of a batch's results URL that a server
// gives (a pre-signed URL, ?sig=...): a credential of its own, which no
// variable holds.
const forgeResultsSig = "sigForgeResults9d8c7b6a5f"

// A batch's results file refused at a line is named by the batch's id and the
// results URL the server gave, in the error and as the file of its ::error
// annotation and of the job summary's entry: the URL's credential (a signed
// query, ?sig=...) was redacted from the message but shown as the file, in
// the annotation and the job summary. A forged command in the URL's query
// reaches none of them either.
func TestNoForgedCommandResultsURL(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":"b","text":"beta"}`+"\n")
	runF := write("run.jsonl", `{"id":"q1","query":"alpha","retrieved":["a","b"]}`+"\n")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		id := "msgbatch_1"
		batch := func(status, results string) {
			fmt.Fprintf(w, `{"id":%s,"type":"message_batch","processing_status":%s,"request_counts":{"processing":0,"succeeded":1,"errored":0,"canceled":0,"expired":0},"results_url":%s}`,
				js(id), js(status), results)
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/batches":
			batch("in_progress", "null")
		case r.Method == http.MethodGet && r.URL.Path == "/v1/messages/batches/"+id:
			batch("ended", js(srv.URL+"/v1/messages/batches/"+id+"/results?sig="+forgeResultsSig+"&x="+url.QueryEscape(forgePayloads[1])))
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/results"):
			fmt.Fprintln(w, `{"custom_id": 7}`) // refused at its line
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	forgeSecrets["RESULTS_SIG"] = forgeResultsSig // not in the environment: the server's
	defer delete(forgeSecrets, "RESULTS_SIG")
	forgeRunData(t, dir, -1, false, "judge", "--kb", kbF, "--run", "r="+runF, "--k", "2", "--batch", "--batch-api", "anthropic", "--batch-poll", "10ms",
		"--judge-url", srv.URL, "--judge-model", "fake", "--cache", filepath.Join(dir, "a.cache.jsonl"), "--qrels", filepath.Join(dir, "a.qrels"))
}
