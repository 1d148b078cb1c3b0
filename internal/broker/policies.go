package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
)

// Reading the policies of a vhost, which change what its queues do without changing a declaration
// (the rule of what they change is internal/topology's).

// PartialError is a policy read of which one listing was refused (Err, an *Error of kind
// ErrUnauthorized) while the other answered: the Policies returned with it hold the listing that
// answered, and nothing of the refused one. errors.Is finds both ErrPartial and ErrUnauthorized.
type PartialError struct {
	// Missing is "policies" or "operator policies": the listing refused.
	Missing string
	Err     error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("the vhost's %s could not be read: %v", e.Missing, e.Err)
}

func (e *PartialError) Unwrap() []error { return []error{ErrPartial, e.Err} }

// Policies returns the user policies and operator policies of vhost (GET /api/policies/{vhost} and
// /api/operator-policies/{vhost}; the management tag and access to the vhost suffice). They are
// read once per vhost for the client's life and shared by concurrent callers: the provider never
// writes a policy, so no write of its own makes the answer stale.
//
// The errors are typed: a vhost that does not exist wraps ErrNotFound; a read refused (401, 403, or
// 4.3's 404 for a vhost the user cannot access) wraps ErrUnauthorized, so that a caller tells "the
// check could not run" by errors.Is alone. A refusal is kept for the client's life like an answer
// (the provider grants no permission, so asking again would be refused again); any other failure
// is not kept. One listing refused and the other answered returns what answered and a
// *PartialError.
func (c *Client) Policies(ctx context.Context, vhost string) (Policies, error) {
	r, err := c.policies.do(ctx, vhost, kept, func(ctx context.Context) (policyRead, error) {
		p, err := c.policiesNow(ctx, vhost)
		if err != nil && !errors.Is(err, ErrUnauthorized) {
			return policyRead{}, err
		}
		return policyRead{p, err}, nil
	})
	if err != nil {
		return Policies{}, err
	}
	return r.p, r.err
}

// policiesNow reads both listings of vhost at once.
func (c *Client) policiesNow(ctx context.Context, vhost string) (Policies, error) {
	type listing struct {
		list []Policy
		err  error
	}
	opch := make(chan listing, 1)
	go func() {
		list, err := c.policyListing(ctx, vhost, "operator-policies", "operator policies")
		opch <- listing{list, err}
	}()
	user, uerr := c.policyListing(ctx, vhost, "policies", "policies")
	op := <-opch
	return joinPolicies(user, uerr, op.list, op.err)
}

// joinPolicies makes one answer of the two listings: an error that is not a refusal wins, then a
// refusal of both; a refusal of one is a PartialError beside the other.
func joinPolicies(user []Policy, uerr error, op []Policy, operr error) (Policies, error) {
	for _, err := range []error{uerr, operr} {
		if err != nil && !errors.Is(err, ErrUnauthorized) {
			return Policies{}, err
		}
	}
	switch {
	case uerr != nil && operr != nil:
		return Policies{}, uerr
	case uerr != nil:
		return Policies{Operator: op}, &PartialError{Missing: "policies", Err: uerr}
	case operr != nil:
		return Policies{User: user}, &PartialError{Missing: "operator policies", Err: operr}
	}
	return Policies{User: user, Operator: op}, nil
}

// policyListing reads one listing (path "policies" or "operator-policies") of vhost.
func (c *Client) policyListing(ctx context.Context, vhost, path, what string) ([]Policy, error) {
	var raw []rawPolicy
	op := fmt.Sprintf("reading the %s of vhost %q", what, vhost)
	if err := c.getJSON(ctx, op, path+"/"+url.PathEscape(vhost), &raw); err != nil {
		return nil, c.confirmNotFound(ctx, vhost, err)
	}
	out := make([]Policy, 0, len(raw))
	for _, r := range raw {
		p := Policy(r)
		if p.ApplyTo == "" {
			p.ApplyTo = "all"
		}
		if p.Definition == nil {
			p.Definition = map[string]any{}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// rawPolicy is one element of a policy listing; do decodes its numbers as json.Number.
type rawPolicy struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}
