// Package plugintune sets up a provider process before it serves Terraform:
// the SDK's logging off unless logs are asked for, a garbage collector tuned
// for a short-lived process, and an optional CPU profile. Both the provider
// and the bench's do-nothing provider (tools/bench/noop) use it, so that the
// bench compares like with like.
package plugintune

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
)

// EnvCPUProfile names a directory; when set, each provider process writes
// its CPU profile there as <program>-<pid>.pprof when it exits. Off unless set.
const EnvCPUProfile = "QUEUEY_CPUPROFILE"

// gcPercent is the GOGC used unless GOGC is set. A provider process lives for
// one Terraform command and holds little memory (tens of MiB at 1000
// resources), so collecting four times less often trades a little memory for
// CPU.
const gcPercent = 400

// Start tunes the process and returns a function to call when serving ends.
func Start() (stop func()) {
	quietUnlessAsked()
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	return startProfile(os.Getenv(EnvCPUProfile))
}

// quietUnlessAsked turns the plugin SDK's logging off when nobody asked for
// logs. Otherwise the framework writes every log line, TRACE included, for
// Terraform to parse and throw away: measured by make bench, that is 30–45%
// of the provider's and Terraform's CPU on a plan of many queues. Setting
// TF_LOG or TF_LOG_PROVIDER (or any of the variables below) brings it back.
func quietUnlessAsked() {
	if os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != "" {
		return
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_QUEUEY"} {
		if _, set := os.LookupEnv(v); !set {
			_ = os.Setenv(v, "off")
		}
	}
}

// startProfile starts a CPU profile into dir, if dir is set. A failure is
// reported on standard error (Terraform logs it) and never stops the provider.
func startProfile(dir string) func() {
	if dir == "" {
		return func() {}
	}
	name := fmt.Sprintf("%s-%d.pprof", filepath.Base(os.Args[0]), os.Getpid())
	f, err := os.Create(filepath.Join(dir, name))
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: no CPU profile: %v\n", EnvCPUProfile, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
