package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The rabbitmq_queue resources a moved block may name: cyrilgdn/rabbitmq's and rfd59/rabbitmq's.
const sourceQueueType = "rabbitmq_queue"

var sourceQueueProviders = map[string]bool{
	"registry.terraform.io/cyrilgdn/rabbitmq": true,
	"registry.opentofu.org/cyrilgdn/rabbitmq": true,
	"registry.terraform.io/rfd59/rabbitmq":    true,
	"registry.opentofu.org/rfd59/rabbitmq":    true,
	// OpenTofu before 1.12 sends the implied local name instead of the address.
	"rabbitmq": true,
}

// sourceQueueSchemaVersion is rabbitmq_queue's schema version in both providers.
const sourceQueueSchemaVersion = 0

// isSourceQueue reports whether a moved block's source is a rabbitmq_queue.
func isSourceQueue(providerAddress, typeName string) bool {
	return typeName == sourceQueueType && sourceQueueProviders[strings.ToLower(providerAddress)]
}

// sourceQueueState is what a move reads of a rabbitmq_queue's state (SDKv2 JSON: settings a block
// list of at most one, arguments a map of strings, arguments_json a string; rfd59 adds type). Unset
// values may be null or empty.
type sourceQueueState struct {
	Name     *string               `json:"name"`
	Vhost    *string               `json:"vhost"`
	Type     *string               `json:"type"`
	Settings []sourceQueueSettings `json:"settings"`
}

type sourceQueueSettings struct {
	Durable       *bool          `json:"durable"`
	AutoDelete    *bool          `json:"auto_delete"`
	Arguments     map[string]any `json:"arguments"`
	ArgumentsJSON *string        `json:"arguments_json"`
}

// errSourceState is a rabbitmq_queue state this provider cannot read.
var errSourceState = errors.New("unreadable rabbitmq_queue state")

type sourceQueue struct {
	name, vhost string
	queue       topology.Existing
	// argsAttr is the settings attribute the arguments came from.
	argsAttr string
}

// parseSourceQueue decodes a rabbitmq_queue state; a decimal string ("5000") is that integer.
func parseSourceQueue(raw []byte) (sourceQueue, error) {
	var st sourceQueueState
	if err := decodeJSON(raw, &st); err != nil {
		return sourceQueue{}, fmt.Errorf("%w: %v", errSourceState, err)
	}
	if st.Name == nil || *st.Name == "" {
		return sourceQueue{}, fmt.Errorf("%w: it has no name", errSourceState)
	}
	if len(st.Settings) != 1 {
		return sourceQueue{}, fmt.Errorf("%w: it has %d settings blocks, where rabbitmq_queue always has one", errSourceState, len(st.Settings))
	}
	s := st.Settings[0]
	q := sourceQueue{name: *st.Name, vhost: "/", argsAttr: "settings.arguments"}
	if st.Vhost != nil && *st.Vhost != "" {
		q.vhost = *st.Vhost
	}
	if st.Type != nil {
		q.queue.Type = *st.Type
	}
	q.queue.Durable = s.Durable != nil && *s.Durable
	q.queue.AutoDelete = s.AutoDelete != nil && *s.AutoDelete
	args := s.Arguments
	if s.ArgumentsJSON != nil && *s.ArgumentsJSON != "" {
		if len(args) > 0 {
			return sourceQueue{}, fmt.Errorf("%w: both settings.arguments and settings.arguments_json are set, which rabbitmq_queue never allows", errSourceState)
		}
		if err := decodeJSON([]byte(*s.ArgumentsJSON), &args); err != nil {
			return sourceQueue{}, fmt.Errorf("%w: settings.arguments_json is not a JSON object: %v", errSourceState, err)
		}
		q.argsAttr = "settings.arguments_json"
	}
	q.queue.Arguments = numericStrings(args)
	return q, nil
}

// decodeJSON decodes one JSON value, keeping numbers as json.Number.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// numericStrings turns decimal integer strings into numbers: settings.arguments holds strings.
func numericStrings(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if s, ok := v.(string); ok {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				v = json.Number(s)
			}
		}
		out[k] = v
	}
	return out
}

// movedQueueModel is the queuey_queue state of a source queue the backend could have declared, or
// the mismatches that prevent it. It does not depend on the provider's configuration (a move runs
// before it): dead_queue and the patterns are left to the refresh that follows, as after an import.
func movedQueueModel(q sourceQueue) (queueModel, []topology.Mismatch, error) {
	if err := topology.ValidateQueueNameForm(q.name); err != nil {
		return queueModel{}, nil, err
	}
	args, mismatches := topology.MainQueueArgs(q.queue)
	if len(mismatches) > 0 {
		return queueModel{}, mismatches, nil
	}
	m := queueModel{
		ID:               types.StringValue(queueID(q.vhost, q.name)),
		Name:             types.StringValue(q.name),
		Vhost:            types.StringValue(q.vhost),
		MessageTTL:       types.StringNull(),
		MaxPriority:      types.Int64Null(),
		ForceDestroy:     types.BoolValue(false),
		KeepMessages:     types.BoolValue(false),
		Redeclaring:      types.Int64Null(),
		DeadQueue:        types.StringNull(),
		ArgumentsJSON:    jsontypes.NewNormalizedValue(args.JSON()),
		HoldQueuePrefix:  types.StringNull(),
		HoldQueuePattern: types.StringNull(),
		QueuesPattern:    types.StringNull(),
		WritePattern:     types.StringNull(),
	}
	if v, ok := args[topology.ArgMessageTTL]; ok {
		m.MessageTTL = types.StringValue(shortDuration(time.Duration(v.Int64()) * time.Millisecond))
	}
	if v, ok := args[topology.ArgMaxPriority]; ok {
		m.MaxPriority = types.Int64Value(v.Int64())
	}
	return m, nil, nil
}

// mismatchLines renders a source queue's differences, naming the rabbitmq_queue attribute of each.
func mismatchLines(q sourceQueue, mismatches []topology.Mismatch) []string {
	lines := make([]string, 0, len(mismatches))
	for _, m := range mismatches {
		attr := q.argsAttr + " " + strconv.Quote(m.Field)
		switch m.Field {
		case "durable", "auto_delete", "exclusive":
			attr = "settings." + m.Field
		case "type":
			attr = "type"
		}
		lines = append(lines, fmt.Sprintf("%s: rabbitmq_queue has %s, the backend declares %s", attr, m.Broker, m.Wanted))
	}
	return lines
}

// moveFromRabbitMQQueue takes over a rabbitmq_queue's state; other sources are left alone.
func moveFromRabbitMQQueue(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if !isSourceQueue(req.SourceProviderAddress, req.SourceTypeName) {
		return
	}
	const summary = "Cannot Move rabbitmq_queue"
	if req.SourceSchemaVersion != sourceQueueSchemaVersion {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("The state of rabbitmq_queue from %s has schema version %d; queuey_queue reads version %d only. "+
			"Nothing was moved. Remove the moved block and import the queue instead (terraform import queuey_queue.NAME 'VHOST/NAME').",
			req.SourceProviderAddress, req.SourceSchemaVersion, sourceQueueSchemaVersion))
		return
	}
	q, err := parseRawSource(req.SourceRawState)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error()+". Nothing was moved. Remove the moved block and import the queue instead "+
			"(terraform import queuey_queue.NAME 'VHOST/NAME').")
		return
	}
	m, mismatches, err := movedQueueModel(q)
	if err != nil {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("rabbitmq_queue name: %v. queuey_queue cannot manage it; nothing was moved. "+
			"Remove the moved block and keep the rabbitmq_queue resource.", err))
		return
	}
	if len(mismatches) > 0 {
		resp.Diagnostics.AddError("Cannot Move rabbitmq_queue: Queue Differs From The Backend's Declaration", fmt.Sprintf(
			"Queue %q in vhost %q is not the queue the queuey backend declares (durable, not auto-delete, classic, with no argument "+
				"but %s and %s), so the application's declaration would fail against it:\n  - %s\n"+
				"Nothing was moved. Remove the moved block and keep the rabbitmq_queue resource, or (after draining it) "+
				"delete the queue and let queuey_queue create it.",
			q.name, q.vhost, topology.ArgMessageTTL, topology.ArgMaxPriority, joinLines(mismatchLines(q, mismatches))))
		return
	}
	resp.Diagnostics.Append(resp.TargetState.Set(ctx, &m)...)
	// The framework passes a null identity on, but the refresh after sets it: set the same one now.
	resp.Diagnostics.Append(setIdentity(ctx, resp.TargetIdentity, q.name, q.vhost)...)
}

// parseRawSource reads a rabbitmq_queue's raw state (JSON from Terraform and OpenTofu).
func parseRawSource(raw *tfprotov6.RawState) (sourceQueue, error) {
	if raw == nil || len(raw.JSON) == 0 {
		return sourceQueue{}, fmt.Errorf("%w: the state was not sent as JSON", errSourceState)
	}
	return parseSourceQueue(raw.JSON)
}
