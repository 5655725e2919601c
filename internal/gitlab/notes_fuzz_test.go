package gitlab

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/stretchr/testify/require"
)

// answerClient is a Client whose every request is answered 200 with body (no
// X-Next-Page: one page), without a socket.
func answerClient(body []byte) *Client {
	hc := jsontest.AnswerClient(body)
	u, _ := url.Parse("https://gitlab.test/api/v4")
	return &Client{http: hc, api: u, project: "7"}
}

// refNote reads one note of GitLab's Notes API apart from the client: an
// object whose "id" is a positive integer (GitLab's ids are), "body" and
// author's "username" strings, "system" a boolean, author's "id" an integer,
// "created_at" an RFC 3339 time; null or absent is the zero value.
func refNote(x any) (Note, bool) {
	obj, isObj := x.(map[string]any)
	if !isObj {
		return Note{}, false
	}
	var n Note
	integer := func(v any) (int64, bool) {
		if v == nil {
			return 0, true
		}
		num, isNum := v.(json.Number)
		if !isNum {
			return 0, false
		}
		i, err := strconv.ParseInt(string(num), 10, 64)
		return i, err == nil
	}
	str := func(v any) (string, bool) {
		if v == nil {
			return "", true
		}
		s, isStr := v.(string)
		return s, isStr
	}
	var ok bool
	if n.ID, ok = integer(jsontest.Field(obj, "id")); !ok || n.ID <= 0 {
		return Note{}, false
	}
	if n.Body, ok = str(jsontest.Field(obj, "body")); !ok {
		return Note{}, false
	}
	if s := jsontest.Field(obj, "system"); s != nil {
		if n.System, ok = s.(bool); !ok {
			return Note{}, false
		}
	}
	if a := jsontest.Field(obj, "author"); a != nil {
		author, isObj := a.(map[string]any)
		if !isObj {
			return Note{}, false
		}
		if n.AuthorID, ok = integer(jsontest.Field(author, "id")); !ok {
			return Note{}, false
		}
		if n.Author, ok = str(jsontest.Field(author, "username")); !ok {
			return Note{}, false
		}
	}
	if c := jsontest.Field(obj, "created_at"); c != nil {
		s, isStr := c.(string)
		if !isStr {
			return Note{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return Note{}, false
		}
		n.CreatedAt = t
	}
	return n, true
}

// FuzzNotesAnswer holds ListNotes and CreateNote to a reader of GitLab's
// Notes API answer written apart from the client (refNote): an accepted page
// or note is one that reader accepts, with the same fields; one it refuses (not
// a list of notes, a note without a positive id, a field of another type, two
// keys that differ only in case) is refused. The upsert of the sticky comment
// edits and deletes notes by these ids.
func FuzzNotesAnswer(f *testing.F) {
	for _, s := range []string{
		`[{"id":302,"body":"<!-- retrieval-gate -->\nok","system":false,"author":{"id":9,"username":"bot","name":"Bot"},"created_at":"2026-01-02T03:04:05.678Z","noteable_iid":1}]`, //nolint:misspell // GitLab's field name (Notes API)
		`[]`,
		`[{"id":1,"body":"a","author":null,"created_at":null}]`,
		`[{"body":"no id"}]`,
		`[{"id":0,"body":"zero id"}]`,
		`[{"id":-3}]`,
		`[{"id":"4"}]`,
		`[{"id":5,"system":"true"}]`,
		`[{"id":6,"created_at":"yesterday"}]`,
		`[{"id":7,"body":"mine","Body":"theirs"}]`,
		`[{"id":8,"author":{"username":"bot","USERNAME":"other"}}]`,
		`{"id":9,"body":"one note"}`,
		`[null]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c := answerClient(body)
		v, ok := jsontest.Strict(body)

		// ListNotes reads a list of notes.
		var want []Note
		items, isArr := v.([]any)
		ok = ok && (isArr || v == nil) && len(items) <= PerPage // GitLab's largest page
		for _, it := range items {
			n, good := refNote(it)
			ok = ok && good
			want = append(want, n)
		}
		got, err := c.ListNotes(context.Background(), 1, nil)
		if !ok {
			require.Error(t, err, "accepted a page a strict reader refuses: %q", body)
		} else {
			require.NoError(t, err, "refused a page a strict reader accepts: %q", body)
			require.Len(t, got, len(want))
			for i := range want {
				require.True(t, want[i].CreatedAt.Equal(got[i].CreatedAt))
				want[i].CreatedAt, got[i].CreatedAt = time.Time{}, time.Time{}
			}
			require.Equal(t, want, got)
		}

		// CreateNote reads one note.
		one, ok1 := jsontest.Strict(body)
		wantOne, good := refNote(one)
		note, err := c.CreateNote(context.Background(), 1, "x")
		if !ok1 || !good {
			require.Error(t, err, "accepted a note a strict reader refuses: %q", body)
			return
		}
		require.NoError(t, err, "refused a note a strict reader accepts: %q", body)
		require.True(t, wantOne.CreatedAt.Equal(note.CreatedAt))
		wantOne.CreatedAt, note.CreatedAt = time.Time{}, time.Time{}
		require.Equal(t, wantOne, note)
	})
}

// A page of notes with a note without a positive id, a null note, or two keys
// that differ only in case is not GitLab's answer: it is refused, where the
// upsert would edit or delete note 0, or read the last of the two keys.
func TestNotesAnswerRefused(t *testing.T) {
	for _, body := range []string{
		`[{"body":"<!-- retrieval-gate -->","author":{"username":"bot"}}]`,
		`[{"id":0,"body":"x"}]`,
		`[null]`,
		`[{"id":7,"body":"mine","Body":"theirs"}]`,
		`[{"id":8,"author":{"username":"bot","USERNAME":"other"}}]`,
	} {
		_, err := answerClient([]byte(body)).ListNotes(context.Background(), 1, nil)
		require.ErrorContains(t, err, "the answer is not a list of notes", body)
	}
	for _, body := range []string{`{"body":"x"}`, `{"id":7,"body":"mine","BODY":"theirs"}`} {
		_, err := answerClient([]byte(body)).CreateNote(context.Background(), 1, "x")
		require.ErrorContains(t, err, "the answer is not a note", body)
	}
	notes, err := answerClient([]byte(`[{"id":7,"body":"mine","author":{"id":2,"username":"bot"}}]`)).ListNotes(context.Background(), 1, nil)
	require.NoError(t, err)
	require.Equal(t, []Note{{ID: 7, Body: "mine", Author: "bot", AuthorID: 2}}, notes)
}
