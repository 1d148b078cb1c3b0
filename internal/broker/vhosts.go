package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Vhost is what the provider needs to know of a virtual host.
type Vhost struct {
	Name string
	// DefaultQueueType is "classic", "quorum", "stream", or "" when neither
	// the vhost nor the node sets one (RabbitMQ 3.10 reports "undefined"),
	// which means classic.
	DefaultQueueType string
	// FromNode: the vhost sets no default queue type and DefaultQueueType is
	// the node's (default_queue_type in rabbitmq.conf, RabbitMQ 3.13 and
	// later), which then applies to the vhost's queues.
	FromNode bool
}

// IsClassic reports whether queues declared without x-queue-type become
// classic queues in this vhost.
func (v Vhost) IsClassic() bool {
	return v.DefaultQueueType == "" || v.DefaultQueueType == "classic"
}

// GetVhost returns the vhost, or an error wrapping ErrNotFound. RabbitMQ lets
// only administrators read one vhost (anyone else gets 401 "Not administrator
// user"), but lets a management user list the vhosts it has permissions in:
// for such a user the vhost is looked up in that list. The answer is kept
// and shared by every later caller (see reads.go): the client never writes a
// vhost, so a process checks each vhost once.
func (c *Client) GetVhost(ctx context.Context, name string) (Vhost, error) {
	return c.vhosts.do(ctx, name, kept, func(ctx context.Context) (Vhost, error) {
		return c.getVhostNow(ctx, name)
	})
}

func (c *Client) getVhostNow(ctx context.Context, name string) (Vhost, error) {
	op := fmt.Sprintf("reading vhost %q", name)
	var raw rawVhost
	err := c.getJSON(ctx, op, "vhosts/"+url.PathEscape(name), &raw)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusUnauthorized && strings.Contains(strings.ToLower(e.Reason), "not administrator") {
		var all []rawVhost
		if err := c.getJSON(ctx, op, "vhosts?columns=name,default_queue_type,metadata", &all); err != nil {
			return Vhost{}, err
		}
		for _, v := range all {
			if v.Name == name {
				return c.withNodeDefault(ctx, v.vhost())
			}
		}
		return Vhost{}, &Error{Op: op, Endpoint: c.endpoint, Status: http.StatusNotFound, Kind: ErrNotFound,
			Reason: notVisible}
	}
	if err != nil {
		return Vhost{}, err
	}
	return c.withNodeDefault(ctx, raw.vhost())
}

// withNodeDefault fills in the node's default queue type for a vhost that
// sets none. RabbitMQ 4.x already reports the node's for such a vhost; a
// vhost created before the node's setting, or a version that reports
// "undefined", leaves it to /api/overview (which RabbitMQ 3.10 answers
// without default_queue_type: classic).
func (c *Client) withNodeDefault(ctx context.Context, v Vhost) (Vhost, error) {
	if v.DefaultQueueType != "" {
		return v, nil
	}
	t, err := c.NodeDefaultQueueType(ctx)
	if err != nil {
		return Vhost{}, err
	}
	if t != "" {
		v.DefaultQueueType, v.FromNode = t, true
	}
	return v, nil
}

// NodeDefaultQueueType returns the node's default_queue_type as /api/overview
// reports it (RabbitMQ 3.13 and later), or "" when it reports none. It is
// read once per client: the setting changes only with a restart.
func (c *Client) NodeDefaultQueueType(ctx context.Context) (string, error) {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if c.nodeDefault == nil {
		// RabbitMQ 3.10, which has no such column, answers [].
		// A management API without /api/overview (404) sets none either.
		var o any
		if err := c.getJSON(ctx, "reading the node's default queue type", "overview?columns=default_queue_type", &o); err != nil && !errors.Is(err, ErrNotFound) {
			return "", err
		}
		t := ""
		if m, ok := o.(map[string]any); ok {
			t, _ = m["default_queue_type"].(string)
		}
		if t == "undefined" {
			t = ""
		}
		c.nodeDefault = &t
	}
	return *c.nodeDefault, nil
}

// confirmNotFound checks a 404 of a call in vhost before it is taken to mean
// that the vhost (and its queues) is gone. RabbitMQ up to 4.0 answers a user
// without access to the vhost 401 ("User not authorised to access virtual
// host"), but 4.3 answers it 404, as if the vhost did not exist. So after a
// 404 the vhost is looked up: an administrator sees every vhost (and needs no
// permissions to read queues), a management user the vhosts it has access
// to. A vhost that exists, or one an administrator cannot find, confirms the
// 404; a vhost a management user cannot see may exist without its access, so
// the 404 becomes an ErrUnauthorized error that names both causes.
func (c *Client) confirmNotFound(ctx context.Context, vhost string, err error) error {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrNotFound) {
		return err
	}
	_, verr := c.getVhostNow(ctx, vhost)
	var ve *Error
	switch {
	case verr == nil:
		return err // the vhost is there: the 404 is about a queue
	case errors.As(verr, &ve) && ve.Kind == ErrNotFound && ve.Status == http.StatusNotFound && ve.Reason != notVisible:
		return err // an administrator found no such vhost
	case errors.Is(verr, ErrNotFound):
		return &Error{Op: e.Op, Endpoint: e.Endpoint, Status: e.Status, Reason: e.Reason, Kind: ErrUnauthorized,
			Hint: fmt.Sprintf("Vhost %q is not among the vhosts user %q can access: either it does not exist, or the user has no "+
				"permissions in it (RabbitMQ 4.3 answers 404 to both). Grant the user configure permission there on the queues it "+
				"manages (`rabbitmqctl set_permissions -p %s %s QUEUES_PATTERN '^$' '^$'`), or create the vhost", vhost, c.cfg.Username, vhost, c.cfg.Username)}
	default:
		return verr
	}
}

// ConfirmQueueGone is for a GET of a queue of vhost that answered 404, which
// RabbitMQ 4.3 also answers a user who may not see the vhost: it returns nil
// when the 404 can be trusted (see confirmNotFound), and otherwise the error
// that names both causes.
func (c *Client) ConfirmQueueGone(ctx context.Context, vhost string) error {
	gone := &Error{Op: fmt.Sprintf("reading queues in vhost %q", vhost), Endpoint: c.endpoint, Status: http.StatusNotFound,
		Reason: "Not Found", Kind: ErrNotFound}
	if err := c.confirmNotFound(ctx, vhost, gone); !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// notVisible is the reason of the ErrNotFound of a vhost a management user
// cannot see.
const notVisible = "not among the vhosts this user has permissions in"

type rawVhost struct {
	Name             string `json:"name"`
	DefaultQueueType string `json:"default_queue_type"`
	Metadata         struct {
		DefaultQueueType string `json:"default_queue_type"`
	} `json:"metadata"`
}

func (raw rawVhost) vhost() Vhost {
	t := raw.DefaultQueueType
	if t == "" {
		t = raw.Metadata.DefaultQueueType
	}
	if t == "undefined" {
		t = ""
	}
	return Vhost{Name: raw.Name, DefaultQueueType: t}
}
