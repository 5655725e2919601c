package judge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// refBatchState reads a batch state file apart from ReadBatchState, through
// encoding/json's token stream: one object, no key twice (exactly or up to
// case) in it, its string fields strings or null, "requests" an integer or
// null, "creating" a boolean or null, "schema" the state file's schema and
// "batch_id" not empty unless "creating" is true (then it is empty).
func refBatchState(data []byte) (judge.BatchState, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var st judge.BatchState
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return st, false
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return st, false
		}
		key := k.(string)
		for _, p := range keys {
			if strings.EqualFold(p, key) {
				return st, false
			}
		}
		keys = append(keys, key)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return st, false
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&v) != nil || !uniqueKeys(raw) {
			return st, false
		}
		str := func(dst *string) bool {
			s, ok := v.(string)
			if ok {
				*dst = s
			}
			return ok || v == nil
		}
		ok := true
		name := key // the field encoding/json matches: its name up to case
		for _, n := range []string{"schema", "batch_id", "input_file_id", "model", "prompt_hash", "answer_format", "provider", "requests", "creating"} {
			if strings.EqualFold(n, key) {
				name = n
			}
		}
		switch name {
		case "schema":
			ok = str(&st.Schema)
		case "batch_id":
			ok = str(&st.BatchID)
		case "input_file_id":
			ok = str(&st.InputFileID)
		case "model":
			ok = str(&st.Model)
		case "prompt_hash":
			ok = str(&st.PromptHash)
		case "answer_format":
			ok = str(&st.Format)
		case "provider":
			ok = str(&st.Provider)
		case "creating":
			b, isBool := v.(bool)
			st.Creating = isBool && b
			ok = isBool || v == nil
		case "requests":
			if v != nil {
				n, isNum := v.(json.Number)
				var err error
				st.Requests, err = strconv.ParseInt(string(n), 10, 64)
				ok = isNum && err == nil
			}
		}
		if !ok {
			return st, false
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return st, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return st, false
	}
	return st, st.Schema == judge.BatchStateSchema && (st.BatchID != "") != st.Creating
}

// uniqueKeys reports that no object of the JSON value raw has a key twice,
// exactly or up to case.
func uniqueKeys(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack [][]string
	expectKey := []bool{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if s, isStr := tok.(string); isStr && len(stack) > 0 && expectKey[len(expectKey)-1] {
			top := stack[len(stack)-1]
			for _, p := range top {
				if strings.EqualFold(p, s) {
					return false
				}
			}
			stack[len(stack)-1] = append(top, s)
			expectKey[len(expectKey)-1] = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack, expectKey = append(stack, nil), append(expectKey, true)
			continue
		case json.Delim('['):
			stack, expectKey = append(stack, nil), append(expectKey, false)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack, expectKey = stack[:len(stack)-1], expectKey[:len(expectKey)-1]
		}
		if n := len(expectKey); n > 0 { // a value ended: in an object a key comes next
			expectKey[n-1] = true
		}
	}
}

// FuzzReadBatchState holds ReadBatchState (the state file of a submitted
// batch, which a rerun trusts to wait for that batch) to refBatchState: an
// accepted file is one that reader accepts, with the same fields; a refused
// one is refused as the project's "file:1: not a ... state file" error.
func FuzzReadBatchState(f *testing.F) {
	for _, s := range []string{
		`{"schema":"retrieval-gate/judge-batch@1","batch_id":"batch_1","input_file_id":"file-1","requests":3,"model":"m","prompt_hash":"h","answer_format":"json","provider":"openai"}`,
		`{"schema":"retrieval-gate/judge-batch@1","batch_id":""}`,
		`{"schema":"retrieval-gate/judge-batch@0","batch_id":"b"}`,
		`{"schema":"retrieval-gate/judge-batch@1","batch_id":"b","batch_id":"c"}`,
		`{"schema":"retrieval-gate/judge-batch@1","batch_id":"b","BATCH_ID":"c"}`,
		`{"schema":"retrieval-gate/judge-batch@1","batch_id":"b","requests":1.5}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "cache.jsonl.batch.json")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		st, err := judge.ReadBatchState(path)
		want, ok := refBatchState(data)
		if !ok {
			require.Error(t, err, "accepted %q", data)
			require.True(t, strings.HasPrefix(err.Error(), path+":1: not a "), "%v", err)
			return
		}
		require.NoError(t, err, "refused %q", data)
		require.Equal(t, want, *st)
	})
}

// A state file with "batch_id" and "BATCH_ID" names two batches: encoding/json
// read the last, jsonpos's check (exact keys) let it through. It is refused,
// as a state file with a key twice is.
func TestReadBatchStateRefusesFoldedKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.jsonl.batch.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"schema":"retrieval-gate/judge-batch@1","batch_id":"b","BATCH_ID":"c"}`), 0o600))
	_, err := judge.ReadBatchState(path)
	require.ErrorContains(t, err, path+":1: not a retrieval-gate/judge-batch@1 state file")
}
