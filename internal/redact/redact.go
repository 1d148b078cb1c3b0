// Package redact keeps secrets out of what the provider writes: a URL's password, whatever the
// shape of the string a user gave.
package redact

import (
	"net/url"
	"strings"
)

// URL hides the password of s's user info, also when s does not parse as a URL with one: whatever
// stands before the last "@" of the authority becomes "xxxxx" (a parsed URL keeps its user name).
func URL(s string) string {
	if u, err := url.Parse(s); err == nil && strings.Contains(s, "://") {
		return u.Redacted()
	}
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	auth := rest
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		return strings.Replace(s, auth[:i], "xxxxx", 1)
	}
	return s
}
