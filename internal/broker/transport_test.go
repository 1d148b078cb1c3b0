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
	"strings"
	"testing"
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
