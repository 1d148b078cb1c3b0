package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"regexp"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// checkEndpoint applies broker.ValidateEndpoint, the one endpoint rule.
func checkEndpoint(s string) error {
	_, err := broker.ValidateEndpoint(s)
	return err
}

// endpointValidator accepts an http or https URL with a host.
type endpointValidator struct{}

var _ validator.String = endpointValidator{}

func (endpointValidator) Description(context.Context) string {
	return "value must be an http or https URL"
}

func (v endpointValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (endpointValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := checkEndpoint(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Endpoint", err.Error())
	}
}

// parseDurationAttr parses a duration; a malformed one is durationSyntaxValidator's.
func parseDurationAttr(req validator.StringRequest) (time.Duration, bool) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return 0, false
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	return d, err == nil
}

// durationRange accepts a Go duration from min to max inclusive.
type durationRange struct{ min, max time.Duration }

var _ validator.String = durationRange{}

func durationBetween(lo, hi time.Duration) durationRange { return durationRange{min: lo, max: hi} }

func (v durationRange) Description(context.Context) string {
	return fmt.Sprintf("value must be a duration from %s to %s", v.min, v.max)
}

func (v durationRange) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v durationRange) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	d, ok := parseDurationAttr(req)
	if !ok {
		return
	}
	if d < v.min || d > v.max {
		resp.Diagnostics.AddAttributeError(req.Path, "Duration Out Of Range",
			fmt.Sprintf("%s must be from %s to %s; got %s.", req.Path, v.min, v.max, req.ConfigValue.ValueString()))
	}
}

// granularityValidator accepts a whole, positive number of ms up to the longest hold.
type granularityValidator struct{}

var _ validator.String = granularityValidator{}

func (granularityValidator) Description(context.Context) string {
	return fmt.Sprintf("value must be a whole number of milliseconds from 1ms to %dms", topology.MaxDeferralMs)
}

func (v granularityValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (granularityValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	d, ok := parseDurationAttr(req)
	if !ok {
		return
	}
	if err := topology.ValidateGranularity(req.Path.String(), d); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Granularity", err.Error())
	}
}

// queueNameValidator applies the name rules the suffixes do not change.
type queueNameValidator struct{}

var _ validator.String = queueNameValidator{}

func (queueNameValidator) Description(context.Context) string {
	return "value must be a non-empty queue name not starting with amq."
}

func (v queueNameValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (queueNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := topology.ValidateQueueNameForm(req.ConfigValue.ValueString()); err != nil {
		d := topology.DefaultSuffixes()
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Queue Name", fmt.Sprintf(
			"%s. The queue name must be 1 to %d bytes long with the default dead_suffix %q and deferred_suffix %q "+
				"(longer suffixes lower the limit), and must not start with %q.",
			err, d.MaxNameBytes(), d.Dead, d.Deferred, topology.ReservedPrefix))
	}
}

// vhostValidator refuses an empty vhost: the management API reads one as "every vhost".
type vhostValidator struct{}

var _ validator.String = vhostValidator{}

func (vhostValidator) Description(context.Context) string {
	return "value must be a vhost name, not empty"
}

func (v vhostValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (vhostValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || req.ConfigValue.ValueString() != "" {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Empty Vhost",
		fmt.Sprintf("%s must name a vhost, e.g. \"/\" (RabbitMQ's default vhost); leave it unset to use the provider's vhost.", req.Path))
}

// delayValidator accepts a non-negative duration (the longest hold is checked later).
type delayValidator struct{}

var _ validator.String = delayValidator{}

func (delayValidator) Description(context.Context) string {
	return "value must be a Go duration " + delayRangeAnyGranularity()
}

func (v delayValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (delayValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	name := req.Path.String()
	d, err := parseDuration(name, req.ConfigValue.ValueString(), delayRangeAnyGranularity())
	if err == nil && d < 0 {
		err = fmt.Errorf("%s must not be negative: it may be %s; got %s", name, delayRangeAnyGranularity(), d)
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Delay", err.Error()+".")
	}
}

// durationSyntaxValidator reports a string that is not a Go duration, stating the range.
type durationSyntaxValidator struct{ rangeText string }

var _ validator.String = durationSyntaxValidator{}

func (v durationSyntaxValidator) Description(context.Context) string {
	return "value must be a Go duration string, " + v.rangeText
}

func (v durationSyntaxValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v durationSyntaxValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := parseDuration(req.Path.String(), req.ConfigValue.ValueString(), v.rangeText); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Duration", err.Error()+".")
	}
}

// messageTTLValidator accepts a whole number of ms from 0 to topology.MaxTTLMs.
type messageTTLValidator struct{}

var _ validator.String = messageTTLValidator{}

func (messageTTLValidator) Description(context.Context) string {
	return "value must be " + messageTTLRange()
}

func (v messageTTLValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (messageTTLValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	d, ok := parseDurationAttr(req)
	if !ok {
		return
	}
	if _, err := topology.MessageTTLMs(d); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Message TTL",
			fmt.Sprintf("%s is refused: %s. Give %s.", req.Path, err, messageTTLRange()))
	}
}

// regexError explains an invalid name_regex.
func regexError(err error) string {
	return fmt.Sprintf("name_regex must be a regular expression in RE2 syntax (Go's regexp), e.g. \"^orders\": %v", err)
}

// regexValidator accepts an RE2 regular expression.
type regexValidator struct{}

func (regexValidator) Description(context.Context) string {
	return "value must be a regular expression in RE2 syntax"
}

func (v regexValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (regexValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := regexp.Compile(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Regular Expression", regexError(err))
	}
}

type amqpEndpointValidator struct{}

var _ validator.String = amqpEndpointValidator{}

func (amqpEndpointValidator) Description(context.Context) string {
	return "an amqp or amqps URL without credentials or path"
}

func (v amqpEndpointValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (amqpEndpointValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := mover.ValidateEndpoint(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid AMQP Endpoint", amqpEndpointText(err))
	}
}
