package provider

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// errorMatching returns a regular expression that finds each phrase, in
// order, in Terraform's output. The words of a phrase may be separated by any
// whitespace, since Terraform wraps long error messages.
//
// The phrases, quoted, are joined with NULs, which become .* with the blanks
// around them; QuoteMeta leaves blanks alone, so each other run of them
// becomes \s+.
func errorMatching(phrases ...string) *regexp.Regexp {
	quoted := regexp.MustCompile(`\s*\x00\s*`).ReplaceAllString(regexp.QuoteMeta(strings.TrimSpace(strings.Join(phrases, "\x00"))), `.*`)
	return regexp.MustCompile(`(?s)` + regexp.MustCompile(`\s+`).ReplaceAllString(quoted, `\s+`))
}

func TestErrorMatchingToleratesWrapping(t *testing.T) {
	re := errorMatching("delay accepted is 2147483s", "half of")
	if !re.MatchString("the longest delay\naccepted is 2147483s (596h), because ... half\n of") {
		t.Fatalf("%s does not match wrapped text", re)
	}
}

func TestParseFunctionOptions(t *testing.T) {
	tests := []struct {
		name     string
		opts     []map[string]*string
		wantErr  string
		wantPos  int64
		suffixes topology.Suffixes
		g        time.Duration
	}{
		{name: "none", suffixes: topology.DefaultSuffixes(), g: time.Second},
		{name: "empty map", opts: []map[string]*string{{}}, suffixes: topology.DefaultSuffixes(), g: time.Second},
		{
			name:     "all keys",
			opts:     []map[string]*string{{"dead_suffix": new("-dlq"), "deferred_suffix": new("-wait-"), "granularity": new("1m")}},
			suffixes: topology.Suffixes{Dead: "-dlq", Deferred: "-wait-"},
			g:        time.Minute,
		},
		{
			name:     "null value means the default",
			opts:     []map[string]*string{{"dead_suffix": nil, "granularity": new("500ms")}},
			suffixes: topology.DefaultSuffixes(),
			g:        500 * time.Millisecond,
		},
		{
			name:    "unknown key",
			opts:    []map[string]*string{{"dead_sufix": new("-dlq")}},
			wantErr: `options has the unknown key(s) "dead_sufix"; the keys accepted are dead_suffix, deferred_suffix, granularity`,
			wantPos: 2,
		},
		{
			name:    "two options maps",
			opts:    []map[string]*string{{}, {}},
			wantErr: "options may be given at most once",
			wantPos: 3,
		},
		{
			name:    "deferred suffix ending in a digit",
			opts:    []map[string]*string{{"deferred_suffix": new("-wait1")}},
			wantErr: `deferred_suffix "-wait1" must not end in a digit`,
			wantPos: 2,
		},
		{
			name:    "equal suffixes",
			opts:    []map[string]*string{{"dead_suffix": new(".x."), "deferred_suffix": new(".x.")}},
			wantErr: "dead_suffix and deferred_suffix must differ",
			wantPos: 2,
		},
		{
			name:    "empty dead suffix",
			opts:    []map[string]*string{{"dead_suffix": new("")}},
			wantErr: "dead_suffix must not be empty",
			wantPos: 2,
		},
		{
			name:    "malformed granularity",
			opts:    []map[string]*string{{"granularity": new("soon")}},
			wantErr: `options.granularity must be a Go duration string such as "30s", "1m30s" or "250ms" (units ns, us, ms, s, m, h), a whole number of milliseconds from 1ms to 2147483647ms; got "soon"`,
			wantPos: 2,
		},
		{
			name:    "zero granularity",
			opts:    []map[string]*string{{"granularity": new("0s")}},
			wantErr: "options.granularity must be a positive whole number of milliseconds, from 1ms to 2147483647ms; got 0s",
			wantPos: 2,
		},
		{
			name:    "sub-millisecond granularity",
			opts:    []map[string]*string{{"granularity": new("1500us")}},
			wantErr: "options.granularity must be a whole number of milliseconds, from 1ms to 2147483647ms; got 1.5ms",
			wantPos: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ferr := parseFunctionOptions(tt.opts, 2)
			if tt.wantErr != "" {
				if ferr == nil {
					t.Fatalf("got %+v, want an error", o)
				}
				if !strings.Contains(ferr.Text, tt.wantErr) {
					t.Errorf("error %q does not contain %q", ferr.Text, tt.wantErr)
				}
				if ferr.FunctionArgument == nil || *ferr.FunctionArgument != tt.wantPos {
					t.Errorf("error points at argument %v, want %d", ferr.FunctionArgument, tt.wantPos)
				}
				return
			}
			if ferr != nil {
				t.Fatalf("unexpected error: %s", ferr)
			}
			if o.suffixes != tt.suffixes || o.granularity != tt.g {
				t.Errorf("got %+v, want suffixes %+v and granularity %s", o, tt.suffixes, tt.g)
			}
		})
	}
}

func TestHoldTTLErrors(t *testing.T) {
	if _, err := topology.DeferredTTLMs("retry_delays[2]", -time.Second, time.Second); err == nil ||
		err.Error() != "retry_delays[2] must not be negative: it may be from 0s to 2147483s (the longest hold at granularity 1s); got -1s" {
		t.Errorf("negative delay: %v", err)
	}
	if _, err := topology.DeferredTTLMs("retry_delays[2]", 2147484*time.Second, time.Second); err == nil ||
		!strings.HasPrefix(err.Error(), "retry_delays[2] 596h31m24s is past the longest hold: at granularity 1s the longest delay accepted is 2147483s") {
		t.Errorf("long delay: %v", err)
	}
	if ttl, err := topology.DeferredTTLMs("delay", 2147483647*time.Millisecond, time.Millisecond); err != nil || ttl != topology.MaxDeferralMs {
		t.Errorf("longest delay at 1ms: %d, %v", ttl, err)
	}
}

// Every attribute of the pure data sources and every parameter of the
// functions is documented in full sentences.
func TestPureDescriptions(t *testing.T) {
	ctx := t.Context()
	sentence := func(what, s string) {
		if s == "" || !strings.HasSuffix(strings.TrimRight(s, "`"), ".") {
			t.Errorf("%s: description %q is not a full sentence", what, s)
		}
	}
	var walk func(prefix string, attrs map[string]dsschema.Attribute)
	walk = func(prefix string, attrs map[string]dsschema.Attribute) {
		for name, a := range attrs {
			sentence(prefix+name, a.GetMarkdownDescription())
			if n, ok := a.(dsschema.NestedAttribute); ok {
				nested := map[string]dsschema.Attribute{}
				for k, v := range n.GetNestedObject().GetAttributes() {
					if da, ok := v.(dsschema.Attribute); ok {
						nested[k] = da
					}
				}
				walk(prefix+name+".", nested)
			}
		}
	}
	for _, newDS := range []func() datasource.DataSource{NewHoldQueueDataSource, NewTopologyDataSource, NewPolicyEffectsDataSource} {
		var resp datasource.SchemaResponse
		newDS().Schema(ctx, datasource.SchemaRequest{}, &resp)
		sentence("data source", resp.Schema.MarkdownDescription)
		walk("", resp.Schema.Attributes)
	}
	for _, newFn := range []func() function.Function{NewHoldQueueNameFunction, NewDeadQueueNameFunction, NewDeferredTTLMsFunction, NewHoldQueueArgumentsFunction, NewPolicyPatternExcludingFunction} {
		var meta function.MetadataResponse
		f := newFn()
		f.Metadata(ctx, function.MetadataRequest{}, &meta)
		var resp function.DefinitionResponse
		f.Definition(ctx, function.DefinitionRequest{}, &resp)
		d := resp.Definition
		sentence(meta.Name, d.Summary)
		sentence(meta.Name, d.MarkdownDescription)
		params := d.Parameters
		if d.VariadicParameter != nil {
			params = append(params, d.VariadicParameter)
		}
		for _, p := range params {
			if p.GetName() == "" {
				t.Errorf("%s: a parameter has no name", meta.Name)
			}
			sentence(meta.Name+"."+p.GetName(), p.GetMarkdownDescription())
		}
		var vresp function.DefinitionValidateResponse
		d.ValidateImplementation(ctx, function.DefinitionValidateRequest{FuncName: meta.Name}, &vresp)
		if vresp.Diagnostics.HasError() {
			t.Errorf("%s: %v", meta.Name, vresp.Diagnostics)
		}
	}
}

// Terraform ends a function's argument error with a period of its own: the
// text the functions give it must not end with one.
func TestQueueNameFuncError(t *testing.T) {
	t.Parallel()
	s := topology.DefaultSuffixes()
	for _, name := range []string{"", "amq.orders", strings.Repeat("q", 236)} {
		err := topology.ValidateQueueName(name, s)
		if err == nil {
			t.Fatalf("ValidateQueueName(%.20q) accepted it", name)
		}
		if got := queueNameFuncError(err, s); strings.HasSuffix(got, ".") || !strings.Contains(got, "1 to 235 bytes") {
			t.Errorf("queueNameFuncError for %.20q = %q: want the limit, and no final period", name, got)
		}
	}
}
