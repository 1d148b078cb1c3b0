package broker

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Contact notes carry "the broker has answered" across provider processes. Terraform starts a
// process per walk of a run, so a process with no answer yet may meet a broker restarting mid-run,
// where the first-contact rule (retry.go) would report a wrong endpoint. A note per endpoint,
// written at a process's first answer, makes a refused connection within timing.contactMemory a
// restart, retried within the budget. A note is an empty file named by a hash of the endpoint (no
// host, user or secret); only its modification time counts, and failures to read or write it are
// ignored.

// DefaultContactNotes is in the user's cache folder (no other user can plant a file there), else
// in the temporary folder.
func DefaultContactNotes() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "terraform-provider-queuey", "contact")
	}
	return filepath.Join(os.TempDir(), "terraform-provider-queuey-"+strconv.Itoa(os.Getuid()))
}

// contactRefresh is how often a process that keeps getting answers writes its note again.
const contactRefresh = time.Minute

// contactNote is the note of one endpoint; a zero note is never read or written.
type contactNote struct{ path string }

func newContactNote(dir, endpoint string) contactNote {
	if dir == "" {
		return contactNote{}
	}
	key := endpoint
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		key = u.Scheme + "://" + hostPort(u) // a trailing slash or a path makes no other note
	}
	sum := sha256.Sum256([]byte(key))
	return contactNote{path: filepath.Join(dir, "answered-"+hex.EncodeToString(sum[:8]))}
}

// recent reports whether the note was written within the last d.
func (n contactNote) recent(d time.Duration) bool {
	if n.path == "" {
		return false
	}
	fi, err := os.Stat(n.path)
	return err == nil && time.Since(fi.ModTime()) < d
}

// write records that the broker answered now.
func (n contactNote) write() {
	if n.path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(n.path), 0o700); err != nil {
		return
	}
	now := time.Now()
	if os.Chtimes(n.path, now, now) == nil {
		return
	}
	if f, err := os.OpenFile(n.path, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_ = f.Close()
	}
}
