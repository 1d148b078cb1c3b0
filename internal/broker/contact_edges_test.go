package broker

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// One note per scheme and host:port of the endpoint: a trailing slash, a
// path or a default port written out make no other note; another scheme,
// host or port does, and an endpoint that is no URL with a host is taken
// as it is.
func TestContactNote_keyedBySchemeAndHostPort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := func(endpoint string) string { return newContactNote(dir, endpoint).path }
	base := path("http://rabbit:15672")
	for _, same := range []string{"http://rabbit:15672/", "http://rabbit:15672/mgmt", "http://u:p@rabbit:15672"} {
		if path(same) != base {
			t.Errorf("%s has a note of its own; want the one of http://rabbit:15672", same)
		}
	}
	if path("http://rabbit") != path("http://rabbit:80") || path("https://rabbit") != path("https://rabbit:443") {
		t.Error("the scheme's default port written out makes another note")
	}
	seen := map[string]string{base: "http://rabbit:15672"}
	for _, other := range []string{"https://rabbit:15672", "http://rabbit:15673", "http://other:15672", "rabbit:15672", "not a url"} {
		p := path(other)
		if prev, ok := seen[p]; ok {
			t.Errorf("%s shares the note of %s", other, prev)
		}
		seen[p] = other
	}
	if newContactNote("", "http://rabbit:15672").path != "" {
		t.Error("a note without a folder has a path")
	}
}

// Writing a note creates it (and its folder) and leaves no file open: a
// provider process writes one per endpoint and may run for long.
func TestContactNote_writeLeavesNoFileOpen(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to look for open files")
	}
	note := newContactNote(filepath.Join(t.TempDir(), "notes"), "http://rabbit:15672")
	note.write()
	if !note.recent(time.Minute) {
		t.Fatal("no note written")
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == note.path {
			t.Errorf("file descriptor %s is still open on the note", fd.Name())
		}
	}
}
