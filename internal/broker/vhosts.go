package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// GetVhost returns the vhost, or an error wrapping ErrNotFound. Only administrators may read one
// vhost, so for a management user it is found in the list of its vhosts. The answer is kept for the
// process: the client never writes a vhost.
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

// withNodeDefault fills in the node's default queue type for a vhost that reports none.
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

// NodeDefaultQueueType returns /api/overview's default_queue_type, or ""; read once.
func (c *Client) NodeDefaultQueueType(ctx context.Context) (string, error) {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if c.nodeDefault == nil {
		// 3.10 has no such column and answers []; a 404 sets none either.
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

// confirmNotFound checks a 404 in vhost before it is taken to mean the vhost is gone: RabbitMQ 4.3
// answers 404 (up to 4.0: 401) to a user without access to the vhost. The vhost is looked up;
// found, or not found by an administrator, the 404 stands; not seen by a management user, it
// becomes an ErrUnauthorized naming both causes.
func (c *Client) confirmNotFound(ctx context.Context, vhost string, err error) error {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrNotFound) {
		return err
	}
	_, verr := c.getVhostNow(ctx, vhost)
	var ve *Error
	if verr == nil {
		return err // the vhost is there: the 404 is about a queue
	}
	if errors.As(verr, &ve) && ve.Kind == ErrNotFound && ve.Status == http.StatusNotFound && ve.Reason != notVisible {
		return err // an administrator found no such vhost
	}
	if errors.Is(verr, ErrNotFound) {
		return &Error{Op: e.Op, Endpoint: e.Endpoint, Status: e.Status, Reason: e.Reason, Kind: ErrUnauthorized,
			Cause: CauseVhostNotVisible, Vhost: vhost, User: c.cfg.Username}
	}
	return verr
}

// ConfirmQueueGone returns nil when a queue GET's 404 can be trusted (see confirmNotFound).
func (c *Client) ConfirmQueueGone(ctx context.Context, vhost string) error {
	gone := &Error{Op: fmt.Sprintf("reading queues in vhost %q", vhost), Endpoint: c.endpoint, Status: http.StatusNotFound,
		Reason: "Not Found", Kind: ErrNotFound}
	if err := c.confirmNotFound(ctx, vhost, gone); !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// notVisible is the reason for a vhost a management user cannot see.
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
