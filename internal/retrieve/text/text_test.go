package text

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"punctuation splits", "Reset your password, then sign-in!", []string{"reset", "your", "password", "then", "sign", "in"}},
		{"accents fold", "Sesión ÇA Não", []string{"sesion", "ca", "nao"}},
		{"combining accent", "se\u0301sion", []string{"sesion"}},
		{"digits kept", "2FA in 14 days", []string{"2fa", "in", "14", "days"}},
		{"eszett", "Straße", []string{"strasse"}},
		{"non latin kept", "пароль 密码", []string{"пароль", "密码"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Tokens(tt.in))
		})
	}
}

func FuzzTokens(f *testing.F) {
	f.Add("Olá, ¿cómo estás?")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokens(s) {
			if tok == "" {
				t.Fatalf("empty token from %q", s)
			}
		}
	})
}
