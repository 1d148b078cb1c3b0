package plugintune

import (
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
)

func TestStartProfileWritesOneProfilePerProcess(t *testing.T) {
	dir := t.TempDir()
	stop := startProfile(dir)
	for i := 0; i < 1e6; i++ {
		_ = filepath.Base("a/b")
	}
	stop()
	files, err := filepath.Glob(filepath.Join(dir, "*.pprof"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one profile in %s, got %v (%v)", dir, files, err)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Size() == 0 {
		t.Fatalf("profile %s is empty (%v)", files[0], err)
	}
}

func TestStartProfile_notStarted(t *testing.T) {
	for _, tt := range []struct {
		name, dir, wantStderr string
	}{
		{"off by default", "", ""},
		{"missing directory is reported, not fatal", filepath.Join(t.TempDir(), "missing"), EnvCPUProfile + ": no CPU profile"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// What startProfile writes to standard error goes to a file for the check below.
			f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			saved := os.Stderr
			os.Stderr = f
			stop := startProfile(tt.dir)
			os.Stderr = saved
			// A CPU profile running, another one cannot start.
			if err := pprof.StartCPUProfile(io.Discard); err != nil {
				t.Error("a CPU profile is running")
			} else {
				pprof.StopCPUProfile()
			}
			stop()
			stderr, _ := os.ReadFile(f.Name())
			if tt.wantStderr == "" && len(stderr) != 0 || !strings.Contains(string(stderr), tt.wantStderr) {
				t.Errorf("standard error %q, want %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestQuietUnlessAsked(t *testing.T) {
	sdk := []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_QUEUEY"}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want map[string]string // after quietUnlessAsked; "" is unset
	}{
		{"nobody asked: the SDK is quiet", nil,
			map[string]string{"TF_LOG_SDK": "off", "TF_LOG_SDK_PROTO": "off", "TF_LOG_SDK_FRAMEWORK": "off", "TF_LOG_PROVIDER_QUEUEY": "off"}},
		{"TF_LOG asks for logs", map[string]string{"TF_LOG": "DEBUG"}, map[string]string{"TF_LOG_SDK": ""}},
		{"TF_LOG_PROVIDER asks for logs", map[string]string{"TF_LOG_PROVIDER": "TRACE"}, map[string]string{"TF_LOG_SDK": ""}},
		{"a setting given is kept", map[string]string{"TF_LOG_SDK_PROTO": "TRACE"},
			map[string]string{"TF_LOG_SDK_PROTO": "TRACE", "TF_LOG_SDK": "off"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range append([]string{"TF_LOG", "TF_LOG_PROVIDER"}, sdk...) {
				t.Setenv(v, "") // restored at the end of the test
				_ = os.Unsetenv(v)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			quietUnlessAsked()
			for k, want := range tt.want {
				if got := os.Getenv(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}
