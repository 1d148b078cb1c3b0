package brokertest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Policies on a real broker, for the acceptance tests that hold the provider's computation of the
// policies applying to a queue against the broker's own answer.

// PutPolicy creates or replaces a user policy of vhost; an empty ApplyTo is "all".
func (a *Admin) PutPolicy(ctx context.Context, vhost string, p Policy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return done(a.rh.PutPolicy(vhost, p.Name, rabbithole.Policy{Pattern: p.Pattern, ApplyTo: applyTo(p),
		Priority: p.Priority, Definition: p.Definition}))
}

// DeletePolicy deletes a user policy of vhost; a missing one counts as deleted.
func (a *Admin) DeletePolicy(ctx context.Context, vhost, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return goneIsDone(done(a.rh.DeletePolicy(vhost, name)))
}

// PutOperatorPolicy creates or replaces an operator policy of vhost; an empty ApplyTo is "all".
func (a *Admin) PutOperatorPolicy(ctx context.Context, vhost string, p Policy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return done(a.rh.PutOperatorPolicy(vhost, p.Name, rabbithole.OperatorPolicy{Pattern: p.Pattern, ApplyTo: applyTo(p),
		Priority: p.Priority, Definition: p.Definition}))
}

// DeleteOperatorPolicy deletes an operator policy of vhost; a missing one counts as deleted.
func (a *Admin) DeleteOperatorPolicy(ctx context.Context, vhost, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return goneIsDone(done(a.rh.DeleteOperatorPolicy(vhost, name)))
}

// applyTo is p's apply-to as sent: RabbitMQ refuses an empty one.
func applyTo(p Policy) string {
	if p.ApplyTo == "" {
		return "all"
	}
	return p.ApplyTo
}

func goneIsDone(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// ErrPolicyNotReported is a queue whose answer has no policy fields yet: they come with the queue's
// statistics, which the broker emits periodically, so a queue just declared has none. Ask again.
var ErrPolicyNotReported = errors.New("the broker reports no policy for the queue yet")

// QueuePolicy returns what the broker says applies to a queue: the names of its user policy and
// operator policy ("" for none; the broker answers null) and the effective definition, the two
// merged (numbers as json.Number, as broker.Policies decodes them). From a GET with statistics:
// one with disable_stats leaves these fields out before RabbitMQ 4.2.5. Since they are statistics,
// the answer lags a change of policy: a caller polls until it shows what the test arranged, and
// gets ErrPolicyNotReported before the queue's first statistics. A missing queue is an
// error IsNotFound tells.
func (a *Admin) QueuePolicy(ctx context.Context, vhost, name string) (policy, operatorPolicy string, effective map[string]any, err error) {
	var raw struct {
		Policy          *string        `json:"policy"`
		OperatorPolicy  *string        `json:"operator_policy"`
		EffectivePolicy map[string]any `json:"effective_policy_definition"`
	}
	path := "/api/queues/" + url.PathEscape(vhost) + "/" + url.PathEscape(name) +
		"?columns=name,policy,operator_policy,effective_policy_definition"
	if err := a.getJSON(ctx, path, &raw); err != nil {
		return "", "", nil, err
	}
	if raw.EffectivePolicy == nil {
		return "", "", nil, ErrPolicyNotReported
	}
	if raw.Policy != nil {
		policy = *raw.Policy
	}
	if raw.OperatorPolicy != nil {
		operatorPolicy = *raw.OperatorPolicy
	}
	return policy, operatorPolicy, raw.EffectivePolicy, nil
}

// getJSON decodes the answer of a GET of path (from /api/), numbers as json.Number; a non-2xx
// answer is a StatusError.
func (a *Admin) getJSON(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.rh.Endpoint+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(a.rh.Username, a.rh.Password)
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		e := rabbithole.ErrorResponse{StatusCode: resp.StatusCode}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return e
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	return dec.Decode(out)
}
