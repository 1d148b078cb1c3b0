package broker

import (
	"context"
	"fmt"
	"net/url"
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

// GetVhost returns the vhost, or an error wrapping ErrNotFound.
func (c *Client) GetVhost(ctx context.Context, name string) (Vhost, error) {
	var raw struct {
		Name             string `json:"name"`
		DefaultQueueType string `json:"default_queue_type"`
		Metadata         struct {
			DefaultQueueType string `json:"default_queue_type"`
		} `json:"metadata"`
	}
	op := fmt.Sprintf("reading vhost %q", name)
	if err := c.getJSON(ctx, op, "vhosts/"+url.PathEscape(name), &raw); err != nil {
		return Vhost{}, err
	}
	t := raw.DefaultQueueType
	if t == "" {
		t = raw.Metadata.DefaultQueueType
	}
	if t == "undefined" {
		t = ""
	}
	return Vhost{Name: raw.Name, DefaultQueueType: t}, nil
}
