package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// stage is one line of stageLines with its variables expanded.
type stage struct{ name, cli, broker, run, skip string }

// cliVersions are the versions of the versioned CLIs (the GNUmakefile's
// TERRAFORM_NEWEST_VERSION, ...), with or without their leading v.
type cliVersions struct{ tfNewest, tfOldest, tofuNewest, tofuOldest string }

func (v cliVersions) vars() map[string]string {
	at := func(cli, version string) string { return cli + "@" + strings.TrimPrefix(version, "v") }
	return map[string]string{
		"own": ownTests, "oauth": oauthTests, "faults": faultTests,
		"tf_newest": at("terraform", v.tfNewest), "tf_oldest": at("terraform", v.tfOldest),
		"tofu_newest": at("opentofu", v.tofuNewest), "tofu_oldest": at("opentofu", v.tofuOldest),
	}
}

// parseStages expands the variables of lines; a line of other than five
// fields, an unknown variable or a name used twice is an error.
func parseStages(lines []string, vars map[string]string) ([]stage, error) {
	var out []stage
	seen := map[string]bool{}
	for _, line := range lines {
		var bad error
		f := strings.Fields(os.Expand(line, func(k string) string {
			v, ok := vars[k]
			if !ok {
				bad = fmt.Errorf("stage %q: unknown variable $%s", line, k)
			}
			return v
		}))
		if bad != nil {
			return nil, bad
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("stage %q: %d fields, want NAME CLI BROKER RUN SKIP", line, len(f))
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("stage %s: listed twice", f[0])
		}
		seen[f[0]] = true
		out = append(out, stage{f[0], f[1], f[2], f[3], f[4]})
	}
	return out, nil
}

// selection narrows the stages down: ACC_STAGES, BROKERS (or BROKER),
// TF_ACC_CLIS and ACC_RESIL.
type selection struct {
	stages, brokers, clis []string
	noResil               bool
}

// normalCLIs spells tofu and opentofu alike: opentofu.
func normalCLIs(s string) []string {
	out := strings.Fields(s)
	for i, c := range out {
		if c == "tofu" || strings.HasPrefix(c, "tofu@") {
			out[i] = "open" + c
		}
	}
	return out
}

// cliIs says whether a stage's CLI (terraform@1.16.4) is the one wanted
// (terraform@1.16.4 or terraform).
func cliIs(cli, want string) bool {
	return cli == want || strings.SplitN(cli, "@", 2)[0] == want
}

func (s selection) wantsCLI(cli string) bool {
	return len(s.clis) == 0 || slices.ContainsFunc(s.clis, func(w string) bool { return cliIs(cli, w) })
}

// pick returns the stages s selects from all, in their order. A CLI and
// broker asked for that no stage covers get a stage running the whole suite
// (the CLI: those of TF_ACC_CLIS, else terraform when no stage runs on that
// broker at all).
func (s selection) pick(all []stage) []stage {
	if s.noResil {
		all = slices.DeleteFunc(slices.Clone(all), func(st stage) bool { return st.name == "resil" })
	}
	var out []stage
	for _, st := range all {
		if (len(s.stages) > 0 && !slices.Contains(s.stages, st.name)) ||
			(len(s.brokers) > 0 && !slices.Contains(s.brokers, st.broker)) || !s.wantsCLI(st.cli) {
			continue
		}
		out = append(out, st)
	}
	clis := s.clis
	if len(clis) == 0 {
		clis = []string{"terraform"}
	}
	for _, b := range s.brokers {
		onB := slices.ContainsFunc(all, func(st stage) bool { return st.broker == b })
		for _, cli := range clis {
			has := slices.ContainsFunc(all, func(st stage) bool { return st.broker == b && cliIs(st.cli, cli) })
			if !has && (len(s.clis) > 0 || !onB) {
				out = append(out, stage{cli + "-" + b, cli, b, "TestAcc", ownTests})
			}
		}
	}
	return out
}

// neededBrokers are the brokers of stages, each once, in their order.
func neededBrokers(stages []stage) []string {
	var out []string
	for _, st := range stages {
		if st.broker != "-" && !slices.Contains(out, st.broker) {
			out = append(out, st.broker)
		}
	}
	return out
}
