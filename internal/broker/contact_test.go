package broker

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"path/filepath"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// noteClient is a client of endpoint, as a new provider process would make
// it, with contact notes in dir and a retry budget of noteBudget, on a fake
// clock (the notes' own age is the file's, on the real clock).
func noteClient(t *testing.T, endpoint, dir string, memory time.Duration) (*Client, *fakeClock) {
	t.Helper()
	tm := fastTiming
	tm.backoffFirst, tm.backoffMax, tm.firstContact, tm.contactMemory = 10*time.Millisecond, 10*time.Millisecond, 50*time.Millisecond, memory
	return withClock(mustNew(t, Config{Endpoint: endpoint, Username: "u", Password: "p", RequestTimeout: time.Second,
		RetryBudget: noteBudget, timing: tm, ContactNotes: dir}))
}

const noteBudget = 400 * time.Millisecond

// A broker that answered one provider process and then stopped is a restart
// to the next process of the run, for contactMemory: its refused connection
// is retried within the budget, not reported as a first contact. Just outside
// the memory, and with no notes at all, it is a first contact again.
func TestContactNote_restartSpansProcesses(t *testing.T) {
	t.Parallel()
	const memory = time.Hour
	for _, tc := range []struct {
		name    string
		age     time.Duration // of the note when the second process starts
		noNotes bool
		restart bool
	}{
		{"just written", 0, false, true},
		{"just inside the memory", memory - time.Minute, false, true},
		{"just outside the memory", memory + time.Minute, false, false},
		{"no notes kept", 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := brokertest.New(t)
			first, _ := noteClient(t, s.URL, dir, memory)
			if _, err := first.GetVhost(context.Background(), "/"); err != nil {
				t.Fatal(err)
			}
			s.Close() // the broker stops: its port refuses connections now
			note := newContactNote(dir, s.URL)
			if !note.recent(memory) {
				t.Fatal("the first process's answer wrote no contact note")
			}
			then := time.Now().Add(-tc.age)
			if err := os.Chtimes(note.path, then, then); err != nil {
				t.Fatal(err)
			}
			if tc.noNotes {
				dir = ""
			}
			c, clock := noteClient(t, s.URL, dir, memory)
			start := clock.now()
			_, err := c.GetVhost(context.Background(), "/")
			took := clock.since(start)
			firstContact := err != nil && strings.Contains(err.Error(), "nothing answered at")
			switch {
			case err == nil:
				t.Fatal("a request to a stopped broker succeeded")
			case tc.restart && (firstContact || took < noteBudget):
				t.Errorf("after %s: %v; want a restart retried for the whole budget (%s)", took, err, noteBudget)
			case !tc.restart && (!firstContact || took >= noteBudget):
				t.Errorf("after %s: %v; want a first contact reported after 50ms", took, err)
			}
		})
	}
}

// Under OAuth 2.0 the token endpoint answers before the management API is
// tried: its answer is no sign that the management API answered, so a closed
// management port is still a first contact, and no note is written for it.
func TestContactNote_tokenEndpointIsNotTheBroker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	te := brokertest.NewTokenEndpoint(t, "s")
	endpoint := "http://" + brokertest.ClosedAddr(t)
	tm := fastTiming
	tm.backoffFirst, tm.backoffMax, tm.firstContact = 10*time.Millisecond, 10*time.Millisecond, 50*time.Millisecond
	c := mustNew(t, Config{Endpoint: endpoint, OAuth2: &OAuth2Config{TokenURL: te.URL, ClientID: "terraform", ClientSecret: "s"},
		RequestTimeout: time.Second, RetryBudget: 2 * time.Second, timing: tm, ContactNotes: dir})
	_, clock := withClock(c)
	start := clock.now()
	_, err := c.GetVhost(context.Background(), "/")
	if took := clock.since(start); err == nil || !strings.Contains(err.Error(), "nothing answered at") || took >= time.Second {
		t.Errorf("after %s: %v; want a first contact reported after 50ms", took, err)
	}
	if te.Hits() == 0 {
		t.Error("no token was asked for: the test proves nothing")
	}
	if newContactNote(dir, endpoint).recent(time.Hour) || newContactNote(dir, te.URL).recent(time.Hour) {
		t.Error("a contact note was written though the management API never answered")
	}
}

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

// The contact notes live in the user's cache folder, else in a folder of
// the user's own in the temporary folder.
func TestDefaultContactNotes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/var/cache/u")
	if got, want := DefaultContactNotes(), "/var/cache/u/terraform-provider-queuey/contact"; got != want {
		t.Errorf("with a cache folder: %s, want %s", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	want := filepath.Join(os.TempDir(), "terraform-provider-queuey-"+strconv.Itoa(os.Getuid()))
	if got := DefaultContactNotes(); got != want {
		t.Errorf("without one: %s, want %s", got, want)
	}
}
