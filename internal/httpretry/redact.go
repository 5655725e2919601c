package httpretry

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Redacted replaces a secret in messages.
const Redacted = "***"

// Redact removes every secret from msg: as given, URL-encoded and JSON-escaped
// (a server echoing the key in a JSON error body or a URL). Secrets shorter than 4
// bytes are ignored (they would blank ordinary words).
func Redact(msg string, secrets ...string) string {
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < 4 {
			continue
		}
		forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
		if b, err := json.Marshal(s); err == nil {
			forms = append(forms, strings.Trim(string(b), `"`))
		}
		for _, f := range forms {
			if f != "" {
				msg = strings.ReplaceAll(msg, f, Redacted)
			}
		}
	}
	return msg
}

// redactedError is an error whose message has the secrets removed; errors.Is and
// errors.As still see the cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with the secrets removed from its message (err itself
// when none occurs in it).
func redactErr(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := Redact(msg, secrets...); r != msg {
		return &redactedError{msg: r, err: err}
	}
	return err
}
