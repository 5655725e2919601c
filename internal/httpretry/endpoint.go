package httpretry

import (
	"fmt"
	"strings"
)

// EndpointURL completes a user-given server URL, as every model-server client
// takes it (the embedders, the reranker, the LLM clients): kept when it already
// ends with suffix, suffix appended when it ends with prefix, else
// prefix+suffix appended.
func EndpointURL(raw, prefix, suffix string) (string, error) {
	u := strings.TrimRight(strings.TrimSpace(raw), "/")
	if u == "" {
		return "", fmt.Errorf("no server URL given")
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return "", fmt.Errorf("server URL %q must start with http:// or https://", RedactURL(raw))
	}
	switch {
	case strings.HasSuffix(u, suffix):
		return u, nil
	case prefix != "" && strings.HasSuffix(u, prefix):
		return u + suffix, nil
	default:
		return u + prefix + suffix, nil
	}
}
