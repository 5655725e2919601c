package httpretry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertNoSecret fails when text holds secret, or any 8 of its consecutive
// characters (all of it when shorter), in any letter case, once the text's
// JSON escapes, percent-encoding, HTML references or base64 runs are decoded.
// It decodes by its own means (html, base64, strconv), apart from Redact.
func assertNoSecret(t *testing.T, text, secret string) {
	t.Helper()
	forms := []string{text, html.UnescapeString(text), percentDecode(text), jsonDecode(text), jsonDecode(jsonDecode(text)), percentDecode(percentDecode(text))}
	for _, run := range regexp.MustCompile(`[A-Za-z0-9+/_=-]{12,}`).FindAllString(text, -1) {
		run = strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(run), "=")
		for off := range 4 {
			if off >= len(run) {
				break
			}
			r := run[off:]
			r = r[:len(r)/4*4]
			if b, err := base64.StdEncoding.DecodeString(r); err == nil {
				forms = append(forms, string(b))
			}
		}
	}
	n := min(len(secret), 8)
	for _, f := range forms {
		f = strings.ToLower(f)
		for j := 0; j+n <= len(secret); j++ {
			if frag := strings.ToLower(secret[j : j+n]); strings.Contains(f, frag) {
				t.Errorf("%q of the secret in %q (decoded %q)", secret[j:j+n], text, f)
				return
			}
		}
	}
}

func percentDecode(s string) string {
	return regexp.MustCompile(`%[0-9A-Fa-f]{2}`).ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[1:], 16, 8)
		return string(rune(v))
	})
}

func jsonDecode(s string) string {
	s = regexp.MustCompile(`\\+u[0-9A-Fa-f]{4}`).ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[len(m)-4:], 16, 16)
		return string(rune(v))
	})
	return regexp.MustCompile(`\\+([/"\\])`).ReplaceAllString(s, "$1")
}

// everyChar writes each byte of s with f.
func everyChar(s string, f func(byte) string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteString(f(s[i]))
	}
	return b.String()
}

// A model server (a stand-in) that echoes the key back, in every form a
// server may give it, in an error body: none of it reaches the error's
// message, nor 8 characters of it in a row.
func TestPostRedactsEchoedKeyInEveryForm(t *testing.T) {
	const key = "rg-Q7f/9xZk+2LmN0pW4vBtCq8"
	u := func(c byte) string { return fmt.Sprintf(`\u%04x`, c) }
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + key))
	forms := map[string]string{
		"verbatim":             `{"error":"invalid key ` + key + `"}`,
		"upper case":           `{"error":"INVALID KEY ` + strings.ToUpper(key) + `"}`,
		"json escapes":         `{"error":"invalid key ` + everyChar(key, func(c byte) string { return u(c) }) + `"}`,
		"json escapes, upper":  `{"error":"` + strings.ToUpper(everyChar(key, func(c byte) string { return u(c) })) + `"}`,
		"escaped slash":        `{"error":"` + strings.ReplaceAll(key, "/", `\/`) + `"}`,
		"some escaped":         `{"error":"` + key[:5] + u(key[5]) + key[6:12] + `\/` + key[13:] + `"}`,
		"json in json":         `{"error":"{\"detail\":\"` + everyChar(key, func(c byte) string { return `\` + u(c) }) + `\"}"}`,
		"nested arrays":        `{"error":{"errors":[{"field":"key","value":["` + everyChar(key, func(c byte) string { return u(c) }) + `"]}]}}`,
		"percent-encoded":      `invalid key ` + everyChar(key, func(c byte) string { return fmt.Sprintf("%%%02X", c) }),
		"percent, lower hex":   `invalid key ` + everyChar(key, func(c byte) string { return fmt.Sprintf("%%%02x", c) }),
		"percent, twice":       `invalid key ` + everyChar(key, func(c byte) string { return fmt.Sprintf("%%25%02X", c) }),
		"query-escaped":        `https://example.invalid/cb?key=` + strings.ReplaceAll(strings.ReplaceAll(key, "/", "%2F"), "+", "%2B"),
		"html page":            `<html><body><p>Key ` + everyChar(key, func(c byte) string { return fmt.Sprintf("&#x%x;", c) }) + ` refused</p></body></html>`,
		"html decimal":         `<p>` + everyChar(key, func(c byte) string { return "&#" + strconv.Itoa(int(c)) + ";" }) + `</p>`,
		"basic credentials":    `{"error":"bad credentials Basic ` + basic + `"}`,
		"basic, url alphabet":  `{"error":"` + base64.URLEncoding.EncodeToString([]byte("u:"+key)) + `"}`,
		"authorization header": `{"error":"header was bearer ` + key + `"}`,
		"start and end":        `{"error":"key ` + key[:10] + `...` + key[len(key)-10:] + ` refused"}`,
		"cut at the snippet":   strings.Repeat("x", 290) + key,
	}
	for name, body := range forms {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			c := &Client{Policy: Policy{Attempts: 1}, Header: http.Header{"Authorization": {"Bearer " + key}}}
			_, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
			require.Error(t, err)
			assertNoSecret(t, err.Error(), key)
			assert.Contains(t, err.Error(), "answered HTTP 400")
		})
	}
}

// A server URL with credentials in it (user information, which Go's client
// sends as Basic credentials; a key as a query parameter, which Gemini's API
// takes besides the x-goog-api-key header): no error of any kind prints them,
// a status error, a redirect's unreachable target, a refused connection.
func TestPostRedactsCredentialsOfTheURL(t *testing.T) {
	const pw, qkey, ukey = "pw-U8c2Hx0Lq4Ns9Vd", "AIzaQp3Rk7Ws1Xy5Zb", "tok-Mj6Gf2Pe9Ta4"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			w.Header().Set("Location", "http://127.0.0.1:1/next?"+r.URL.RawQuery)
			w.WriteHeader(http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprintf(w, `{"error":"%s %s %s"}`, r.Header.Get("Authorization"), r.URL.RawQuery, r.URL.String())
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	noSleep := func(context.Context, time.Duration) error { return nil }
	for _, raw := range []string{
		"http://user:" + pw + "@" + host + "/v1?key=" + qkey,
		"http://" + ukey + "@" + host + "/v1",
		"http://user:" + pw + "@" + host + "/redirect?key=" + qkey,
		"http://user:" + pw + "@127.0.0.1:1/v1?key=" + qkey,
		"http://" + ukey + "@127.0.0.1:1/v1",
	} {
		c := &Client{Policy: Policy{Attempts: 2}, Sleep: noSleep}
		_, err := c.Post(context.Background(), raw, []byte(`{}`))
		require.Error(t, err, raw)
		for _, s := range []string{pw, qkey, ukey} {
			assertNoSecret(t, err.Error(), s)
		}
	}
}

// Redact keeps ordinary text: what is not the secret, and pieces of it
// shorter than 8 characters.
func TestRedactKeepsOtherText(t *testing.T) {
	const key = "sk-proj-Zq81Lx0Vn4Rt6Yp"
	for _, s := range []string{
		"invalid request: the model gpt-4o does not exist",
		`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
		"key sk-proj is malformed; see %2F and \\u0041 and &amp;",
	} {
		assert.Equal(t, s, Redact(s, key))
	}
	assert.Equal(t, "key *** refused", Redact("key "+key+" refused", key))
	assert.Equal(t, "key *** (cut)", Redact("key sk-proj-Zq81 (cut)", key), "a cut piece of 8 characters or more")
	assert.Equal(t, "a *** b", Redact("a abcd b", "abcd"), "a short secret whole")
	assert.Equal(t, "a abc b", Redact("a abc b", "abcd"))
}

// RedactURLsIn hides the credentials of every URL a message names and leaves
// the rest of the message, and a URL without credentials, as they were.
func TestRedactURLsIn(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:pw-Secret1@h:8000/v1/chat: no choices":       "http://***@h:8000/v1/chat: no choices",
		`POST "https://h/v1beta/x?key=AIzaK3y&alt=sse" failed`: `POST "https://h/v1beta/x?key=***&alt=sse" failed`,
		"https://tok-abcdefgh@gitlab.example/api/v4 refused":   "https://***@gitlab.example/api/v4 refused",
		"http://127.0.0.1:1/v1?page=2 and http://h/x":          "http://127.0.0.1:1/v1?page=2 and http://h/x",
		"no URL at all: a://":                                  "no URL at all: a://",
		// A resumable upload's session URI is its credential.
		"https://h/upload/v1beta/files?upload_id=AbCdEfGh12345678&upload_protocol=resumable: HTTP 500": "https://h/upload/v1beta/files?upload_id=***&upload_protocol=resumable: HTTP 500",
	} {
		assert.Equal(t, want, RedactURLsIn(in), in)
	}
}

// FuzzRedact: a secret written into a message with each of its characters in
// one of the forms a server may use (chosen by forms, one byte a character:
// as is, upper case, \uXXXX, \/, %XX, %25XX, &#xHH;, &#NN;), between any two
// texts, leaves no 8 of its characters in a row once the message is decoded
// (assertNoSecret decodes apart from Redact); and a message without the
// secret's characters is left as it was.
func FuzzRedact(f *testing.F) {
	f.Add("sk-proj-Q7f/9xZk+2LmN0pW", "error: ", " refused", []byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add("glpat-SECRETtoken0123", `{"message":{"token":["`, `"]}}`, []byte{2, 2, 2, 2})
	f.Add("AIzaSyK4q-Tn8Wm2Rc6Xv0Lb3Hd7", "<p>", "</p>", []byte{6, 7})
	f.Fuzz(func(t *testing.T, secret, before, after string, forms []byte) {
		secret = strings.TrimSpace(secret)
		// A secret holding "*" could be spelt again by the *** that replaces
		// a piece of it and its neighbours; no key, token or password of the
		// services here holds one.
		if len(secret) < 8 || len(secret) > 64 || !isPrintableASCII(secret) || strings.Contains(secret, "*") || len(before)+len(after) > 256 {
			return
		}
		var b strings.Builder
		for i := range len(secret) {
			c, form := secret[i], byte(0)
			if len(forms) > 0 {
				form = forms[i%len(forms)] % 8
			}
			switch form {
			case 1:
				b.WriteString(strings.ToUpper(string(c)))
			case 2:
				fmt.Fprintf(&b, `\u%04x`, c)
			case 3:
				if c == '/' {
					b.WriteString(`\/`)
				} else {
					b.WriteByte(c)
				}
			case 4:
				fmt.Fprintf(&b, "%%%02X", c)
			case 5:
				fmt.Fprintf(&b, "%%25%02x", c)
			case 6:
				fmt.Fprintf(&b, "&#x%x;", c)
			case 7:
				fmt.Fprintf(&b, "&#%d;", c)
			default:
				b.WriteByte(c)
			}
		}
		msg := before + b.String() + after
		assertNoSecret(t, Redact(msg, secret), secret)
		plain := strings.Map(func(r rune) rune {
			if strings.ContainsRune(strings.ToLower(secret)+strings.ToUpper(secret)+`%\&+`, r) {
				return -1
			}
			return r
		}, before+after)
		if got := Redact(plain, secret); got != plain {
			t.Fatalf("Redact changed %q into %q", plain, got)
		}
	})
}

func isPrintableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// A character with two readings (a backslash: itself, or the first of an
// escaped one; "%25": itself, or "%") is walked once a place: a secret of
// backslashes against a run of them doubled the readings with each one, so
// that Redact did not return.
func TestRedactAmbiguousRunsBounded(t *testing.T) {
	done := make(chan string, 1)
	go func() {
		done <- Redact("x"+strings.Repeat(`\`, 300)+"y", "k"+strings.Repeat(`\`, 40)) +
			Redact(strings.Repeat("%25", 200), strings.Repeat("%", 40)+"k")
	}()
	select {
	case got := <-done:
		assert.Contains(t, got, "x")
	case <-time.After(10 * time.Second):
		t.Fatal("Redact did not return within 10 s")
	}
}

// A server answering 429 with the key in X-RateLimit-Reset (a header value
// the server chose): the reason of the *RateLimitError, which the clients
// read with errors.As past the redaction of the error around it (GitLab's,
// GitHub's and the history branch's messages quote it), holds none of it.
func TestRateLimitReasonQuotesNoHeaderText(t *testing.T) {
	const key = "glpat-Hd4Jw8Mx2Pz6"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "token "+r.Header.Get("Private-Token"))
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	hc := NewHTTPClient(&Transport{Policy: Policy{Attempts: 1}, Origin: Origin(srv.URL), Credentials: http.Header{"Private-Token": {key}}, Secrets: []string{key}})
	resp, err := hc.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	var rl *RateLimitError
	require.ErrorAs(t, err, &rl)
	assert.Contains(t, rl.Why, "X-RateLimit-Reset (24 bytes, not a number) is not a time")
	assertNoSecret(t, rl.Why, key)
	assertNoSecret(t, err.Error(), key)
}

// A URL url.Parse refuses (a bad port, a bad escape, a missing bracket, no
// scheme) still has its credentials found and redacted: Go's own parse error
// quotes the URL, and so did the messages that name a server as given.
func TestURLSecretsOfUnparseableURLs(t *testing.T) {
	for _, raw := range []string{
		"http://AUDITUSER:AUDITPASS789@127.0.0.1:badport/v1",
		"http://AUDITUSER:AUDITPASS789@127.0.0.1:1/%zz",
		"http://AUDITUSER:AUDITPASS789@[::1/v1",
		"AUDITUSER:AUDITPASS789@host:9401",
		"http://AUDITUSER:AUDITPASS789@127.0.0.1:42415:x",
	} {
		s := URLSecrets(raw)
		assert.Contains(t, s, "AUDITPASS789", raw)
		r := RedactURL(raw)
		assert.NotContains(t, r, "AUDITPASS789", raw)
		msg := `parse "` + raw + `/chat/completions": invalid port`
		assert.NotContains(t, RedactText(msg, s...), "AUDITPASS789", raw)
		assert.NotContains(t, RedactErr(errors.New(msg), s...).Error(), "AUDITPASS789", raw)
	}
	// Percent-encoded in the URL, and a key parameter of an unparseable one.
	assert.Contains(t, URLSecrets("http://u:p%41ss@h:x/"), "pAss")
	assert.Contains(t, URLSecrets("http://h:x/v1?key=AIzaK3yValue&alt=sse"), "AIzaK3yValue")
	// A URL without credentials has none.
	assert.Empty(t, URLSecrets("http://127.0.0.1:badport/v1"))
}

// Query parameters that name a password or a credential in other words are
// credentials too.
func TestCredentialParamsByOtherNames(t *testing.T) {
	for _, name := range []string{"pass", "passwd", "pwd", "user_password", "credential", "Credentials"} {
		raw := "https://h/v1?" + name + "=AUDITPASS789&page=2"
		assert.Contains(t, URLSecrets(raw), "AUDITPASS789", name)
		assert.Equal(t, "https://h/v1?"+name+"=***&page=2", RedactURL(raw), name)
	}
	assert.Empty(t, URLSecrets("https://h/v1?page=2&q=x"))
}
