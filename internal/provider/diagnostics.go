package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// Every failed broker call, in every resource method, data source, list resource and action, reaches
// the user through addFailure: one error diagnostic whose summary names the cause and whose detail
// is the error with what to do next. The summary is decided by type, never by an error's text, so
// the same cause reads the same wherever it happens.

// Summaries of the causes that do not depend on the operation.
const (
	summaryInterrupted   = "Interrupted"
	summaryUnreachable   = "Management API Unreachable"
	summaryTokenEndpoint = "OAuth 2.0 Token Endpoint Unreachable"
	summaryNotAuthorized = "Not Authorized By The Management API"
	summaryWrongEndpoint = "Wrong Management API Endpoint"
	summaryVhostNotFound = "Vhost Not Found"
	summaryQueueNotFound = "Queue Not Found"
	summaryAMQPConnect   = "Cannot Connect Over AMQP"
	summaryUnavailable   = "RabbitMQ Cluster Unavailable" // a cluster that cannot act now
)

// connectingOverAMQP reports whether err is a failed AMQP connection (not an operation on one).
func connectingOverAMQP(err error) bool {
	e, ok := errors.AsType[*mover.Error](err)
	return ok && e.Connecting
}

// summarized is an error of the provider's own that carries its summary: a refusal or an
// interruption, whose summary says what was refused or where messages wait.
type summarized interface {
	error
	summary() string
}

// summarizedFirst is a summarized error whose summary comes before the cause's: a change
// interrupted with messages aside (interruptedError) says where they wait, whatever stopped it.
type summarizedFirst interface {
	summarized
	beforeCause()
}

// failureSummary is the summary of a failed call: how the broker was reached (connection,
// credentials, endpoint), else the provider's own refusal, else fallback, which names the operation.
// One state comes before the cause: a change interrupted with messages aside says where they wait.
func failureSummary(err error, fallback string) string {
	if s, ok := errors.AsType[summarizedFirst](err); ok {
		return s.summary()
	}
	if s := causeSummary(err); s != "" {
		return s
	}
	if s, ok := errors.AsType[summarized](err); ok {
		return s.summary()
	}
	return fallback
}

// causeSummary names a cause that any call can meet, or "" for one that belongs to the operation.
func causeSummary(err error) string {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return summaryInterrupted
	case connectingOverAMQP(err):
		return summaryAMQPConnect
	case errors.Is(err, mover.ErrNotFound):
		return summaryQueueNotFound
	case errors.Is(err, broker.ErrUnavailable):
		return summaryUnavailable
	case errors.Is(err, broker.ErrUnreachable):
		return summaryUnreachable
	case errors.Is(err, broker.ErrTokenEndpoint):
		return summaryTokenEndpoint
	case errors.Is(err, broker.ErrUnauthorized):
		return summaryNotAuthorized
	case errors.Is(err, broker.ErrNotHTTP), errors.Is(err, broker.ErrWrongScheme), errors.Is(err, broker.ErrNotAPI):
		return summaryWrongEndpoint
	}
	return ""
}

// addFailure reports err as one error diagnostic, on the attribute at when it is not empty.
func (d *providerData) addFailure(diags *diag.Diagnostics, at path.Path, err error, fallback string) {
	summary, detail := failureSummary(err, fallback), d.explain(err)
	if at.Equal(path.Empty()) {
		diags.AddError(summary, detail)
		return
	}
	diags.AddAttributeError(at, summary, detail)
}

// declareError is a refused declaration of one queue; the detail names the arguments when another
// declaration came first.
type declareError struct {
	queue topology.Queue
	err   error
}

func (e *declareError) Error() string {
	if errors.Is(e.err, broker.ErrArgumentsConflict) {
		return fmt.Sprintf("RabbitMQ refused to declare %q with arguments %s: a queue of that name now exists with different "+
			"arguments (it was probably declared by someone else since it was checked). %s", e.queue.Name, e.queue.Args.JSON(), errorText(e.err))
	}
	return errorText(e.err)
}

func (e *declareError) Unwrap() error { return e.err }

func (e *declareError) causeWorded() {}

// declare declares q in vhost; a failure is a *declareError.
func declare(ctx context.Context, c interface {
	DeclareQueue(ctx context.Context, vhost, name string, args map[string]any) error
}, vhost string, q topology.Queue) error {
	if err := c.DeclareQueue(ctx, vhost, q.Name, q.Args.Map()); err != nil {
		return &declareError{queue: q, err: err}
	}
	return nil
}

// vhostError is a vhost a queue cannot be declared in: missing, or making other queues than classic.
type vhostError struct {
	vhost    string
	endpoint string
	// missing: the vhost does not exist (or the user has no permissions in it).
	missing bool
	// queueType is the vhost's default queue type and setting where it comes from, when not missing.
	queueType, setting string
	err                error
}

func (e *vhostError) Error() string {
	if e.missing {
		return fmt.Sprintf("vhost %q does not exist at %s (or the user has no permissions in it). Create it first "+
			"(for example `rabbitmqctl add_vhost %q`) or set `vhost` to an existing one", e.vhost, e.endpoint, e.vhost)
	}
	return fmt.Sprintf("vhost %q makes %s queues by default (%s), but the queuey backend declares its queues "+
		"without x-queue-type and its hold queues rely on classic-queue expiry (x-expires, x-message-ttl dead-lettering). "+
		"Use a vhost whose default queue type is classic (`rabbitmqctl add_vhost NAME --default-queue-type classic`, "+
		"or `rabbitmqctl update_vhost_metadata %s --default-queue-type classic`)", e.vhost, e.queueType, e.setting, e.vhost)
}

func (e *vhostError) Unwrap() error { return e.err }

func (e *vhostError) causeWorded() {}

// vhostMissing is err as a *vhostError when it says that vhost is not found: a listing of the vhost,
// or a declaration in it, answered 404. An error of the provider's own (an interrupted change) keeps
// what it says.
func vhostMissing(c *broker.Client, vhost string, err error) error {
	if _, own := errors.AsType[summarized](err); !own && errors.Is(err, broker.ErrNotFound) {
		return &vhostError{vhost: vhost, endpoint: c.Endpoint(), missing: true, err: err}
	}
	return err
}

func (e *vhostError) summary() string {
	if e.missing {
		return summaryVhostNotFound
	}
	return "Cannot Use Vhost"
}
