package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// The dev_overrides directory holds copies of the bench binary named like the providers. Started by
// Terraform, a copy runs as a shim: it starts the real provider with the same arguments and streams
// (the handshake passes through), forwards signals, and appends the provider's rusage to a log as a
// JSON line.
const (
	envShimTarget = "QUEUEY_BENCH_SHIM_TARGET"
	envShimLog    = "QUEUEY_BENCH_SHIM_LOG"
)

type shimRecord struct {
	Pid       int     `json:"pid"`
	MaxRSSKiB int64   `json:"max_rss_kib"`
	UserS     float64 `json:"user_s"`
	SysS      float64 `json:"sys_s"`
	WallS     float64 `json:"wall_s"`
	Exit      int     `json:"exit"`
}

// runShim runs the provider as a child and never returns.
func runShim(target, logPath string) {
	cmd := exec.Command(target, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "queuey bench shim: starting %s: %v\n", target, err)
		os.Exit(1)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	rec := shimRecord{Pid: cmd.Process.Pid, WallS: time.Since(start).Seconds(), Exit: cmd.ProcessState.ExitCode()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rec.MaxRSSKiB = ru.Maxrss
		rec.UserS = time.Duration(ru.Utime.Nano()).Seconds()
		rec.SysS = time.Duration(ru.Stime.Nano()).Seconds()
	}
	if b, err := json.Marshal(rec); err == nil {
		if f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, _ = f.Write(append(b, '\n'))
			_ = f.Close()
		}
	}
	code := rec.Exit
	if code < 0 {
		code = 1
	}
	os.Exit(code)
}

// installShim copies the bench binary into dir under each provider's binary name.
func installShim(dir string, names ...string) error {
	for _, name := range names {
		if err := copySelf(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func copySelf(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// readShimLog reads the records appended since offset and returns the new offset.
func readShimLog(path string, offset int64) ([]shimRecord, int64) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, offset
	}
	var out []shimRecord
	dec := json.NewDecoder(bytesReader(b))
	for {
		var r shimRecord
		if err := dec.Decode(&r); err != nil {
			break
		}
		out = append(out, r)
	}
	return out, offset + int64(len(b))
}
