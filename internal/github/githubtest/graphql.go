package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// The GraphQL side of the fake: the viewer query (the token's login: a user
// token's user, an installation token's bot, BotLogin: github-actions[bot] for
// the Actions workflow token, <app-slug>[bot] for a GitHub App's) and the
// minimizeComment mutation, read from the query text the way GitHub's schema
// spells it, with its arguments given inline or as variables. Answers follow GitHub: HTTP 200 for every query that parses, with
// "data" and/or an "errors" array whose entries carry type, path, locations and
// message.

var (
	minimizeCall = regexp.MustCompile(`(?s)\bminimizeComment\s*\(\s*input\s*:\s*(\{[^}]*\}|\$\w+)\s*\)`)
	argSubject   = regexp.MustCompile(`\bsubjectId\s*:\s*(\$\w+|"(?:[^"\\]|\\.)*")`)
	argClass     = regexp.MustCompile(`\bclassifier\s*:\s*(\$\w+|[A-Z_]+)`)
	firstField   = regexp.MustCompile(`(?s)^\s*(query|mutation)?\b[^{]*\{\s*(\w+)`)
	viewerCall   = regexp.MustCompile(`(?s)^\s*(?:query\b[^{]*)?\{\s*viewer\s*\{([^{}]*)\}\s*\}\s*$`)
	fieldName    = regexp.MustCompile(`\w+`)
)

// viewerFields are the fields of the viewer (a User; a bot's login ends in
// [bot]) the fake answers.
var viewerFields = map[string]bool{"login": true, "__typename": true}

// classifiers are GitHub's ReportedContentClassifiers and the minimizedReason
// each gives.
var classifiers = map[string]string{
	"SPAM": "spam", "ABUSE": "abuse", "OFF_TOPIC": "off-topic", "OUTDATED": "outdated", "DUPLICATE": "duplicate", "RESOLVED": "resolved",
}

func (s *Server) graphql(w http.ResponseWriter, raw string) {
	var req struct {
		Query     *string                    `json:"query"`
		Variables map[string]json.RawMessage `json:"variables"`
	}
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		s.fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if req.Query == nil {
		s.gqlErrors(w, nil, map[string]any{"message": "A query attribute must be specified and must be a string."})
		return
	}
	q := *req.Query
	if v := viewerCall.FindStringSubmatch(q); v != nil {
		s.viewer(w, v[1])
		return
	}
	m := minimizeCall.FindStringSubmatch(q)
	if m == nil {
		field, op, typ := "?", "mutation", "Mutation"
		if f := firstField.FindStringSubmatch(q); f != nil {
			field = f[2]
			if f[1] != "mutation" {
				op, typ = "query", "Query"
			}
		}
		s.gqlErrors(w, nil, map[string]any{"path": []string{op, field}, "extensions": map[string]string{"code": "undefinedField"},
			"message": fmt.Sprintf("Field '%s' doesn't exist on type '%s'", field, typ)})
		return
	}
	input := map[string]string{}
	if strings.HasPrefix(m[1], "$") {
		var obj map[string]string
		if err := json.Unmarshal(req.Variables[m[1][1:]], &obj); err != nil {
			s.gqlErrors(w, nil, map[string]any{"extensions": map[string]string{"code": "variableMismatch"}, "message": "Variable " + m[1] + " of type MinimizeCommentInput! was provided invalid value"})
			return
		}
		input = obj
	} else {
		resolve := func(re *regexp.Regexp) (string, bool) {
			a := re.FindStringSubmatch(m[1])
			if a == nil {
				return "", false
			}
			if strings.HasPrefix(a[1], "$") {
				var v string
				if err := json.Unmarshal(req.Variables[a[1][1:]], &v); err != nil {
					return "", false
				}
				return v, true
			}
			if strings.HasPrefix(a[1], `"`) {
				var v string
				_ = json.Unmarshal([]byte(a[1]), &v)
				return v, true
			}
			return a[1], true
		}
		if v, ok := resolve(argSubject); ok {
			input["subjectId"] = v
		}
		if v, ok := resolve(argClass); ok {
			input["classifier"] = v
		}
	}
	if input["subjectId"] == "" {
		s.gqlErrors(w, nil, map[string]any{"extensions": map[string]string{"code": "missingRequiredInputObjectAttribute"},
			"message": "Argument 'subjectId' on InputObject 'MinimizeCommentInput' is required. Expected type ID!"})
		return
	}
	reason, ok := classifiers[input["classifier"]]
	if !ok {
		s.gqlErrors(w, nil, map[string]any{"extensions": map[string]string{"code": "argumentLiteralsIncompatible"},
			"message": fmt.Sprintf("Argument 'classifier' on InputObject 'MinimizeCommentInput' has an invalid value (%s). Expected type 'ReportedContentClassifiers!'.", input["classifier"])})
		return
	}
	nullData := map[string]any{"minimizeComment": nil}
	var target *Comment
	for _, c := range s.comments {
		if c.NodeID() == input["subjectId"] {
			target = c
		}
	}
	switch {
	case target == nil:
		s.gqlErrors(w, nullData, map[string]any{"type": "NOT_FOUND", "path": []string{"minimizeComment"},
			"locations": []map[string]int{{"line": 2, "column": 3}},
			"message":   fmt.Sprintf("Could not resolve to a node with the global id of '%s'", input["subjectId"])})
		return
	case s.ReadOnly || s.MinimizeForbidden:
		s.gqlErrors(w, nullData, map[string]any{"type": "FORBIDDEN", "path": []string{"minimizeComment"},
			"extensions": map[string]bool{"saml_failure": false}, "locations": []map[string]int{{"line": 2, "column": 3}},
			"message": "Resource not accessible by integration"})
		return
	}
	target.Minimized, target.MinimizedReason = true, input["classifier"]
	s.write(w, http.StatusOK, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{
		"minimizedComment": map[string]any{"isMinimized": true, "minimizedReason": reason},
	}}})
}

// viewer answers { viewer { FIELDS } }: the token's login (a user token's
// user, else BotLogin), for a read-only token too; a field the fake does not
// serve is GitHub's undefinedField error.
func (s *Server) viewer(w http.ResponseWriter, fields string) {
	out := map[string]any{}
	for _, f := range fieldName.FindAllString(fields, -1) {
		if !viewerFields[f] {
			s.gqlErrors(w, nil, map[string]any{"path": []string{"query", "viewer", f}, "extensions": map[string]string{"code": "undefinedField", "typeName": "User", "fieldName": f},
				"locations": []map[string]int{{"line": 1, "column": 17}}, "message": fmt.Sprintf("Field '%s' doesn't exist on type 'User'", f)})
			return
		}
		out[f] = s.author()
		if f == "__typename" {
			out[f] = userType(s.author())
		}
	}
	s.write(w, http.StatusOK, map[string]any{"data": map[string]any{"viewer": out}})
}

// GraphQLError is GitHub's answer to a GraphQL query that parses but fails:
// 200 with an errors array of one error of type typ ("" none: a schema
// error) saying message, for the next POST /graphql.
func GraphQLError(typ, message string) Fault {
	e := map[string]any{"message": message, "locations": []map[string]int{{"line": 1, "column": 9}}}
	if typ != "" {
		e["type"] = typ
	}
	body, _ := json.Marshal(map[string]any{"errors": []any{e}})
	return Fault{Method: http.MethodPost, Path: "/graphql", Status: http.StatusOK, Body: string(body)}
}

// gqlErrors answers 200 with an errors array (and data when not nil), as GitHub
// does for queries that parse but fail.
func (s *Server) gqlErrors(w http.ResponseWriter, data map[string]any, errs ...map[string]any) {
	out := map[string]any{"errors": errs}
	if data != nil {
		out["data"] = data
	}
	s.write(w, http.StatusOK, out)
}
