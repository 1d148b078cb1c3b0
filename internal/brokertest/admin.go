package brokertest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Admin makes the administration calls that the acceptance tests and the
// bench need against a real management API (vhosts, users, permissions, the
// broker's versions and node processes) and the provider never makes, so
// that the provider's client carries none of them.
type Admin struct {
	base               string // the endpoint's URL up to /api/
	username, password string
	http               *http.Client
}

// NewAdmin returns an administration client of the management API at
// endpoint, authenticating as username; insecure skips the verification of
// an https endpoint's certificate (a test broker's).
func NewAdmin(endpoint, username, password string, insecure bool) (*Admin, error) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("management API endpoint %q is not an http(s) URL", endpoint)
	}
	u.User = nil
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // test brokers only
	}
	return &Admin{base: u.String() + "/api/", username: username, password: password,
		http: &http.Client{Transport: transport, Timeout: 30 * time.Second}}, nil
}

// StatusError is a management API answer other than 2xx.
type StatusError struct {
	Op     string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Op, e.Status, e.Body)
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var e *StatusError
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// Permissions are the three regular expressions RabbitMQ grants a user in a
// vhost.
type Permissions struct {
	Configure string `json:"configure"`
	Write     string `json:"write"`
	Read      string `json:"read"`
}

// PutVhost creates (or updates) a vhost; defaultQueueType may be "".
func (a *Admin) PutVhost(ctx context.Context, name, defaultQueueType string) error {
	body := map[string]any{}
	if defaultQueueType != "" {
		// RabbitMQ 3.x reads "defaultqueuetype", newer versions "default_queue_type".
		body["default_queue_type"] = defaultQueueType
		body["defaultqueuetype"] = defaultQueueType
	}
	return a.do(ctx, http.MethodPut, "vhosts/"+url.PathEscape(name), body, nil)
}

// DeleteVhost deletes a vhost and everything in it.
func (a *Admin) DeleteVhost(ctx context.Context, name string) error {
	return a.do(ctx, http.MethodDelete, "vhosts/"+url.PathEscape(name), nil, nil)
}

// PutUser creates (or updates) a user with a password and comma-separated tags.
func (a *Admin) PutUser(ctx context.Context, name, password, tags string) error {
	return a.do(ctx, http.MethodPut, "users/"+url.PathEscape(name), map[string]any{"password": password, "tags": tags}, nil)
}

// DeleteUser deletes a user.
func (a *Admin) DeleteUser(ctx context.Context, name string) error {
	return a.do(ctx, http.MethodDelete, "users/"+url.PathEscape(name), nil, nil)
}

// SetPermissions grants user the permissions p in vhost.
func (a *Admin) SetPermissions(ctx context.Context, vhost, user string, p Permissions) error {
	return a.do(ctx, http.MethodPut, "permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(user), p, nil)
}

// DeletePermissions takes away every permission of user in vhost.
func (a *Admin) DeletePermissions(ctx context.Context, vhost, user string) error {
	return a.do(ctx, http.MethodDelete, "permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(user), nil, nil)
}

// Overview is what the management API says of the broker as a whole.
type Overview struct {
	RabbitMQVersion   string `json:"rabbitmq_version"`
	ManagementVersion string `json:"management_version"`
	ErlangVersion     string `json:"erlang_version"`
}

// Overview returns the broker's versions.
func (a *Admin) Overview(ctx context.Context) (Overview, error) {
	var ov Overview
	err := a.do(ctx, http.MethodGet, "overview?columns=rabbitmq_version,management_version,erlang_version", nil, &ov)
	return ov, err
}

// NodePids returns the operating-system process id of each node of the
// cluster, by node name (for the bench, which reads their CPU time).
func (a *Admin) NodePids(ctx context.Context) (map[string]int, error) {
	var nodes []struct {
		Name  string      `json:"name"`
		OSPid json.Number `json:"os_pid"`
	}
	if err := a.do(ctx, http.MethodGet, "nodes?columns=name,os_pid", nil, &nodes); err != nil {
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

// do sends one request with a JSON body (when body is not nil) and decodes a
// JSON answer into out (when not nil).
func (a *Admin) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(a.username, a.password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Op: method + " " + path, Status: resp.StatusCode, Body: string(answer)}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
