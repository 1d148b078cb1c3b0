package provider

import (
	"context"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Each cause of a failed broker call reads the same wherever it happens: the table drives every
// cause through Create, Read, Update (the re-declaration of q), Delete, the live data source, the
// list resource and both actions (their management API check), in process against the fake, and
// asserts the one summary of the cause. Where a cause is no error by design, the row says what
// happens instead.

// causeSetup arranges a cause: the endpoint that meets it, the vhost to use and the request timeout
// (0: the default).
type causeSetup func(t *testing.T) (endpoint, vhost string, timeout time.Duration)

// Outcomes that are no error by design.
const (
	outcomeRemoved = "removed from state"
	outcomeNone    = "no error"
)

func TestFailureSummaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cause  string
		setup  causeSetup
		want   string
		except map[string]string // operation: what it does instead, by design
	}{
		{"unreachable", func(t *testing.T) (string, string, time.Duration) {
			return "http://" + brokertest.ClosedAddr(t), "/", 0
		}, summaryUnreachable, nil},
		{"refused login", refusing(http.StatusUnauthorized, "Login failed"), summaryNotAuthorized, nil},
		{"forbidden", refusing(http.StatusForbidden, "Access refused."), summaryNotAuthorized, nil},
		{"not found", func(t *testing.T) (string, string, time.Duration) {
			return brokertest.New(t).URL, "missing", 0
		}, summaryVhostNotFound, map[string]string{
			// A refresh of a queue whose vhost is gone removes it, and a destroy counts it deleted.
			"read": outcomeRemoved, "delete": outcomeNone,
			// An action names the queue it did not find, and moves nothing.
			"redrive": "Queue Not Found", "purge": "Queue Not Found",
		}},
		// A fake that holds every request until the test ends, past a request timeout of 50ms: each
		// attempt ends at its own timeout, whatever the machine's speed.
		{"timeout", func(t *testing.T) (string, string, time.Duration) {
			s := brokertest.New(t)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			s.Intercept(func(http.ResponseWriter, *http.Request) bool {
				<-release
				return true
			})
			return s.URL, "/", 50 * time.Millisecond
		}, summaryUnreachable, nil},
		// An https fake whose certificate the client does not trust.
		{"TLS refused", func(t *testing.T) (string, string, time.Duration) {
			return brokertest.NewTLS(t, nil).URL, "/", 0
		}, summaryUnreachable, nil},
	} {
		t.Run(tc.cause, func(t *testing.T) {
			t.Parallel()
			for op, run := range causeOperations {
				endpoint, vhost, timeout := tc.setup(t)
				data := fakeData(t, endpoint)
				data.brokerConfig.RequestTimeout = timeout
				want := tc.want
				if w, ok := tc.except[op]; ok {
					want = w
				}
				if got := run(t, data, vhost); got != want {
					t.Errorf("%s: %q, want %q", op, got, want)
				}
			}
		})
	}
}

// causeOperations run one operation on queue q and say how it ended: the summary of its one error,
// or an outcome.
var causeOperations = map[string]func(t *testing.T, data *providerData, vhost string) string{
	"create": func(t *testing.T, data *providerData, vhost string) string {
		r, plan := queueState(t, data, vhost, "1m")
		resp := resource.CreateResponse{State: tfsdk.State{Schema: plan.Schema}}
		r.Create(context.Background(), resource.CreateRequest{Plan: tfsdk.Plan(plan)}, &resp)
		return outcome(t, resp.Diagnostics, false)
	},
	"read": func(t *testing.T, data *providerData, vhost string) string {
		r, st := queueState(t, data, vhost, "1m")
		resp := resource.ReadResponse{State: st}
		r.Read(context.Background(), resource.ReadRequest{State: st}, &resp)
		return outcome(t, resp.Diagnostics, resp.State.Raw.IsNull())
	},
	"update": func(t *testing.T, data *providerData, vhost string) string {
		r, st := queueState(t, data, vhost, "1m")
		_, plan := queueState(t, data, vhost, "2m")
		resp := resource.UpdateResponse{State: st}
		r.Update(context.Background(), resource.UpdateRequest{State: st, Plan: tfsdk.Plan(plan)}, &resp)
		return outcome(t, resp.Diagnostics, false)
	},
	"delete": func(t *testing.T, data *providerData, vhost string) string {
		r, st := queueState(t, data, vhost, "1m")
		resp := resource.DeleteResponse{State: st}
		r.Delete(context.Background(), resource.DeleteRequest{State: st}, &resp)
		return outcome(t, resp.Diagnostics, false)
	},
	// The data source's Read reads the vhost's hold queues here, after checks of its configuration.
	"hold queues": func(t *testing.T, data *providerData, vhost string) string {
		_, d := (&holdQueuesDataSource{configuredDataSource{data: data}}).listHoldQueues(context.Background(), vhost, "q")
		return outcome(t, d, false)
	},
	"list": func(t *testing.T, data *providerData, vhost string) string {
		var diags diag.Diagnostics
		for _, res := range listOn(t, data, vhost, "", 10) {
			diags.Append(res.Diagnostics...)
		}
		return outcome(t, diags, false)
	},
	"redrive": func(t *testing.T, data *providerData, vhost string) string {
		d, _ := invokeDiags(t, NewRedriveDeadLettersAction(), data, map[string]tftypes.Value{"queue": str("q"), "vhost": str(vhost)})
		return outcome(t, d, false)
	},
	"purge": func(t *testing.T, data *providerData, vhost string) string {
		d, _ := invokeDiags(t, NewPurgeDeadLettersAction(), data, map[string]tftypes.Value{"queue": str("q"), "vhost": str(vhost)})
		return outcome(t, d, false)
	},
}

// outcome is the summary of the one error of diags, else outcomeRemoved or outcomeNone.
func outcome(t *testing.T, diags diag.Diagnostics, removed bool) string {
	t.Helper()
	errs := diags.Errors()
	if len(errs) > 1 {
		t.Errorf("%d errors, want one: %s", len(errs), diagText(diags))
	}
	if len(errs) > 0 {
		return errs[0].Summary()
	}
	return map[bool]string{true: outcomeRemoved, false: outcomeNone}[removed]
}

// refusing is a fake that answers every request with status and reason.
func refusing(status int, reason string) causeSetup {
	return func(t *testing.T) (string, string, time.Duration) {
		s := brokertest.New(t)
		s.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
			brokertest.ErrorBody(w, status, "not_authorised", reason)
			return true
		})
		return s.URL, "/", 0
	}
}

// queueState is queuey_queue configured with data, and its state (or plan) of queue q in vhost with
// message_ttl ttl. arguments_json is left null: Create and Update compute it from the rest, and every
// operation here stops at its first call to the broker.
func queueState(t *testing.T, data *providerData, vhost, ttl string) (*queueResource, tfsdk.State) {
	t.Helper()
	var sr resource.SchemaResponse
	r := &queueResource{data: data}
	r.Schema(context.Background(), resource.SchemaRequest{}, &sr)
	no := tftypes.NewValue(tftypes.Bool, false)
	return r, tfsdk.State(configOf(t, tfsdk.Config{Schema: sr.Schema}, map[string]tftypes.Value{
		"id": str(queueID(vhost, "q")), "name": str("q"), "vhost": str(vhost), "message_ttl": str(ttl),
		"force_destroy": no, "keep_messages_on_change": no, "dead_queue": str("q.dead"),
	}))
}

// configOf is c with a configuration of these attribute values (the others null), of c's schema.
func configOf(t *testing.T, c tfsdk.Config, vals map[string]tftypes.Value) tfsdk.Config {
	t.Helper()
	obj := c.Schema.Type().TerraformType(context.Background()).(tftypes.Object) //nolint:forcetypeassert // a schema is an object
	all := map[string]tftypes.Value{}
	for name, at := range obj.AttributeTypes {
		all[name] = tftypes.NewValue(at, nil)
	}
	maps.Copy(all, vals)
	c.Raw = tftypes.NewValue(obj, all)
	return c
}
