package httpretry

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzRetryAfter: any header value gives a non-negative wait or none, and a
// reason; and the wait is the one the header names. A Retry-After of decimal
// seconds waits exactly that long when it is plausible (at most
// maxPlausibleWait), and more than maxPlausibleWait otherwise; an HTTP date
// waits until it (none when it is past); the reason says "not a plausible"
// exactly when the wait is over maxPlausibleWait (the caller then does not
// retry). An X-RateLimit-Reset of Unix seconds waits until it and a second,
// a second when it is past, none when it is implausibly far. Either header is
// read as seconds only when it is all digits (RFC 9110's 1*DIGIT: "+5" and
// "-5" are neither seconds nor a date, so no wait at all).
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "7", "-1", "Mon, 30 Nov 2026 06:00:09 GMT", "99999999999999999999", "604800", "604801",
		"Mon, 07 Dec 2026 06:00:00 GMT", "Mon, 07 Dec 2026 06:00:01 GMT", "Sun, 29 Nov 2026 06:00:00 GMT", " 12 ", "1796018400", "1796018420", "1796623200", "1796623201", "1796018400000", "+5", "-5", "+1796018420", " +0"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, why, ok := retryAfter(v, now)
		if d < 0 || (!ok && d != 0) || (ok && why == "") {
			t.Fatalf("%q: %v %v %q", v, d, ok, why)
		}
		tv := strings.TrimSpace(v)
		digits := tv != "" && strings.Trim(tv, "0123456789") == ""
		if ok && (d > maxPlausibleWait) != strings.Contains(why, "not a plausible") {
			t.Fatalf("%q: wait %v, reason %q", v, d, why)
		}
		if digits {
			n, err := strconv.ParseUint(tv, 10, 64)
			switch {
			case !ok:
				t.Fatalf("%q: decimal seconds not read", v)
			case err == nil && n <= uint64(maxPlausibleWait/time.Second):
				if d != time.Duration(n)*time.Second {
					t.Fatalf("%q: wait %v", v, d)
				}
			case d <= maxPlausibleWait:
				t.Fatalf("%q: an implausible wait read as %v", v, d)
			}
		} else if at, err := http.ParseTime(tv); err == nil && ok {
			if want := max(at.Sub(now), 0); d != want {
				t.Fatalf("%q: wait %v, want %v", v, d, want)
			}
		} else if ok {
			t.Fatalf("%q: neither seconds nor a date, read as a wait of %v", v, d)
		}

		w, reset, why := rateLimitReset(v, now)
		if w < 0 || w > maxPlausibleWait+time.Second || why == "" || (!reset.IsZero() && reset.Year() > now.Year()+1) {
			t.Fatalf("reset %q: %v %v %q", v, w, reset, why)
		}
		if !digits && w != 0 {
			t.Fatalf("reset %q: not Unix seconds, read as a wait of %v", v, w)
		}
		if n, err := strconv.ParseInt(tv, 10, 64); digits && err == nil {
			var want time.Duration
			switch {
			case n <= now.Unix():
				want = time.Second
			case n-now.Unix() <= int64(maxPlausibleWait/time.Second):
				want = time.Unix(n, 0).Sub(now) + time.Second
				if reset.Unix() != n {
					t.Fatalf("reset %q: at %v", v, reset)
				}
			}
			if w != want {
				t.Fatalf("reset %q: wait %v, want %v", v, w, want)
			}
		}
	})
}
