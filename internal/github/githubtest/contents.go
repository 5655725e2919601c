package githubtest

import (
	"crypto/sha1" //nolint:gosec // G505: git object ids are SHA-1; nothing is protected by them
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file is the repository-contents side of the fake: a small git object
// store (blobs, trees, commits, branch refs) behind GitHub's REST endpoints.
//
//	GET  /repos/{o}/{r}/contents/{path}?ref=B
//	     200 {"type":"file","encoding":"base64","content":…,"sha":…,"size":…}: the
//	     content is base64 wrapped every 60 characters with "\n", as GitHub sends it;
//	     sha is the git blob id (SHA-1 of "blob <size>\0<content>"). A file over
//	     ContentsInlineMax (1 MB, as on GitHub) has "encoding":"none" and an empty
//	     content; Accept: application/vnd.github.raw(+json) or .v3.raw answers the
//	     bytes themselves. A directory answers the array of its entries. 404 "No
//	     commit found for the ref B" for an unknown branch, 404 "Not Found" for a
//	     missing path. Without ref: the default branch. A file over 1 MB asked for
//	     with the default media type (not .object or .raw) is 403 "This API returns
//	     blobs up to 1 MB in size…" (code too_large), as on GitHub.
//	GET  /repos/{o}/{r}/git/blobs/{sha}
//	     200 {"sha","size","encoding":"base64","content"} (wrapped likewise), or the
//	     raw bytes with the raw media type; 404 for an unknown blob.
//	PUT  /repos/{o}/{r}/contents/{path} {"message","content","sha","branch"}
//	     201 created / 200 updated, with {"content":{…},"commit":{…}}: one commit
//	     on the branch. 422 "Invalid request.\n\n\"sha\" wasn't supplied." when the
//	     file exists and sha is missing; 409 "PATH does not match SHA" when sha is
//	     not the file's current blob; 404 "Branch B not found" for an unknown
//	     branch; 422 for a missing message or content or content that is not
//	     base64; 403 "Resource not accessible by integration" for a read-only token.
//	GET  /repos/{o}/{r}   the repository (full_name, default_branch, fork); 404 for another
//	GET  /repos/{o}/{r}/git/ref/heads/{branch}   200 {"ref","object":{"sha","type"}} or 404
//	POST /repos/{o}/{r}/git/blobs   {"content","encoding":"utf-8"|"base64"} 201 {"sha"}
//	POST /repos/{o}/{r}/git/trees   {"tree":[{"path","mode","type","content"|"sha"}],"base_tree"} 201
//	POST /repos/{o}/{r}/git/commits {"message","tree","parents":[…]} 201 (no parents: an orphan)
//	POST /repos/{o}/{r}/git/refs    {"ref":"refs/heads/B","sha"} 201; 422 "Reference already exists"
//	     (the git data POSTs: 403 for a read-only token, 422 for an unknown object)
//
// The repository starts with its default branch (DefaultBranch, "main") holding a
// README.md, so it is not empty (GitHub refuses git data writes to an empty one).

// ContentsInlineMax is the largest file the contents API returns inline (1 MB).
const ContentsInlineMax = 1 << 20

// MaxContentsFile is the largest file the contents API reads or writes (100 MB).
const MaxContentsFile = 100 << 20

const (
	docGetContent = "https://docs.github.com/rest/repos/contents#get-repository-content"
	docPutContent = "https://docs.github.com/rest/repos/contents#create-or-update-file-contents"
	docGitBlobs   = "https://docs.github.com/rest/git/blobs#get-a-blob"
	docGitRefs    = "https://docs.github.com/rest/git/refs"
	docGitTrees   = "https://docs.github.com/rest/git/trees#create-a-tree"
	docGitCommits = "https://docs.github.com/rest/git/commits#create-a-commit"
)

type gitCommit struct {
	tree    string
	parents []string
	message string
}

type gitState struct {
	blobs   map[string][]byte
	trees   map[string]map[string]string // tree id -> path -> blob id (flat: full paths)
	commits map[string]gitCommit
	refs    map[string]string // branch -> commit id
	seq     int
	// inline overrides ContentsInlineMax (tests of the large-file path).
	inline int
}

func (s *Server) git() *gitState {
	g := &s.gitData
	if g.refs == nil {
		g.blobs, g.trees, g.commits, g.refs = map[string][]byte{}, map[string]map[string]string{}, map[string]gitCommit{}, map[string]string{}
		readme := g.putBlob([]byte("# " + s.Repo + "\n"))
		tree := g.putTree(map[string]string{"README.md": readme})
		g.refs[s.defaultBranch()] = g.putCommit(tree, nil, "Initial commit")
	}
	return g
}

func (s *Server) defaultBranch() string {
	if s.DefaultBranch == "" {
		return "main"
	}
	return s.DefaultBranch
}

// BlobSHA is git's object id of a blob: SHA-1 of "blob <len>\0" and the content.
func BlobSHA(content []byte) string {
	h := sha1.New() //nolint:gosec // G401: git's object id
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

func (g *gitState) putBlob(content []byte) string {
	id := BlobSHA(content)
	g.blobs[id] = slices.Clone(content)
	return id
}

func (g *gitState) putTree(entries map[string]string) string {
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha1.New() //nolint:gosec // G401: an object id
	h.Write([]byte("tree\x00"))
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\n", p, entries[p])
	}
	id := hex.EncodeToString(h.Sum(nil))
	g.trees[id] = maps(entries)
	return id
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (g *gitState) putCommit(tree string, parents []string, message string) string {
	g.seq++
	h := sha1.New() //nolint:gosec // G401: an object id
	fmt.Fprintf(h, "commit\x00%s\x00%q\x00%q\x00%d", tree, parents, message, g.seq)
	id := hex.EncodeToString(h.Sum(nil))
	g.commits[id] = gitCommit{tree: tree, parents: slices.Clone(parents), message: message}
	return id
}

// files is the tree of branch's head (nil, false when there is no such branch).
func (g *gitState) files(branch string) (map[string]string, bool) {
	head, ok := g.refs[branch]
	if !ok {
		return nil, false
	}
	return g.trees[g.commits[head].tree], true
}

// SetContentsInlineMax changes the size above which GET contents answers
// "encoding":"none" (0 restores ContentsInlineMax), so tests exercise the
// large-file path with small files.
func (s *Server) SetContentsInlineMax(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.git().inline = n
}

// PutFile commits content at path on branch (created as an orphan branch when
// missing), as a push would. It returns the new commit's id.
func (s *Server) PutFile(branch, path string, content []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.git()
	entries, ok := g.files(branch)
	var parents []string
	if ok {
		parents = []string{g.refs[branch]}
	}
	entries = maps(entries)
	entries[path] = g.putBlob(content)
	c := g.putCommit(g.putTree(entries), parents, "push "+path)
	g.refs[branch] = c
	return c
}

// File is the content of path at branch's head.
func (s *Server) File(branch, path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.git()
	entries, ok := g.files(branch)
	if !ok {
		return nil, false
	}
	id, ok := entries[path]
	if !ok {
		return nil, false
	}
	return slices.Clone(g.blobs[id]), true
}

// Files lists the paths at branch's head, sorted (nil when there is no branch).
func (s *Server) Files(branch string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, _ := s.git().files(branch)
	var out []string
	for p := range entries {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Commits is the commit history of branch, newest first: each commit's message
// and its number of parents.
func (s *Server) Commits(branch string) []CommitInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.git()
	var out []CommitInfo
	for id, ok := g.refs[branch]; ok; {
		c := g.commits[id]
		out = append(out, CommitInfo{SHA: id, Message: c.message, Parents: len(c.parents)})
		if len(c.parents) == 0 {
			break
		}
		id = c.parents[0]
	}
	return out
}

// CommitInfo describes a commit of the fake's repository.
type CommitInfo struct {
	SHA, Message string
	Parents      int
}

// wrap64 is base64 as GitHub sends file contents: lines of 60 characters, each
// ended by "\n".
func wrap64(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(enc) > 60 {
		sb.WriteString(enc[:60])
		sb.WriteByte('\n')
		enc = enc[60:]
	}
	if enc != "" {
		sb.WriteString(enc)
		sb.WriteByte('\n')
	}
	return sb.String()
}

var (
	contentsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/contents/(.+)$`)
	gitBlobPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/blobs/([0-9a-f]{40})$`)
	refGetPath   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/ref/heads/(.+)$`)
	repoPath     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)$`)
	gitPostPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/(blobs|trees|commits|refs)$`)
)

func rawAccept(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/vnd.github.raw") || strings.Contains(a, "application/vnd.github.v3.raw")
}

// serveContents answers the contents and git data endpoints (false: not one).
func (s *Server) serveContents(w http.ResponseWriter, r *http.Request, path, body string) bool {
	var m []string
	kind := ""
	for _, p := range []struct {
		re   *regexp.Regexp
		kind string
	}{{contentsPath, "contents"}, {gitBlobPath, "blob"}, {refGetPath, "ref"}, {gitPostPath, "post"}, {repoPath, "repo"}} {
		if m = p.re.FindStringSubmatch(path); m != nil {
			kind = p.kind
			break
		}
	}
	if kind == "" {
		return false
	}
	if !strings.EqualFold(m[1], s.Owner) || !strings.EqualFold(m[2], s.Repo) {
		s.docFail(w, http.StatusNotFound, "Not Found", docGetContent)
		return true
	}
	g := s.git()
	switch {
	case kind == "repo" && r.Method == http.MethodGet:
		s.write(w, http.StatusOK, map[string]any{"id": RepositoryID, "name": s.Repo, "full_name": s.Owner + "/" + s.Repo,
			"owner": map[string]string{"login": s.Owner}, "fork": false, "default_branch": s.defaultBranch(), "private": false})
	case kind == "contents" && r.Method == http.MethodGet:
		s.getContent(w, r, g, m[3])
	case kind == "contents" && r.Method == http.MethodPut:
		s.putContent(w, g, m[3], body)
	case kind == "blob" && r.Method == http.MethodGet:
		b, ok := g.blobs[m[3]]
		switch {
		case !ok:
			s.docFail(w, http.StatusNotFound, "Not Found", docGitBlobs)
		case rawAccept(r):
			w.Header().Set("Content-Type", "application/vnd.github.raw")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(b)
		default:
			s.write(w, http.StatusOK, map[string]any{"sha": m[3], "node_id": "B_" + m[3][:12], "size": len(b),
				"url": s.URL + Prefix + path, "content": wrap64(b), "encoding": "base64"})
		}
	case kind == "ref" && r.Method == http.MethodGet:
		c, ok := g.refs[m[3]]
		if !ok {
			s.docFail(w, http.StatusNotFound, "Not Found", docGitRefs+"#get-a-reference")
			return true
		}
		s.write(w, http.StatusOK, map[string]any{"ref": "refs/heads/" + m[3], "object": map[string]string{"sha": c, "type": "commit"}})
	case kind == "post" && r.Method == http.MethodPost:
		if s.ReadOnly {
			s.docFail(w, http.StatusForbidden, "Resource not accessible by integration", docGitRefs)
			return true
		}
		switch m[3] {
		case "blobs":
			s.postBlob(w, g, body)
		case "trees":
			s.postTree(w, g, body)
		case "commits":
			s.postCommit(w, g, body)
		default:
			s.postRef(w, g, body)
		}
	default:
		s.docFail(w, http.StatusNotFound, "Not Found", docGetContent)
	}
	return true
}

func (s *Server) docFail(w http.ResponseWriter, status int, msg, doc string) {
	s.write(w, status, map[string]string{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)})
}

func (s *Server) fileJSON(branch, path, id string, size int) map[string]any {
	base := s.URL + Prefix + "/repos/" + s.Owner + "/" + s.Repo
	name := path[strings.LastIndex(path, "/")+1:]
	return map[string]any{"type": "file", "name": name, "path": path, "sha": id, "size": size,
		"url":          base + "/contents/" + path + "?ref=" + branch,
		"git_url":      base + "/git/blobs/" + id,
		"html_url":     "https://github.com/" + s.Owner + "/" + s.Repo + "/blob/" + branch + "/" + path,
		"download_url": "https://raw.githubusercontent.com/" + s.Owner + "/" + s.Repo + "/" + branch + "/" + path}
}

func (s *Server) getContent(w http.ResponseWriter, r *http.Request, g *gitState, path string) {
	branch := r.URL.Query().Get("ref")
	if branch == "" {
		branch = s.defaultBranch()
	}
	entries, ok := g.files(branch)
	if !ok {
		s.docFail(w, http.StatusNotFound, "No commit found for the ref "+branch, docGetContent)
		return
	}
	path = strings.Trim(path, "/")
	id, ok := entries[path]
	if !ok {
		// A directory: the array of its direct entries.
		var dir []map[string]any
		seen := map[string]bool{}
		for p, bid := range entries {
			rest, found := strings.CutPrefix(p, path+"/")
			if !found {
				continue
			}
			if i := strings.Index(rest, "/"); i >= 0 {
				if d := rest[:i]; !seen[d] {
					seen[d] = true
					dir = append(dir, map[string]any{"type": "dir", "name": d, "path": path + "/" + d})
				}
				continue
			}
			dir = append(dir, s.fileJSON(branch, p, bid, len(g.blobs[bid])))
		}
		if dir == nil {
			s.docFail(w, http.StatusNotFound, "Not Found", docGetContent)
			return
		}
		slices.SortFunc(dir, func(a, b map[string]any) int { return strings.Compare(a["path"].(string), b["path"].(string)) })
		s.write(w, http.StatusOK, dir)
		return
	}
	b := g.blobs[id]
	if rawAccept(r) {
		w.Header().Set("Content-Type", "application/vnd.github.raw")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
		return
	}
	f := s.fileJSON(branch, path, id, len(b))
	inline := g.inline
	if inline <= 0 {
		inline = ContentsInlineMax
	}
	if len(b) > inline {
		if !strings.Contains(r.Header.Get("Accept"), "application/vnd.github.object") {
			// The default media type serves files up to 1 MB only.
			s.write(w, http.StatusForbidden, map[string]any{
				"message": "This API returns blobs up to 1 MB in size. The requested blob is too large to fetch via the API, but you can use the Git Data API to request blobs up to 100 MB in size.",
				"errors":  []map[string]string{{"resource": "Blob", "field": "data", "code": "too_large"}}, "documentation_url": docGetContent})
			return
		}
		f["encoding"], f["content"] = "none", ""
	} else {
		f["encoding"], f["content"] = "base64", wrap64(b)
	}
	s.write(w, http.StatusOK, f)
}

func (s *Server) putContent(w http.ResponseWriter, g *gitState, path, raw string) {
	if s.ReadOnly {
		s.docFail(w, http.StatusForbidden, "Resource not accessible by integration", docPutContent)
		return
	}
	var in struct {
		Message *string `json:"message"`
		Content *string `json:"content"`
		SHA     *string `json:"sha"`
		Branch  string  `json:"branch"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		s.docFail(w, http.StatusBadRequest, "Problems parsing JSON", docPutContent)
		return
	}
	switch {
	case in.Message == nil:
		s.docFail(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"message\" wasn't supplied.", docPutContent)
		return
	case in.Content == nil:
		s.docFail(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"content\" wasn't supplied.", docPutContent)
		return
	}
	content, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(*in.Content, "\n", ""))
	if err != nil {
		s.docFail(w, http.StatusUnprocessableEntity, "content is not valid Base64", docPutContent)
		return
	}
	if len(content) > MaxContentsFile {
		s.docFail(w, http.StatusUnprocessableEntity, "content is too large (maximum is 100 MB)", docPutContent)
		return
	}
	branch := in.Branch
	if branch == "" {
		branch = s.defaultBranch()
	}
	path = strings.Trim(path, "/")
	entries, ok := g.files(branch)
	if !ok {
		s.docFail(w, http.StatusNotFound, "Branch "+branch+" not found", docPutContent)
		return
	}
	cur, exists := entries[path]
	switch {
	case exists && in.SHA == nil:
		s.docFail(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"sha\" wasn't supplied.", docPutContent)
		return
	case in.SHA != nil && (!exists || *in.SHA != cur):
		s.docFail(w, http.StatusConflict, path+" does not match "+*in.SHA, docPutContent)
		return
	}
	entries = maps(entries)
	id := g.putBlob(content)
	entries[path] = id
	tree := g.putTree(entries)
	commit := g.putCommit(tree, []string{g.refs[branch]}, *in.Message)
	g.refs[branch] = commit
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	s.write(w, status, map[string]any{"content": s.fileJSON(branch, path, id, len(content)),
		"commit": map[string]any{"sha": commit, "message": *in.Message, "tree": map[string]string{"sha": tree},
			"parents": []map[string]string{{"sha": g.commits[commit].parents[0]}}}})
}

func (s *Server) validationFail(w http.ResponseWriter, msg, doc string) {
	s.docFail(w, http.StatusUnprocessableEntity, msg, doc)
}

func (s *Server) postBlob(w http.ResponseWriter, g *gitState, raw string) {
	var in struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		s.docFail(w, http.StatusBadRequest, "Problems parsing JSON", docGitBlobs)
		return
	}
	if in.Content == nil {
		s.validationFail(w, "Invalid request.\n\n\"content\" wasn't supplied.", docGitBlobs)
		return
	}
	var b []byte
	switch in.Encoding {
	case "", "utf-8":
		b = []byte(*in.Content)
	case "base64":
		var err error
		if b, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(*in.Content, "\n", "")); err != nil {
			s.validationFail(w, "content is not valid Base64", docGitBlobs)
			return
		}
	default:
		s.validationFail(w, "encoding must be utf-8 or base64", docGitBlobs)
		return
	}
	if len(b) > MaxContentsFile {
		s.validationFail(w, "content is too large (maximum is 100 MB)", docGitBlobs)
		return
	}
	id := g.putBlob(b)
	s.write(w, http.StatusCreated, map[string]any{"sha": id, "url": s.URL + Prefix + "/repos/" + s.Owner + "/" + s.Repo + "/git/blobs/" + id})
}

func (s *Server) postTree(w http.ResponseWriter, g *gitState, raw string) {
	var in struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path    string  `json:"path"`
			Mode    string  `json:"mode"`
			Type    string  `json:"type"`
			SHA     *string `json:"sha"`
			Content *string `json:"content"`
		} `json:"tree"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		s.docFail(w, http.StatusBadRequest, "Problems parsing JSON", docGitTrees)
		return
	}
	if in.Tree == nil {
		s.validationFail(w, "Invalid request.\n\n\"tree\" wasn't supplied.", docGitTrees)
		return
	}
	entries := map[string]string{}
	if in.BaseTree != "" {
		base, ok := g.trees[in.BaseTree]
		if !ok {
			s.validationFail(w, "Invalid tree info", docGitTrees)
			return
		}
		entries = maps(base)
	}
	for _, e := range in.Tree {
		p := strings.Trim(e.Path, "/")
		switch {
		case p == "" || e.Mode != "100644" || e.Type != "blob":
			s.validationFail(w, "Invalid tree info", docGitTrees)
			return
		case e.Content != nil:
			entries[p] = g.putBlob([]byte(*e.Content))
		case e.SHA != nil:
			if _, ok := g.blobs[*e.SHA]; !ok {
				s.validationFail(w, "Invalid tree info", docGitTrees)
				return
			}
			entries[p] = *e.SHA
		default:
			s.validationFail(w, "Invalid tree info", docGitTrees)
			return
		}
	}
	id := g.putTree(entries)
	s.write(w, http.StatusCreated, map[string]any{"sha": id, "url": s.URL + Prefix + "/repos/" + s.Owner + "/" + s.Repo + "/git/trees/" + id, "truncated": false})
}

func (s *Server) postCommit(w http.ResponseWriter, g *gitState, raw string) {
	var in struct {
		Message *string  `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		s.docFail(w, http.StatusBadRequest, "Problems parsing JSON", docGitCommits)
		return
	}
	if in.Message == nil {
		s.validationFail(w, "Invalid request.\n\n\"message\" wasn't supplied.", docGitCommits)
		return
	}
	if _, ok := g.trees[in.Tree]; !ok {
		s.validationFail(w, "Tree SHA does not exist", docGitCommits)
		return
	}
	for _, p := range in.Parents {
		if _, ok := g.commits[p]; !ok {
			s.validationFail(w, "Parent SHA does not exist or is not a commit object", docGitCommits)
			return
		}
	}
	id := g.putCommit(in.Tree, in.Parents, *in.Message)
	parents := []map[string]string{}
	for _, p := range in.Parents {
		parents = append(parents, map[string]string{"sha": p})
	}
	s.write(w, http.StatusCreated, map[string]any{"sha": id, "message": *in.Message, "tree": map[string]string{"sha": in.Tree}, "parents": parents})
}

func (s *Server) postRef(w http.ResponseWriter, g *gitState, raw string) {
	var in struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		s.docFail(w, http.StatusBadRequest, "Problems parsing JSON", docGitRefs+"#create-a-reference")
		return
	}
	branch, ok := strings.CutPrefix(in.Ref, "refs/heads/")
	if !ok || branch == "" || strings.Count(in.Ref, "/") < 2 {
		s.validationFail(w, "Reference name is invalid", docGitRefs+"#create-a-reference")
		return
	}
	if _, ok := g.commits[in.SHA]; !ok {
		s.validationFail(w, "Object does not exist", docGitRefs+"#create-a-reference")
		return
	}
	if _, exists := g.refs[branch]; exists {
		s.validationFail(w, "Reference already exists", docGitRefs+"#create-a-reference")
		return
	}
	g.refs[branch] = in.SHA
	s.write(w, http.StatusCreated, map[string]any{"ref": in.Ref, "object": map[string]string{"sha": in.SHA, "type": "commit"}})
}
