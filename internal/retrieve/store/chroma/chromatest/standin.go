package chromatest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// StandIn is a Chroma v2 server for what the local server (the npm 3.5.0 Rust
// server, which has no authentication) cannot show: token authentication as
// Chroma's Python server does it (chromadb.auth.token_authn: the token in the
// configured header, "Bearer <token>" in Authorization; heartbeat public; a
// missing or wrong token 401 {"detail":"Unauthorized"}, a token without access to
// the tenant 403 {"detail":"Forbidden"}) and Chroma Cloud's X-Chroma-Token. Its
// tenants, databases and collections answer as the real server does (404
// {"error":"NotFoundError",…}, 409 on a duplicate, the collection model).
type StandIn struct {
	// Header and Token are the accepted token and its header (Token "" accepts
	// any request); Tenant, when set, is the only tenant the token may use.
	Header, Token, Tenant string
	mu                    sync.Mutex
	DBs                   map[string]bool // "tenant/db"
	Tenants               map[string]bool
	Cols                  map[string]string   // "tenant/db/name" -> id
	Seen                  []http.Header       // every request's headers
	Requests              []string            // every request: "METHOD /path"
	added                 map[string][]string // collection id -> record ids, in order
}

// NewStandIn is a stand-in accepting token in header ("" accepts any request),
// holding the default tenant and database.
func NewStandIn(header, token string) *StandIn {
	return &StandIn{Header: header, Token: token, Tenants: map[string]bool{"default_tenant": true},
		DBs: map[string]bool{"default_tenant/default_database": true}, Cols: map[string]string{}, added: map[string][]string{}}
}

// Lock and Unlock guard the fields while the server runs.
func (s *StandIn) Lock()   { s.mu.Lock() }
func (s *StandIn) Unlock() { s.mu.Unlock() }

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *StandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Seen = append(s.Seen, r.Header.Clone())
	s.Requests = append(s.Requests, r.Method+" "+r.URL.Path)
	p := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v2/"), "/")
	if p[0] == "heartbeat" {
		WriteJSON(w, 200, map[string]int64{"nanosecond heartbeat": 1})
		return
	}
	if s.Token != "" {
		got := r.Header.Get(s.Header)
		if s.Header == "Authorization" {
			if !strings.HasPrefix(got, "Bearer ") {
				WriteJSON(w, 401, map[string]string{"detail": "Unauthorized"})
				return
			}
			got = strings.TrimPrefix(got, "Bearer ")
		}
		if strings.TrimSpace(got) != s.Token {
			WriteJSON(w, 401, map[string]string{"detail": "Unauthorized"})
			return
		}
		if len(p) > 1 && p[0] == "tenants" && s.Tenant != "" && p[1] != s.Tenant {
			WriteJSON(w, 403, map[string]string{"detail": "Forbidden"})
			return
		}
	}
	notFound := func(what string) { WriteJSON(w, 404, map[string]string{"error": "NotFoundError", "message": what}) }
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	switch {
	case len(p) == 1 && p[0] == "tenants" && r.Method == http.MethodPost:
		n := body["name"].(string)
		if s.Tenants[n] {
			WriteJSON(w, 409, map[string]string{"error": "ChromaError", "message": "Tenant [" + n + "] already exists"})
			return
		}
		s.Tenants[n] = true
		WriteJSON(w, 200, map[string]any{})
	case len(p) == 2 && p[0] == "tenants":
		if !s.Tenants[p[1]] {
			notFound("Tenant [" + p[1] + "] not found")
			return
		}
		WriteJSON(w, 200, map[string]any{"name": p[1]})
	case len(p) == 3 && r.Method == http.MethodPost:
		n := body["name"].(string)
		if s.DBs[p[1]+"/"+n] {
			WriteJSON(w, 409, map[string]string{"error": "ChromaError", "message": "Database [" + n + "] already exists"})
			return
		}
		s.DBs[p[1]+"/"+n] = true
		WriteJSON(w, 200, map[string]any{})
	case len(p) == 4:
		if !s.DBs[p[1]+"/"+p[3]] {
			notFound("Database [" + p[3] + "] not found. Are you sure it exists?")
			return
		}
		WriteJSON(w, 200, map[string]any{"name": p[3], "tenant": p[1]})
	case len(p) >= 5:
		db := p[1] + "/" + p[3]
		if !s.DBs[db] {
			WriteJSON(w, 400, map[string]string{"error": "InvalidArgumentError", "message": "Database [" + p[3] + "] does not exist"})
			return
		}
		switch {
		case len(p) == 5 && r.Method == http.MethodPost:
			n := body["name"].(string)
			s.Cols[db+"/"+n] = "id-" + n
			WriteJSON(w, 200, map[string]any{"id": "id-" + n, "name": n, "metadata": body["metadata"]})
		case len(p) == 6 && r.Method == http.MethodGet:
			id, ok := s.Cols[db+"/"+p[5]]
			if !ok {
				notFound("Collection [" + p[5] + "] does not exist")
				return
			}
			WriteJSON(w, 200, map[string]any{"id": id, "name": p[5]})
		case len(p) == 6 && r.Method == http.MethodDelete:
			delete(s.Cols, db+"/"+p[5])
			WriteJSON(w, 200, map[string]any{})
		case len(p) == 7 && p[6] == "add":
			for _, id := range body["ids"].([]any) {
				s.added[p[5]] = append(s.added[p[5]], id.(string))
			}
			WriteJSON(w, 201, true)
		case len(p) == 7 && p[6] == "count":
			WriteJSON(w, 200, len(s.added[p[5]]))
		case len(p) == 7 && p[6] == "query":
			// The records in the order added, at growing distances (no vector
			// search: the stand-in checks the protocol, not the ranking).
			n, k := len(body["query_embeddings"].([]any)), int(body["n_results"].(float64))
			ids, dist := make([][]string, n), make([][]float64, n)
			for i := range ids {
				for r, id := range s.added[p[5]] {
					if r == k {
						break
					}
					ids[i], dist[i] = append(ids[i], id), append(dist[i], 0.25+float64(r)/100)
				}
			}
			WriteJSON(w, 200, map[string]any{"ids": ids, "distances": dist})
		default:
			notFound("no route")
		}
	default:
		notFound("no route")
	}
}
