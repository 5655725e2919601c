package httpretry

import (
	"context"
	"encoding/base64"
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
	} {
		assert.Equal(t, want, RedactURLsIn(in), in)
	}
}
