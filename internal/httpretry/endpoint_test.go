package httpretry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEndpointURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"http://h:8080", "http://h:8080/v1/embeddings", ""},
		{"http://h:8080/", "http://h:8080/v1/embeddings", ""},
		{"https://api.openai.com/v1", "https://api.openai.com/v1/embeddings", ""},
		{"http://h/v1/embeddings", "http://h/v1/embeddings", ""},
		{"", "", "no server URL"},
		{"h:8080", "", "must start with http"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := EndpointURL(tt.in, "/v1", "/embeddings")
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
