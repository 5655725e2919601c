package gitread

import (
	"fmt"
	"path/filepath"
	"strings"
)

// HeadRef is the branch HEAD names, fully ("refs/heads/main"), its symbolic
// refs followed to the last, as `git rev-parse --symbolic-full-name HEAD`
// writes it; "" when HEAD is detached (it holds an id). The branch need not
// have a commit yet (Head says whether it has). No object is read.
func (r *Repo) HeadRef() (string, error) {
	name := "HEAD"
	for depth := 0; ; depth++ {
		if depth > 5 {
			return "", fmt.Errorf("symbolic ref HEAD: too many levels")
		}
		target, isSym, err := r.symref(name)
		if err != nil {
			return "", err
		}
		if !isSym {
			break
		}
		name = target
	}
	if name == "HEAD" {
		return "", nil
	}
	return name, nil
}

// symref reads name's loose file: its target when it is a symbolic ref
// ("ref: TARGET"). A packed ref is never symbolic.
func (r *Repo) symref(name string) (string, bool, error) {
	dir := r.CommonDir
	if perWorktree(name) {
		dir = r.GitDir
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	if target, ok := linkRef(p); ok {
		return target, true, nil
	}
	b, err := readSmall(p, r.roots)
	if err != nil {
		return "", false, nil //nolint:nilerr // no loose file (or an unreadable one): not symbolic; r.ref reports what it cannot read
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(firstLine(b)), "ref:")
	if !ok {
		return "", false, nil
	}
	target = strings.TrimSpace(target)
	if !validRefName(target) {
		return "", false, fmt.Errorf("symbolic ref %s does not point to a valid ref name", name)
	}
	return target, true, nil
}

// abbrevRules are git's ref_rev_parse_rules, the order a short name is
// looked up in (refs.c).
var abbrevRules = []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}

// ShortRef is full's shortest unambiguous name, as `git rev-parse --abbrev-ref`
// writes it (refs.c's shorten_unambiguous_ref in strict mode, git's default
// core.warnAmbiguousRefs): refs/heads/main is "main" unless another rule
// (a tag main, refs/remotes/main, …) also names an existing ref, then
// "heads/main"; a name no rule shortens is returned whole.
func (r *Repo) ShortRef(full string) string {
	for i := len(abbrevRules) - 1; i > 0; i-- {
		short, ok := matchRule(full, abbrevRules[i])
		if !ok {
			continue
		}
		ambiguous := false
		for j, rule := range abbrevRules {
			if j == i {
				continue
			}
			if r.refExists(fmt.Sprintf(rule, short)) {
				ambiguous = true
				break
			}
		}
		if !ambiguous {
			return short
		}
	}
	return full
}

// matchRule is the short name that rule (one %s) turns into full.
func matchRule(full, rule string) (string, bool) {
	pre, post, _ := strings.Cut(rule, "%s")
	if len(full) <= len(pre)+len(post) || !strings.HasPrefix(full, pre) || !strings.HasSuffix(full, post) {
		return "", false
	}
	return full[len(pre) : len(full)-len(post)], true
}

// refExists is git's refs_ref_exists: the name resolves (symbolic refs
// followed) to an object id. A name outside refs/ counts only when git would
// read it (refname_is_safe: upper case and underscores).
func (r *Repo) refExists(name string) bool {
	if !validRefName(name) {
		return false
	}
	if !strings.HasPrefix(name, "refs/") && !safeOneLevel(name) {
		return false
	}
	_, ok, err := r.ref(name, 0)
	return err == nil && ok
}

// safeOneLevel: a name of the git directory's top that git reads as a ref.
func safeOneLevel(name string) bool {
	for _, c := range name {
		if (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return name != ""
}
