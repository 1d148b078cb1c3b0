package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// profileDir is where one kind's providers write their CPU profiles for one phase.
func (e *env) profileDir(kind, phase string) string {
	return filepath.Join(e.profiles, kind+"-"+phase)
}

// profileTops returns the head of `go tool pprof -top` per phase of the profiled providers, runs
// merged.
func (e *env) profileTops(ctx context.Context) string {
	var w strings.Builder
	fmt.Fprintf(&w, "\nCPU profiles (%s=%s/<provider>-<phase>), all runs and processes of a phase merged:\n", "QUEUEY_CPUPROFILE", e.profiles)
	for _, kind := range []string{kindQueuey, kindCrowded, kindWrites, kindNoop} {
		for _, phase := range phases {
			files, _ := filepath.Glob(filepath.Join(e.profileDir(kind, phase), "*.pprof"))
			if len(files) == 0 {
				continue
			}
			// The floors' profiles in one line; queuey's by flat and by cumulative time.
			views := []string{"-top"}
			if isQueuey(kind) {
				views = append(views, "-cum")
			}
			for _, view := range views {
				args := []string{"tool", "pprof", "-top", "-nodecount=" + fmt.Sprint(e.o.profileTop)}
				what := "flat"
				if view == "-cum" {
					args = append(args, "-cum")
					what = "cumulative"
				}
				out, err := exec.CommandContext(ctx, "go", append(args, files...)...).CombinedOutput()
				if err != nil {
					fmt.Fprintf(&w, "\n--- %s %s: go tool pprof: %v\n%s", kind, phase, err, out)
					continue
				}
				fmt.Fprintf(&w, "\n--- %s %s (%d processes), top by %s:\n", kind, phase, len(files), what)
				for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
					switch {
					case strings.HasPrefix(line, "File:"), strings.HasPrefix(line, "Build ID:"),
						strings.HasPrefix(line, "Type:"), strings.HasPrefix(line, "Time:"):
						continue
					case !isQueuey(kind) && !strings.HasPrefix(line, "Duration:"):
						continue
					}
					fmt.Fprintln(&w, line)
				}
			}
		}
	}
	return w.String()
}
