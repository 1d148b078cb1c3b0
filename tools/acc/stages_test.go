package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var testVersions = cliVersions{"v1.16.4", "v1.8.5", "v1.12.6", "v1.10.10"}

// allStages are the stages of the table (TestParseStages fails when it does not parse).
func allStages() []stage { all, _ := parseStages(stageLines, testVersions.vars()); return all }

// Every stage names a CLI of the matrix and a broker of the plan, and a
// stage on a broker anyone may use leaves out the tests that need their own
// (a fault stage runs only the fault tests).
func TestStageTable(t *testing.T) {
	cli := regexp.MustCompile(`^(terraform|opentofu)(@[0-9]+\.[0-9]+\.[0-9]+)?$`)
	for _, st := range allStages() {
		if !cli.MatchString(st.cli) {
			t.Errorf("stage %s: CLI %q is none of terraform, opentofu, terraform@V, opentofu@V", st.name, st.cli)
		}
		if st.broker == "-" {
			continue
		}
		b, err := brokerNamed(st.broker)
		if err != nil {
			t.Errorf("stage %s: %v", st.name, err)
			continue
		}
		if b.name == "3.10" || b.name == "4.0" || b.name == "4.3" {
			if st.skip != ownTests && st.run != faultTests {
				t.Errorf("stage %s on the shared broker %s skips %q, want the tests that need their own broker", st.name, b.name, st.skip)
			}
		}
	}
}

func TestParseStages(t *testing.T) {
	vars := testVersions.vars()
	for _, tc := range []struct {
		lines []string
		want  string // the error, "" for none
	}{
		{[]string{"a $tf_newest 3.10 TestAcc $own"}, ""},
		{stageLines, ""},
		{[]string{"a terraform 3.10 TestAcc"}, "4 fields"},
		{[]string{"a $tf_newer 3.10 TestAcc -"}, "unknown variable $tf_newer"},
		{[]string{"a terraform 3.10 TestAcc -", "a opentofu 4.3 TestAcc -"}, "listed twice"},
	} {
		_, err := parseStages(tc.lines, vars)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("parseStages(%q) = %v, want %q", tc.lines, err, tc.want)
		}
	}
	got, _ := parseStages([]string{"a $tofu_oldest - . TestAcc"}, vars)
	if want := (stage{"a", "opentofu@1.10.10", "-", ".", "TestAcc"}); got[0] != want {
		t.Errorf("got %v, want %v", got[0], want)
	}
}

func TestPick(t *testing.T) {
	all := allStages()
	for _, tc := range []struct {
		name string
		sel  selection
		want string // the stages' names
	}{
		{"everything", selection{}, "resil terraform-3.10 terraform-4.0 terraform-4.3 terraform-newest-3.10 terraform-newest-4.3 " +
			"terraform-oldest-3.10 opentofu-4.3 opentofu-oldest-4.0 opentofu-unit node-quorum-4.3 oauth-3.10 oauth-4.3 oauth-4.3-newest oauth-4.3-tofu faults-3.10 faults-4.3"},
		{"ACC_RESIL=0", selection{stages: []string{"resil", "terraform-4.0"}, noResil: true}, "terraform-4.0"},
		{"by name", selection{stages: []string{"oauth-4.3", "terraform-3.10"}}, "terraform-3.10 oauth-4.3"},
		{"by broker", selection{brokers: []string{"4.0"}}, "terraform-4.0 opentofu-oldest-4.0"},
		{"broker and CLI", selection{brokers: []string{"4.3"}, clis: []string{"opentofu"}}, "opentofu-4.3"},
		{"one CLI version", selection{brokers: []string{"4.3"}, clis: []string{"terraform@1.16.4"}}, "terraform-newest-4.3 faults-4.3"},
		{"a CLI no stage runs on the broker", selection{brokers: []string{"4.0"}, clis: []string{"terraform@1.16.4"}}, "terraform@1.16.4-4.0"},
		{"a broker no stage uses", selection{brokers: []string{"3.13"}}, "terraform-3.13"},
		{"by stage and CLI", selection{stages: []string{"opentofu-unit", "terraform-3.10"}, clis: normalCLIs("tofu")}, "opentofu-unit"},
		{"nothing", selection{stages: []string{"no-such-stage"}}, ""},
	} {
		var got []string
		for _, st := range tc.sel.pick(all) {
			got = append(got, st.name)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: picked %q, want %q", tc.name, strings.Join(got, " "), tc.want)
		}
	}
	added := selection{brokers: []string{"3.13"}}.pick(all)[0]
	if added != (stage{"terraform-3.13", "terraform", "3.13", "TestAcc", ownTests}) {
		t.Errorf("the stage added for 3.13 is %v, want the whole suite but the tests of their own brokers", added)
	}
}

func TestNormalCLIs(t *testing.T) {
	got := normalCLIs("tofu opentofu terraform tofu@1.10.10")
	if want := []string{"opentofu", "opentofu", "terraform", "opentofu@1.10.10"}; !slices.Equal(got, want) {
		t.Errorf("normalCLIs = %q, want %q", got, want)
	}
}

func TestNeededBrokers(t *testing.T) {
	got := neededBrokers([]stage{{broker: "4.3"}, {broker: "-"}, {broker: "3.10"}, {broker: "4.3"}})
	if want := []string{"4.3", "3.10"}; !slices.Equal(got, want) {
		t.Errorf("neededBrokers = %q, want %q", got, want)
	}
}
