package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// The administration calls below set up vhosts, users and permissions. The
// provider itself never uses them; the acceptance tests and the benchmark do,
// so that no code outside this package builds a management API path.

// Permissions are the three regular expressions RabbitMQ grants a user in a
// vhost: rabbit-hole's type, whose JSON is what the management API takes.
type Permissions = rabbithole.Permissions

// PutVhost creates (or updates) a vhost; defaultQueueType may be "".
func (c *Client) PutVhost(ctx context.Context, name, defaultQueueType string) error {
	defer c.vhosts.wrote()
	body := map[string]any{}
	if defaultQueueType != "" {
		// RabbitMQ 3.x reads "defaultqueuetype", newer versions "default_queue_type".
		body["default_queue_type"] = defaultQueueType
		body["defaultqueuetype"] = defaultQueueType
	}
	return c.do(ctx, fmt.Sprintf("creating vhost %q", name), http.MethodPut, "vhosts/"+url.PathEscape(name), body, nil)
}

// DeleteVhost deletes a vhost and everything in it.
func (c *Client) DeleteVhost(ctx context.Context, name string) error {
	defer c.vhosts.wrote()
	return c.do(ctx, fmt.Sprintf("deleting vhost %q", name), http.MethodDelete, "vhosts/"+url.PathEscape(name), nil, nil)
}

// PutUser creates (or updates) a user with a password and comma-separated tags.
func (c *Client) PutUser(ctx context.Context, name, password, tags string) error {
	return c.do(ctx, fmt.Sprintf("creating user %q", name), http.MethodPut, "users/"+url.PathEscape(name),
		map[string]any{"password": password, "tags": tags}, nil)
}

// DeleteUser deletes a user.
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	return c.do(ctx, fmt.Sprintf("deleting user %q", name), http.MethodDelete, "users/"+url.PathEscape(name), nil, nil)
}

// SetPermissions grants user the permissions p in vhost.
func (c *Client) SetPermissions(ctx context.Context, vhost, user string, p Permissions) error {
	return c.do(ctx, fmt.Sprintf("setting permissions of user %q in vhost %q", user, vhost), http.MethodPut,
		"permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(user), p, nil)
}

// DeletePermissions takes away every permission of user in vhost.
func (c *Client) DeletePermissions(ctx context.Context, vhost, user string) error {
	return c.do(ctx, fmt.Sprintf("deleting permissions of user %q in vhost %q", user, vhost), http.MethodDelete,
		"permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(user), nil, nil)
}

// Overview is what the management API says of the broker as a whole.
type Overview struct {
	RabbitMQVersion   string `json:"rabbitmq_version"`
	ManagementVersion string `json:"management_version"`
	ErlangVersion     string `json:"erlang_version"`
}

// Overview returns the broker's versions.
func (c *Client) Overview(ctx context.Context) (Overview, error) {
	var ov Overview
	err := c.getJSON(ctx, "reading the overview", "overview?columns=rabbitmq_version,management_version,erlang_version", &ov)
	return ov, err
}

// NodePids returns the operating-system process id of each node of the
// cluster, by node name (for the benchmark, which reads their CPU time).
func (c *Client) NodePids(ctx context.Context) (map[string]int, error) {
	var nodes []struct {
		Name  string      `json:"name"`
		OSPid json.Number `json:"os_pid"`
	}
	if err := c.getJSON(ctx, "listing nodes", "nodes?columns=name,os_pid", &nodes); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(nodes))
	for _, n := range nodes {
		// RabbitMQ reports os_pid as a string of digits.
		if pid, err := n.OSPid.Int64(); err == nil {
			out[n.Name] = int(pid)
		}
	}
	return out, nil
}
