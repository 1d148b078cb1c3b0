package provider

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
)

// The configuration table of templates/index.md.tmpl (docs/index.md) has a
// row for every provider setting, and each row's environment variables and
// default are the ones the setting's schema description gives, so that the
// table cannot drift from the schema.
func TestDocsConfigTable(t *testing.T) {
	tmpl, err := os.ReadFile("../../templates/index.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	var resp provider.SchemaResponse
	(&queueyProvider{}).Schema(context.Background(), provider.SchemaRequest{}, &resp)
	descs := map[string]string{}
	for name, a := range resp.Schema.Attributes {
		descs[name] = a.GetMarkdownDescription()
	}
	oauth2, ok := resp.Schema.Blocks["oauth2"].(schema.SingleNestedBlock)
	if !ok {
		t.Fatal("the provider schema has no oauth2 block")
	}
	for name, a := range oauth2.Attributes {
		descs[name] = a.GetMarkdownDescription()
	}
	section := string(tmpl)
	section = section[strings.Index(section, "## Configuration"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	code := regexp.MustCompile("`([^`]+)`")
	cell := func(cells []string, i int) []string {
		var out []string
		for _, m := range code.FindAllStringSubmatch(cells[i], -1) {
			out = append(out, m[1])
		}
		return out
	}
	// nth is the value of a column for the i-th setting of a row: the
	// i-th when the column lists several, the only one when it lists one.
	nth := func(vals []string, i int) string {
		switch {
		case len(vals) == 1:
			return vals[0]
		case i < len(vals):
			return vals[i]
		}
		return ""
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 5 {
			continue
		}
		envs, defaults := cell(cells, 2), cell(cells, 3)
		names := cell(cells, 1)
		if names[0] == "oauth2" {
			names = names[1:] // "`oauth2` block: `token_url`, ..."
		}
		for i, name := range names {
			desc, ok := descs[name]
			if !ok {
				t.Errorf("the table names %q, which is no provider setting", name)
				continue
			}
			seen[name] = true
			if env := nth(envs, i); env != "" && !strings.Contains(desc, "`"+env+"`") {
				t.Errorf("%s: the table gives variable %s, its description does not", name, env)
			}
			if def := nth(defaults, i); def != "" && !strings.Contains(desc, "`"+def+"`") {
				t.Errorf("%s: the table gives default %s, its description does not", name, def)
			}
		}
	}
	for name := range descs {
		if !seen[name] {
			t.Errorf("provider setting %s has no row in the configuration table of templates/index.md.tmpl", name)
		}
	}
}
