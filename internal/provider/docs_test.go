package provider

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The documentation against the code: each table that states what the code
// does has one home and a test here (the configuration table's is
// TestDocsConfigTable), and no page links to a file or a heading that the
// repository lacks. See .github/CONTRIBUTING.md, "Documentation", and
// DESIGN.md, "Where each rule lives".

const repoRoot = "../.."

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableAfter returns the rows of the first Markdown table after marker in
// text, each a slice of trimmed cells; the first row is the header.
func tableAfter(t *testing.T, text, marker string) [][]string {
	t.Helper()
	_, after, _ := strings.Cut(text, marker)
	var rows [][]string
	for _, line := range strings.Split(tableLines.FindString(after), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "|---") {
			rows = append(rows, cellSeparator.Split(strings.TrimSpace(strings.Trim(line, "|")), -1))
		}
	}
	if len(rows) < 2 {
		t.Fatalf("no table after %q", marker)
	}
	return rows
}

var (
	// tableLines is the first run of lines that start with a cell border.
	tableLines = regexp.MustCompile(`(?m)(^[ \t]*\|.*(\n|$))+`)
	// cellSeparator is a Markdown table's cell border with the blanks around it.
	cellSeparator = regexp.MustCompile(`\s*\|\s*`)
)

// accStages are the lines of stageLines in tools/acc/table.go: each its name, CLI, broker and run.
var accStages = regexp.MustCompile(`(?m)^\s*(?:STAGES=\()?"([a-z0-9.-]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+[^"]*"`)

// The README's support table claims, for each RabbitMQ version and CLI,
// what a stage of tools/acc/table.go runs the whole acceptance suite on: its
// CLI columns are the machine's Terraform and the four versions of
// GNUmakefile, and each ✓ is a stage (and each such stage a ✓).
func TestDocsSupportTable(t *testing.T) {
	v := map[string]string{} // the CLI versions of GNUmakefile, without the v
	for _, m := range regexp.MustCompile(`(?m)^(TERRAFORM_NEWEST_VERSION|TERRAFORM_OLDEST_VERSION|OPENTOFU_VERSION|OPENTOFU_OLDEST_VERSION)\s*\?=\s*v?(\S+)`).
		FindAllStringSubmatch(readRepoFile(t, "GNUmakefile"), -1) {
		v[m[1]] = m[2]
	}
	rows := tableAfter(t, readRepoFile(t, "README.md"), "TestDocsSupportTable")
	header := rows[0]
	if header[0] != "RabbitMQ" {
		t.Fatalf("the support table's first column is %q, want RabbitMQ", header[0])
	}
	column := map[string]int{} // table.go CLI spelling -> column
	want := map[string]string{
		"$tf_newest": "Terraform " + v["TERRAFORM_NEWEST_VERSION"], "$tf_oldest": "Terraform " + v["TERRAFORM_OLDEST_VERSION"],
		"$tofu_newest": "OpenTofu " + v["OPENTOFU_VERSION"], "$tofu_oldest": "OpenTofu " + v["OPENTOFU_OLDEST_VERSION"],
	}
	for i, h := range header[1:] {
		found := false
		for cli, name := range want {
			if h == name {
				column[cli], found = i+1, true
			}
		}
		if !found {
			if _, dup := column["terraform"]; dup || !strings.HasPrefix(h, "Terraform ") {
				t.Errorf("column %q of the support table is none of GNUmakefile's CLI versions %v", h, v)
				continue
			}
			column["terraform"] = i + 1 // the machine's Terraform
		}
	}
	for cli, name := range want {
		if _, ok := column[cli]; !ok {
			t.Errorf("the support table has no column %q (GNUmakefile)", name)
		}
	}
	tested := map[[2]int]string{}
	for _, s := range accStages.FindAllStringSubmatch(readRepoFile(t, "tools/acc/table.go"), -1) {
		name, cli, rabbit, run := s[1], s[2], s[3], s[4]
		col, ok := column[cli]
		if !ok || run != "TestAcc" {
			continue // not a whole-suite stage of a CLI of the table
		}
		row := -1
		for i, r := range rows[1:] {
			if strings.HasPrefix(r[0], rabbit+".") {
				row = i + 1
			}
		}
		if row < 0 {
			t.Errorf("stage %s runs on RabbitMQ %s, which the support table has no row for", name, rabbit)
			continue
		}
		tested[[2]int{row, col}] = name
	}
	for i, r := range rows[1:] {
		for j := 1; j < len(r); j++ {
			stage, ok := tested[[2]int{i + 1, j}]
			switch {
			case r[j] == "✓" && !ok:
				t.Errorf("the support table claims RabbitMQ %s x %s, but no stage of tools/acc/table.go runs it", r[0], header[j])
			case r[j] != "✓" && ok:
				t.Errorf("stage %s runs RabbitMQ %s x %s, but the support table has no ✓ there", stage, r[0], header[j])
			}
		}
	}
}

// The stage table of .github/CONTRIBUTING.md has one row per stage of
// tools/acc/table.go, in any order.
func TestDocsStageTable(t *testing.T) {
	rows := tableAfter(t, readRepoFile(t, ".github/CONTRIBUTING.md"), "TestDocsStageTable")
	var documented, stages []string
	for _, r := range rows[1:] {
		documented = append(documented, strings.Trim(r[0], "`"))
	}
	for _, s := range accStages.FindAllStringSubmatch(readRepoFile(t, "tools/acc/table.go"), -1) {
		stages = append(stages, s[1])
	}
	sort.Strings(documented)
	sort.Strings(stages)
	if strings.Join(documented, " ") != strings.Join(stages, " ") {
		t.Errorf("CONTRIBUTING.md's stages %v, tools/acc/table.go's %v", documented, stages)
	}
}

// Every relative link of the README, CONTRIBUTING.md, DESIGN.md, the
// CHANGELOG, the bench's pages and the generated docs names a file of the repository, and a #heading of a
// Markdown file names one of its headings.
func TestDocsLinks(t *testing.T) {
	pages := []string{"README.md", ".github/CONTRIBUTING.md", "DESIGN.md", "CHANGELOG.md",
		"tools/bench/README.md", "tools/bench/crowded.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			pages = append(pages, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text := readRepoFile(t, page)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
					t.Errorf("%s links to %s, which the repository lacks", page, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !hasHeading(readRepoFile(t, path), anchor) {
				t.Errorf("%s links to %s: %s has no heading #%s", page, target, path, anchor)
			}
		}
	}
}

// hasHeading reports whether a Markdown text has a heading whose GitHub
// anchor is anchor, or an HTML anchor of that id (tfplugindocs writes those
// for nested attributes).
func hasHeading(text, anchor string) bool {
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	return strings.Contains(text, `id="`+anchor+`"`) ||
		slices.ContainsFunc(regexp.MustCompile(`(?m)^#+(.*)$`).FindAllStringSubmatch(text, -1), func(m []string) bool {
			return strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-") == anchor
		})
}

// DESIGN.md's "where each rule lives" table names files and Go declarations,
// and each must exist. The first cell's `internal/...` path sets the
// package of its row and the rows after it. A backticked name ending in .go
// is a file: a path from the repository's root when it has a slash, else a
// file of the row's package; `_x.go` is short for the previous file's stem
// plus _x.go (`resource_queue_checks.go`, `_read.go`); globs match at least
// one file. A backticked camelCase or PascalCase identifier, or a lowercase
// one followed by "in `file.go`", is a func, type, var or const declared in
// the row's package (in that file when one is named).
func TestDocsDesignTable(t *testing.T) {
	rows := tableAfter(t, readRepoFile(t, "DESIGN.md"), "## Where each rule lives")
	if len(rows[0]) != 2 || rows[0][0] != "package or file" {
		t.Fatalf("DESIGN.md's rule table has the header %v, want [package or file, holds]", rows[0])
	}
	code := regexp.MustCompile("`([^`]+)`( in `([^`]+\\.go)`)?")
	goName := regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*$`)
	pkg := ""
	for _, r := range rows[1:] {
		if first := code.FindStringSubmatch(r[0]); first != nil && strings.HasPrefix(first[1], "internal/") {
			pkg = first[1]
			if strings.HasSuffix(pkg, ".go") {
				pkg = filepath.Dir(pkg)
			}
		}
		if pkg == "" {
			t.Fatalf("row %q of DESIGN.md's rule table comes before any row naming an internal/ package", r[0])
		}
		for _, cell := range r {
			prev := ""
			for _, m := range code.FindAllStringSubmatch(cell, -1) {
				name := m[1]
				switch {
				case strings.HasSuffix(name, ".go"):
					switch {
					case strings.Contains(name, "/"):
						prev = name
					case strings.HasPrefix(name, "_") && prev != "":
						// The last _part of prev's name, if any, gives way to name.
						prev = regexp.MustCompile(`(_[a-z0-9]+)?\.go$`).ReplaceAllLiteralString(prev, name)
					default:
						prev = filepath.Join(pkg, name)
					}
					if !repoDeclares(prev, "") {
						t.Errorf("DESIGN.md's rule table names %s (%s), which the repository lacks", name, prev)
					}
				case goName.MatchString(name) && (strings.ToLower(name) != name || m[3] != ""):
					in := filepath.Join(pkg, "*.go")
					if m[3] != "" {
						in = filepath.Join(pkg, m[3])
					}
					if !repoDeclares(in, name) {
						t.Errorf("DESIGN.md's rule table names %s, which %s does not declare", name, in)
					}
				}
			}
		}
	}
}

// repoDeclares reports whether a file of the repository that the glob pattern matches exists and,
// unless name is empty, is not a test and declares name at top level: a func or method, a type, a
// var or a const.
func repoDeclares(pattern, name string) bool {
	files, _ := filepath.Glob(filepath.Join(repoRoot, pattern)) // the patterns are well formed
	decl := regexp.MustCompile(`(?m)^(func (\([^)]*\) )?|type |var |const )` + regexp.QuoteMeta(name) + `\b`)
	return slices.ContainsFunc(files, func(f string) bool {
		text, _ := os.ReadFile(f) // a file that cannot be read declares nothing
		return name == "" || !strings.HasSuffix(f, "_test.go") && decl.Match(text)
	})
}

// The Operating guide's table of limits against the code: each row's default
// is the value the code waits, and a row with a setting names a provider
// attribute whose description gives that default. The mover's dial bound and
// stall limit and the retry transport's defaults are unexported; internal/mover's
// TestDocsMoverLimits and internal/broker's TestDocsRetryLimits
// check their rows.
func TestDocsLimitsTable(t *testing.T) {
	limits := map[string]time.Duration{
		"One attempt of a request":                       broker.DefaultRequestTimeout,
		"Trying a request again":                         -1, // see TestDocsRetryLimits
		"Nothing answering at first contact":             -1, // see TestDocsRetryLimits
		"Remembering that an endpoint answered":          -1, // see TestDocsRetryLimits
		"Remembering a restart":                          -1, // see TestDocsRetryLimits
		"Recovery window after a restart":                -1, // see TestDocsRetryLimits
		"Confirming a `404`":                             -1, // see TestDocsRetryLimits
		"The plan's message check":                       warnTimeout,
		"Destroy waiting for counts and running queues":  countWait,
		"An AMQP connection":                             -1, // see internal/mover's TestDocsMoverLimits
		"A purge waiting for the management API's count": purgeWait,
		"A move waiting for a delivery or a confirm":     -1, // see internal/mover's TestDocsMoverLimits
	}
	var sr provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &sr)
	rows := tableAfter(t, readRepoFile(t, "docs/guides/operating.md"), "### Every limit")
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		name, def, setting := r[0], strings.Trim(r[1], "`"), strings.Trim(r[2], "`")
		want, ok := limits[name]
		seen[name] = true
		got, err := time.ParseDuration(def)
		switch {
		case !ok:
			t.Errorf("the table has %q, which this test does not know: add it here with the value the code waits", name)
		case err != nil:
			t.Errorf("%s: default %q is not a duration", name, r[1])
		case want >= 0 && got != want:
			t.Errorf("%s: the table says %s, the code waits %s", name, got, want)
		}
		if setting == "—" {
			continue
		}
		a, ok := sr.Schema.Attributes[setting]
		if !ok || !strings.Contains(a.GetMarkdownDescription(), "Defaults to `"+def+"`") {
			t.Errorf("%s: setting %q is not a provider attribute whose description says \"Defaults to `%s`\"", name, setting, def)
		}
	}
	for name := range limits {
		if !seen[name] {
			t.Errorf("the table lacks the limit %q", name)
		}
	}
}

// The policy guide's list of harmless keys is topology.HarmlessPolicyKeys, in its order.
func TestDocsPolicyGuide(t *testing.T) {
	text := readRepoFile(t, "docs/guides/policies.md")
	marker := "Harmless on every queue: "
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("docs/guides/policies.md has no %q", marker)
	}
	line, _, _ := strings.Cut(text[i+len(marker):], "\n")
	var keys []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
		keys = append(keys, m[1])
	}
	if strings.Join(keys, " ") != strings.Join(topology.HarmlessPolicyKeys, " ") {
		t.Errorf("the guide lists the harmless keys\n%v\nthe code has\n%v", keys, topology.HarmlessPolicyKeys)
	}
}
