package reranktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stand-in answers as TEI does (docs/openapi.json, "POST /rerank", and its
// router: core/src/tokenization.rs refuses a pair over the max input length
// unless truncate, router/src/lib.rs maps a validation error to 413 and writes
// {"error", "error_type"}): the tests of the client rely on it refusing what
// TEI refuses.
func TestHandlerFollowsTEI(t *testing.T) {
	// The score is what the model saw: the text's length in runes, plus 1000
	// when it still holds its last word ("END").
	score := func(_, text string) float64 {
		s := float64(utf8.RuneCountInString(text))
		if strings.HasSuffix(text, "END") {
			s += 1000
		}
		return s
	}
	srv := httptest.NewServer(Handler(32, score))
	defer srv.Close()
	han := func(n int) string { return strings.Repeat("密", n) }
	long := `"` + han(600) + ` END"` // with the query "q": 1 + 600 + 1 (END) + 3 special = 605 tokens
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"short, no truncate", `{"query":"q","texts":["a b","c"]}`, 200, `[{"index":0,"score":3},{"index":1,"score":1}]`},
		{"over-long, truncate absent", `{"query":"q","texts":["a",` + long + `]}`, 413,
			`{"error":"Input validation error: ` + "`inputs`" + ` must have less than 512 tokens. Given: 605","error_type":"Validation"}`},
		{"over-long, truncate false", `{"query":"q","texts":[` + long + `],"truncate":false}`, 413,
			`{"error":"Input validation error: ` + "`inputs`" + ` must have less than 512 tokens. Given: 605","error_type":"Validation"}`},
		// 512 - 3 special tokens - 1 for the query: the text's first 508 characters.
		{"over-long, truncate true", `{"query":"q","texts":[` + long + `],"truncate":true}`, 200, `[{"index":0,"score":508}]`},
		{"over-long, truncate right", `{"query":"q","texts":[` + long + `],"truncate":true,"truncation_direction":"Right"}`, 200, `[{"index":0,"score":508}]`},
		// Left keeps the last 508 tokens: 507 characters, a space and END (+1000).
		{"over-long, truncate left", `{"query":"q","texts":[` + long + `],"truncate":true,"truncation_direction":"Left"}`, 200, `[{"index":0,"score":1511}]`},
		{"exactly the max input", `{"query":"q","texts":["` + han(508) + `"]}`, 200, `[{"index":0,"score":508}]`},
		{"one token over", `{"query":"q","texts":["` + han(509) + `"]}`, 413,
			`{"error":"Input validation error: ` + "`inputs`" + ` must have less than 512 tokens. Given: 513","error_type":"Validation"}`},
		{"return_text", `{"query":"q","texts":["ab"],"return_text":true}`, 200, `[{"index":0,"text":"ab","score":2}]`},
		{"batch too large", `{"query":"q","texts":[` + strings.Repeat(`"a",`, 32) + `"a"]}`, 413,
			`{"error":"batch size 33 > maximum allowed batch size 32","error_type":"Validation"}`},
		{"no texts", `{"query":"q","texts":[]}`, 400, `{"error":"` + "`texts`" + ` cannot be empty","error_type":"Empty"}`},
		{"unknown direction", `{"query":"q","texts":["a"],"truncation_direction":"right"}`, 422, ""},
		{"malformed", `{"query":`, 422, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/rerank", "application/json", strings.NewReader(tt.body))
			require.NoError(t, err)
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStatus, resp.StatusCode, string(data))
			if tt.wantBody != "" {
				assert.JSONEq(t, tt.wantBody, string(data))
			}
		})
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"reset password", []string{"reset", "password"}},
		{"don't!", []string{"don", "'", "t", "!"}},
		{"密码 reset2", []string{"密", "码", "reset2"}},
		{"パスワードを", []string{"パ", "ス", "ワ", "ー", "ド", "を"}},
		{"a\xffb", []string{"a", "\xff", "b"}},
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range Tokens(tt.in) {
			got = append(got, tt.in[sp[0]:sp[1]])
		}
		assert.Equal(t, tt.want, got, tt.in)
	}
}
