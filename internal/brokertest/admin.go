package brokertest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Admin makes the administration calls tests and the bench need on a real broker (vhosts, users,
// permissions, versions, node processes), which the provider never makes. Through rabbit-hole/v2,
// whose calls take no context: ctx is only checked before each call.
type Admin struct {
	rh   *rabbithole.Client
	http *http.Client // for PutVhost's own request
}

// NewAdmin returns an administration client; insecure skips a test broker's certificate check.
func NewAdmin(endpoint, username, password string, insecure bool) (*Admin, error) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("management API endpoint %q is not an http(s) URL", endpoint)
	}
	u.User = nil
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // test brokers only
	}
	rh, err := rabbithole.NewTLSClient(u.String(), username, password, transport)
	if err != nil {
		return nil, err
	}
	rh.SetTimeout(30 * time.Second)
	return &Admin{rh: rh, http: &http.Client{Transport: transport, Timeout: 30 * time.Second}}, nil
}

// StatusError is a non-2xx management API answer.
type StatusError = rabbithole.ErrorResponse

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var e rabbithole.ErrorResponse
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound
}

// Permissions are the three regular expressions RabbitMQ grants a user in a vhost.
type Permissions struct {
	Configure string `json:"configure"`
	Write     string `json:"write"`
	Read      string `json:"read"`
}

func done(resp *http.Response, err error) error {
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	return err
}

// PutVhost creates or updates a vhost; defaultQueueType may be "". The type is sent in a request of
// its own: rabbit-hole sends "default_queue_type", which 3.10 ignores (it reads
// "defaultqueuetype").
func (a *Admin) PutVhost(ctx context.Context, name, defaultQueueType string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if defaultQueueType == "" {
		return done(a.rh.PutVhost(name, rabbithole.VhostSettings{}))
	}
	body, _ := json.Marshal(map[string]string{"default_queue_type": defaultQueueType, "defaultqueuetype": defaultQueueType})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, a.rh.Endpoint+"/api/vhosts/"+url.PathEscape(name), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(a.rh.Username, a.rh.Password)
	req.Header.Set("Content-Type", "application/json")
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
	return nil
}

// DeleteVhost deletes a vhost and everything in it; a missing vhost counts as deleted.
func (a *Admin) DeleteVhost(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return done(a.rh.DeleteVhost(name))
}

// PutUser creates or updates a user with a password and comma-separated tags.
func (a *Admin) PutUser(ctx context.Context, name, password, tags string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var t rabbithole.UserTags
	for tag := range strings.SplitSeq(tags, ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			t = append(t, tag)
		}
	}
	return done(a.rh.PutUser(name, rabbithole.UserSettings{Password: password, Tags: t}))
}

func (a *Admin) DeleteUser(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return done(a.rh.DeleteUser(name))
}

// SetPermissions grants user the permissions p in vhost.
func (a *Admin) SetPermissions(ctx context.Context, vhost, user string, p Permissions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return done(a.rh.UpdatePermissionsIn(vhost, user, rabbithole.Permissions{Configure: p.Configure, Write: p.Write, Read: p.Read}))
}

// DeletePermissions takes away user's permissions in vhost.
func (a *Admin) DeletePermissions(ctx context.Context, vhost, user string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return done(a.rh.ClearPermissionsIn(vhost, user))
}

type Overview struct {
	RabbitMQVersion   string
	ManagementVersion string
	ErlangVersion     string
}

// Overview returns the broker's versions.
func (a *Admin) Overview(ctx context.Context) (Overview, error) {
	if err := ctx.Err(); err != nil {
		return Overview{}, err
	}
	ov, err := a.rh.Overview()
	if err != nil {
		return Overview{}, err
	}
	return Overview{RabbitMQVersion: ov.RabbitMQVersion, ManagementVersion: ov.ManagementVersion, ErlangVersion: ov.ErlangVersion}, nil
}

// NodePids returns each node's operating-system process id, by node name.
func (a *Admin) NodePids(ctx context.Context) (map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	nodes, err := a.rh.ListNodes()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(nodes))
	for _, n := range nodes {
		// RabbitMQ reports os_pid as a string of digits.
		if pid, err := strconv.Atoi(string(n.OsPid)); err == nil {
			out[n.Name] = pid
		}
	}
	return out, nil
}
