package llmtest

import (
	"net/http"
	"strings"
)

// providerState is the stand-ins' state beside the OpenAI Batch API's: the
// Anthropic message batches and the Gemini batches, files and uploads.
type providerState struct {
	anth         map[string]*anthBatch
	gem          map[string]*gemBatch
	gemFiles     map[string][]byte
	gemPending   map[string]string
	gemUploadSeq int
	gemUploads   int
}

// prov is the providers' state (s.mu held).
func (s *Server) prov() *providerState {
	if s.providers == nil {
		s.providers = &providerState{anth: map[string]*anthBatch{}, gem: map[string]*gemBatch{},
			gemFiles: map[string][]byte{}, gemPending: map[string]string{}}
	}
	return s.providers
}

// serveProvider serves the Anthropic and Gemini batch stand-ins (anthropic.go,
// gemini.go) and reports whether r was theirs.
func (s *Server) serveProvider(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	switch {
	case p == "/v1/messages/batches" || strings.HasPrefix(p, "/v1/messages/batches/"):
		s.serveAnthropic(w, r)
	case strings.HasPrefix(p, "/v1beta/") || strings.HasPrefix(p, "/upload/v1beta/") || strings.HasPrefix(p, "/download/v1beta/"):
		s.serveGemini(w, r)
	default:
		return false
	}
	return true
}
