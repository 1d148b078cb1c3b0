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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A management API whose certificate the client does not trust: the error
// says it is the certificate.
func TestManagementCertificateCause(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, err := New(Config{Endpoint: srv.URL, Username: "u", Password: "p", RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueue(context.Background(), "/", "q", Declared)
	if !errors.Is(err, ErrUnreachable) || causeOf(err) != CauseCertificate || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an untrusted certificate: %v", err)
	}
}

// A CA file or client key pair that cannot be read, a CA file without a
// certificate, or half a key pair fails the client's setup, naming the
// settings.
func TestTLSFilesUnreadable(t *testing.T) {
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "missing.pem"), filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pair := []Setting{SettingClientCertFile, SettingClientKeyFile}
	for _, tc := range []struct {
		cfg      Config
		problem  ConfigProblem
		settings []Setting
	}{
		{Config{CACertFile: missing}, ConfigUnreadable, []Setting{SettingCACertFile}},
		{Config{CACertFile: empty}, ConfigNoPEM, []Setting{SettingCACertFile}},
		{Config{ClientCertFile: missing, ClientKeyFile: missing}, ConfigKeyPair, pair},
		{Config{ClientCertFile: missing}, ConfigHalfPair, pair},
	} {
		tc.cfg.Endpoint, tc.cfg.Username, tc.cfg.Password = "https://rabbit:15671", "u", "p"
		_, err := New(tc.cfg)
		var e *ConfigError
		if !errors.As(err, &e) || e.Problem != tc.problem || !slices.Equal(e.Settings, tc.settings) {
			t.Errorf("%+v: %v, want problem %d with %v", tc.cfg, err, tc.problem, tc.settings)
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
	if !errors.Is(err, ErrNotAPI) || causeOf(err) != CauseNotAPI {
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
