package broker

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A management API whose certificate the client does not trust: the error
// says which settings to set.
func TestManagementCertificateHint(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, err := New(Config{Endpoint: srv.URL, Username: "u", Password: "p", RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueue(context.Background(), "/", "q", Declared)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "failed over a certificate: set cacert_file (or RABBITMQ_CACERT)") {
		t.Errorf("an untrusted certificate: %v", err)
	}
}

// A CA file or client key pair that cannot be read fails the client's
// setup, naming the setting.
func TestTLSFilesUnreadable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{CACertFile: missing}, "reading cacert_file"},
		{Config{ClientCertFile: missing, ClientKeyFile: missing}, "loading clientcert_file and clientkey_file"},
	} {
		tc.cfg.Endpoint, tc.cfg.Username, tc.cfg.Password = "https://rabbit:15671", "u", "p"
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// A 400 without a reason at the management API's own root (no path) is a
// port that is not the management API.
func TestNotTheManagementAPI(t *testing.T) {
	s := brokertest.New(t)
	s.Script(nil, brokertest.Reply(400, ""))
	c, err := New(Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueue(context.Background(), "/", "q", Declared)
	if !errors.Is(err, ErrNotAPI) || !strings.Contains(err.Error(), "not RabbitMQ's management API (it answered 400 without a reason)") {
		t.Errorf("a 400 without a reason: %v", err)
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

// A listing counts as recent from its start for Timing.CheckAge, and not
// once this client wrote after it began.
func TestCountsAsRecent(t *testing.T) {
	c, err := New(Config{Endpoint: "http://rabbit:15672", Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	c.lastWrite.Store(time.Now().Add(-time.Hour).UnixNano())
	age := c.transport.tm.CheckAge
	for _, tc := range []struct {
		began time.Time
		want  bool
	}{
		{time.Now(), true},
		{time.Now().Add(-age / 2), true},
		{time.Now().Add(-age - time.Second), false},
		{time.Now().Add(time.Minute), false}, // a clock that went back
	} {
		if got := c.CountsAsRecent(tc.began); got != tc.want {
			t.Errorf("began %s ago: %v, want %v", time.Since(tc.began).Round(time.Second), got, tc.want)
		}
	}
	began := time.Now()
	c.wrote()
	if c.CountsAsRecent(began) {
		t.Error("a listing that began before a write counts as recent")
	}
}
