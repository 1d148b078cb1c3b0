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
	// DefaultQueueType is "classic", "quorum", "stream", or "" when the vhost
	// sets none (RabbitMQ 3.10 reports "undefined"), which means classic.
	DefaultQueueType string
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
// and shared by every later caller until this client creates or deletes a
// vhost (see reads.go): a process checks each vhost once.
func (c *Client) GetVhost(ctx context.Context, name string) (Vhost, error) {
	return c.vhosts.do(ctx, name, true, func(ctx context.Context) (Vhost, error) {
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
				return v.vhost(), nil
			}
		}
		return Vhost{}, &Error{Op: op, Endpoint: c.endpointRedacted, Status: http.StatusNotFound, Kind: ErrNotFound,
			Reason: fmt.Sprintf("no such vhost among those user %q has permissions in", c.cfg.Username)}
	}
	if err != nil {
		return Vhost{}, err
	}
	return raw.vhost(), nil
}

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
