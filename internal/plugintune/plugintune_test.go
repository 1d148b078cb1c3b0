package plugintune

import (
	"os"
	"path/filepath"
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

func TestStartProfileOffByDefault(t *testing.T) {
	startProfile("")() // no directory: nothing to write, nothing to stop
}

func TestStartProfileMissingDirectoryIsNotFatal(t *testing.T) {
	startProfile(filepath.Join(t.TempDir(), "missing"))()
}
