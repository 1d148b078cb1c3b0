package provider

// Parsing shared by the functions and the pure data sources; the rules live in topology.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// Keys of the functions' options map.
const (
	optionDeadSuffix     = "dead_suffix"
	optionDeferredSuffix = "deferred_suffix"
	optionGranularity    = "granularity"
)

// optionKeys lists the keys in the docs' order.
var optionKeys = []string{optionDeadSuffix, optionDeferredSuffix, optionGranularity}

// functionOptions are the settings a function call names queues with.
type functionOptions struct {
	suffixes    topology.Suffixes
	granularity time.Duration
}

// optionsParameter is the trailing, variadic options parameter of the functions that compute names.
func optionsParameter() function.MapParameter {
	return function.MapParameter{
		Name:        "options",
		ElementType: types.StringType,
		MarkdownDescription: "Optional map of settings, for deployments that do not use the defaults. Accepted keys: " +
			"`dead_suffix` (defaults to `" + topology.DefaultDeadSuffix + "`), `deferred_suffix` (defaults to `" +
			topology.DefaultDeferredSuffix + "`) and `granularity` (a Go duration, a whole number of milliseconds from `1ms` to `" +
			fmt.Sprintf("%dms", topology.MaxDeferralMs) + "`; defaults to `1s`). Any other key is an error, a null value " +
			"means the default, and at most one options map may be given. Set them to the values your application's " +
			"backend uses.",
	}
}

// parseFunctionOptions turns the options arguments into settings; first is their position.
func parseFunctionOptions(opts []map[string]*string, first int64) (functionOptions, *function.FuncError) {
	return parseOptions(opts, first, optionKeys)
}

// parseOptions is parseFunctionOptions for a function that accepts only the keys in keys.
func parseOptions(opts []map[string]*string, first int64, keys []string) (functionOptions, *function.FuncError) {
	o := functionOptions{suffixes: topology.DefaultSuffixes(), granularity: topology.DefaultGranularity}
	if len(opts) == 0 {
		return o, nil
	}
	if len(opts) > 1 {
		return o, function.NewArgumentFuncError(first+1, fmt.Sprintf(
			"options may be given at most once, but the call passes %d options maps; merge them into one map with the keys %s",
			len(opts), strings.Join(keys, ", ")))
	}
	m := opts[0]
	var unknown []string
	for k := range m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return o, function.NewArgumentFuncError(first, fmt.Sprintf(
			"options has the unknown key(s) %s; the keys accepted are %s", strings.Join(unknown, ", "), strings.Join(keys, ", ")))
	}
	if v := m[optionDeadSuffix]; v != nil {
		o.suffixes.Dead = *v
	}
	if v := m[optionDeferredSuffix]; v != nil {
		o.suffixes.Deferred = *v
	}
	if err := o.suffixes.Validate(); err != nil {
		return o, function.NewArgumentFuncError(first, "options: "+err.Error())
	}
	if v := m[optionGranularity]; v != nil {
		g, err := parseGranularity("options.granularity", *v)
		if err != nil {
			return o, function.NewArgumentFuncError(first, err.Error())
		}
		o.granularity = g
	}
	return o, nil
}

// parseDuration parses a Go duration; name is reported, rangeText states the values it may take.
func parseDuration(name, value, rangeText string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil {
		return 0, fmt.Errorf("%s must be a Go duration string such as \"30s\", \"1m30s\" or \"250ms\" (units ns, us, ms, s, m, h), %s; got %q",
			name, rangeText, value)
	}
	return d, nil
}

func parseGranularity(name, value string) (time.Duration, error) {
	g, err := parseDuration(name, value, granularityRange())
	if err != nil {
		return 0, err
	}
	if err := topology.ValidateGranularity(name, g); err != nil {
		return 0, err
	}
	return g, nil
}

func granularityRange() string {
	return fmt.Sprintf("a whole number of milliseconds from 1ms to %dms", topology.MaxDeferralMs)
}

func messageTTLRange() string {
	return fmt.Sprintf("a whole number of milliseconds from 0ms to %dms", topology.MaxTTLMs)
}

func delayRange(g time.Duration) string {
	return fmt.Sprintf("from 0s to %s (the longest hold at granularity %s)",
		topology.FormatWhole(topology.LongestDelay(g)), topology.FormatWhole(g))
}

// delayRangeAnyGranularity states the delays accepted before the granularity is known.
func delayRangeAnyGranularity() string {
	return fmt.Sprintf("from 0s to the longest hold: %s at the default granularity of %s, and never more than %s",
		topology.FormatWhole(topology.LongestDelay(topology.DefaultGranularity)),
		topology.FormatWhole(topology.DefaultGranularity),
		topology.FormatWhole(topology.LongestDelay(time.Millisecond)))
}

// checkQueueAttr reports a refused logical queue name at a data source's queue attribute.
func checkQueueAttr(queue string, s topology.Suffixes) diag.Diagnostics {
	var diags diag.Diagnostics
	if err := topology.ValidateQueueName(queue, s); err != nil {
		diags.AddAttributeError(path.Root("queue"), "Invalid Queue Name", queueNameError(err, s))
	}
	return diags
}

// holdQueueFor returns queue's hold queue for a TTL that topology.DeferredTTLMs gave.
func holdQueueFor(queue string, ttl int64, s topology.Suffixes) (topology.HoldQueue, diag.Diagnostics) {
	var diags diag.Diagnostics
	hold, err := topology.HoldForTTL(queue, ttl, s)
	if err != nil {
		diags.AddError("Cannot Compute Hold Queue", err.Error()+". This is a bug in the provider; please report it.")
	}
	return hold, diags
}

// queueNameFuncError is queueNameError for a function argument (Terraform adds the period).
func queueNameFuncError(err error, s topology.Suffixes) string {
	return strings.TrimSuffix(queueNameError(err, s), ".")
}

// queueNameError explains a refused queue name and the names these suffixes accept.
func queueNameError(err error, s topology.Suffixes) string {
	return fmt.Sprintf("%s. The queue name must be 1 to %d bytes long with dead_suffix %q and deferred_suffix %q "+
		"(%d with the defaults), and must not start with %q.",
		err, s.MaxNameBytes(), s.Dead, s.Deferred, topology.DefaultSuffixes().MaxNameBytes(), topology.ReservedPrefix)
}

func queueParameter() function.StringParameter {
	return function.StringParameter{
		Name:                "queue",
		MarkdownDescription: queueNameDescription("the suffixes in use"),
	}
}
