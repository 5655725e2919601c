package httpretry

import (
	"testing"
	"time"
)

// FuzzRetryAfter: any header value gives a non-negative wait or none, and a reason.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "7", "-1", "Mon, 30 Nov 2026 06:00:09 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, why, ok := retryAfter(v, now)
		if d < 0 || (!ok && d != 0) || (ok && why == "") {
			t.Fatalf("%q: %v %v %q", v, d, ok, why)
		}
		w, reset, why := rateLimitReset(v, now)
		if w < 0 || w > maxPlausibleWait+time.Second || why == "" || (!reset.IsZero() && reset.Year() > now.Year()+1) {
			t.Fatalf("reset %q: %v %v %q", v, w, reset, why)
		}
	})
}
