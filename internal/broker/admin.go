package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// The administration calls below set up vhosts, users and permissions. The
// provider itself never uses them; the acceptance tests and the benchmark do,
// so that no code outside this package builds a management API path.

// Permissions are the three regular expressions RabbitMQ grants a user in a vhost.
type Permissions struct {
	Configure string `json:"configure"`
	Write     string `json:"write"`
	Read      string `json:"read"`
}

// PutVhost creates (or updates) a vhost; defaultQueueType may be "".
func (c *Client) PutVhost(ctx context.Context, name, defaultQueueType string) error {
	body := map[string]any{}
	if defaultQueueType != "" {
		// RabbitMQ 3.x reads "defaultqueuetype", newer versions "default_queue_type".
		body["default_queue_type"] = defaultQueueType
		body["defaultqueuetype"] = defaultQueueType
	}
	return c.putJSON(ctx, fmt.Sprintf("creating vhost %q", name), "vhosts/"+url.PathEscape(name), body)
}

// DeleteVhost deletes a vhost and everything in it.
func (c *Client) DeleteVhost(ctx context.Context, name string) error {
	return c.send(ctx, fmt.Sprintf("deleting vhost %q", name), http.MethodDelete, "vhosts/"+url.PathEscape(name), nil)
}

// PutUser creates (or updates) a user with a password and comma-separated tags.
func (c *Client) PutUser(ctx context.Context, name, password, tags string) error {
	return c.putJSON(ctx, fmt.Sprintf("creating user %q", name), "users/"+url.PathEscape(name),
		map[string]any{"password": password, "tags": tags})
}

// DeleteUser deletes a user.
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	return c.send(ctx, fmt.Sprintf("deleting user %q", name), http.MethodDelete, "users/"+url.PathEscape(name), nil)
}

// SetPermissions grants user the permissions p in vhost.
func (c *Client) SetPermissions(ctx context.Context, vhost, user string, p Permissions) error {
	return c.putJSON(ctx, fmt.Sprintf("setting permissions of user %q in vhost %q", user, vhost),
		"permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(user), p)
}

// DeletePermissions takes away every permission of user in vhost.
func (c *Client) DeletePermissions(ctx context.Context, vhost, user string) error {
	return c.send(ctx, fmt.Sprintf("deleting permissions of user %q in vhost %q", user, vhost), http.MethodDelete,
		"permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(user), nil)
}

func (c *Client) putJSON(ctx context.Context, op, path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return &Error{Op: op, Endpoint: c.endpointRedacted, Reason: err.Error()}
	}
	return c.send(ctx, op, http.MethodPut, path, b)
}
