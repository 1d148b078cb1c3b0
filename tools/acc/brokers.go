package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// brokers makes the brokers of brokerPlan ready and stops those it started:
// each start writes build/brokers/NAME.env (RABBITMQ_ENDPOINT, the
// credentials, RABBITMQ_AMQP_URL, RABBITMQ_AMQP_ENDPOINT, BROKER_NAME,
// BROKER_VERSION as the broker reports it, BROKER_LOG and BROKER_LOG_OFFSET,
// then the broker's own assignments) and records in build/brokers/started
// each node it started, which stop stops. A node already running with the
// same settings is used and left running.
type brokers struct {
	root, dir string
	stderr    io.Writer
}

func newBrokers(root string, stderr io.Writer) *brokers {
	return &brokers{root: root, dir: filepath.Join(root, "build", "brokers"), stderr: stderr}
}

func (b *brokers) logf(format string, args ...any) {
	b.printf("brokers: "+format, args...)
}

// printf writes a line of progress.
func (b *brokers) printf(format string, args ...any) {
	_, _ = fmt.Fprintf(b.stderr, format+"\n", args...)
}

// script runs a script of scripts/ with extra environment; its stdout is
// returned, its stderr passed on.
func (b *brokers) script(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(b.root, "scripts", name), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = b.stderr
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("scripts/%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out.String(), err
}

// startNode starts a node of the plan with extra arguments and records it
// for stop when this start started it.
func (b *brokers) startNode(ctx context.Context, name string, extra ...string) (assignments, error) {
	n, err := nodeNamed(name)
	if err != nil {
		return nil, err
	}
	out, err := b.script(ctx, nil, "rabbitmq-node.sh", append(n.startArgs(), extra...)...)
	if err != nil {
		return nil, err
	}
	a := parseAssignments(out)
	if a.get("NODE_STARTED") == "1" {
		err = b.record(name)
	}
	return a, err
}

func (b *brokers) record(node string) error {
	f, err := os.OpenFile(filepath.Join(b.dir, "started"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "node %s\n", node)
	return errors.Join(err, f.Close())
}

// start makes each named broker ready.
func (b *brokers) start(ctx context.Context, names ...string) error {
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		if err := b.startOne(ctx, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (b *brokers) startOne(ctx context.Context, name string) error {
	br, err := brokerNamed(name)
	if err != nil {
		return err
	}
	var a assignments
	var extras assignments
	switch br.kind {
	case system:
		tmp := filepath.Join(b.dir, name+".env.tmp")
		defer func() { _ = os.Remove(tmp) }()
		if _, err = b.script(ctx, []string{"BROKER_READY_QUIET=1", "BROKER_ENV_FILE=" + tmp}, "broker-ready.sh"); err != nil {
			return err
		}
		text, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		got := parseAssignments(string(text))
		return b.writeEnv(name, got.get("RABBITMQ_ENDPOINT"), got.get("RABBITMQ_USERNAME"), got.get("RABBITMQ_PASSWORD"),
			got.get("RABBITMQ_AMQP_URL"), "", "", nil)
	case plain:
		conf := filepath.Join(b.dir, name+".rabbitmq.conf")
		if err = os.WriteFile(conf, []byte(strings.Join(br.conf, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		a, err = b.startNode(ctx, br.nodes[0], "--conf", conf)
	case oauth:
		a, extras, err = b.startOAuth(ctx, br.nodes[0])
	case resil:
		return b.startResil(ctx, name, br.nodes)
	}
	if err != nil {
		return err
	}
	return b.writeEnv(name, a.get("NODE_ENDPOINT"), "guest", "guest", a.get("NODE_AMQP_URL"), a.get("NODE_LOG"), a.get("NODE_VERSION"), extras)
}

// writeEnv writes build/brokers/NAME.env; the version is what the broker
// reports, else fallback.
func (b *brokers) writeEnv(name, endpoint, user, password, amqp, log, fallback string, extras assignments) error {
	if endpoint == "" {
		return fmt.Errorf("no endpoint")
	}
	version := overviewVersion(endpoint, user, password)
	if version == "" {
		version = cmp.Or(fallback, "unknown")
	}
	offset := int64(0)
	if fi, err := os.Stat(log); err == nil {
		offset = fi.Size()
	}
	a := assignments{{"RABBITMQ_ENDPOINT", endpoint}, {"RABBITMQ_USERNAME", user}, {"RABBITMQ_PASSWORD", password},
		{"RABBITMQ_AMQP_URL", amqp}}
	if amqp != "" {
		a = append(a, kv{"RABBITMQ_AMQP_ENDPOINT", amqpEndpoint(amqp)})
	}
	a = append(a, kv{"BROKER_NAME", name}, kv{"BROKER_VERSION", version}, kv{"BROKER_LOG", log},
		kv{"BROKER_LOG_OFFSET", fmt.Sprint(offset)})
	out := filepath.Join(b.dir, name+".env")
	text := fmt.Sprintf("# Written by queuey-acc brokers start %s; load with: set -a; . %s; set +a\n", name, out) + append(a, extras...).format()
	if err := os.WriteFile(out, []byte(text), 0o600); err != nil {
		return err
	}
	rel, _ := filepath.Rel(b.root, out)
	b.logf("%s: RabbitMQ %s at %s (settings in %s)", name, version, endpoint, rel)
	return nil
}

// The OAuth 2.0 nodes verify tokens with a fresh HS256 key: resource server
// "rabbitmq" (scopes "rabbitmq.tag:management", "rabbitmq.configure:*/*", ...,
// audience "rabbitmq"); the oauth2 backend goes first, the internal one
// second, so guest/guest still works for the tests' own set-up.
const (
	oauthKeyID    = "queuey-test-key"
	oauthResource = "rabbitmq"
	oauthAdvanced = `[
 {rabbit, [{auth_backends, [rabbit_auth_backend_oauth2, rabbit_auth_backend_internal]}]},
 {rabbitmq_auth_backend_oauth2, [
   {resource_server_id, <<"%[1]s">>},
   {key_config, [
     {default_key, <<"%[2]s">>},
     {signing_keys, #{<<"%[2]s">> => {map, #{<<"kty">> => <<"oct">>, <<"alg">> => <<"HS256">>, <<"k">> => <<"%[3]s">>}}}}
   ]}
 ]}
].
`
)

// startOAuth starts node afresh with a new key (a running one keeps the key
// it started with, so it is stopped first).
func (b *brokers) startOAuth(ctx context.Context, name string) (node, extras assignments, err error) {
	_, _ = b.script(ctx, nil, "rabbitmq-node.sh", "stop", name)
	raw := make([]byte, 32)
	if _, err = rand.Read(raw); err != nil {
		return nil, nil, err
	}
	key := base64.RawURLEncoding.EncodeToString(raw)
	dir, err := os.MkdirTemp("", "queuey-oauth")
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	advanced := filepath.Join(dir, "advanced.config")
	if err = os.WriteFile(advanced, fmt.Appendf(nil, oauthAdvanced, oauthResource, oauthKeyID, key), 0o644); err != nil {
		return nil, nil, err
	}
	node, err = b.startNode(ctx, name, "--advanced", advanced, "--plugins", "rabbitmq_management,rabbitmq_auth_backend_oauth2", "--fresh")
	if err != nil {
		return nil, nil, err
	}
	extras = slices.DeleteFunc(slices.Clone(node), func(x kv) bool { return x.name == "NODE_STARTED" })
	extras = append(extras, kv{"RABBITMQ_OAUTH_ENDPOINT", node.get("NODE_ENDPOINT")}, kv{"RABBITMQ_OAUTH_AMQP_URL", node.get("NODE_AMQP_URL")},
		kv{"RABBITMQ_OAUTH_VERSION", node.get("NODE_VERSION")}, kv{"RABBITMQ_OAUTH_SIGNING_KEY", key},
		kv{"RABBITMQ_OAUTH_KEY_ID", oauthKeyID}, kv{"RABBITMQ_OAUTH_RESOURCE_SERVER_ID", oauthResource})
	return node, extras, err
}

// startResil starts the restart nodes (restart310, restart43) and the
// cluster c1-c3 (c2 and c3 join c1); a start that fails leaves none running.
// The tests stop and start the nodes' RabbitMQ application, named in
// QUEUEY_RESTART_NODES and QUEUEY_CLUSTER_NODES.
func (b *brokers) startResil(ctx context.Context, name string, nodes []string) error {
	ctl := func(n string, args ...string) (string, error) {
		return b.script(ctx, nil, "rabbitmq-node.sh", append([]string{"ctl", n}, args...)...)
	}
	quiet := *b
	quiet.stderr = io.Discard
	clustered := func(n string) bool { // a node not started yet is not
		out, err := quiet.script(ctx, nil, "rabbitmq-node.sh", "ctl", n, "-q", "cluster_status", "--formatter", "json")
		return err == nil && strings.Contains(out, `"c1@localhost"`)
	}
	err := func() error {
		for _, n := range nodes {
			if strings.HasPrefix(n, "c") && clustered(n) {
				continue
			}
			if _, err := b.startNode(ctx, n, "--fresh"); err != nil {
				return err
			}
		}
		for _, n := range []string{"c2", "c3"} {
			if clustered(n) {
				continue
			}
			b.printf("==> resil: joining %s to c1", n)
			for _, step := range [][]string{{"stop_app"}, {"join_cluster", "c1@localhost"}, {"start_app"}} {
				if _, err := ctl(n, step...); err != nil {
					return err
				}
			}
		}
		_, err := ctl("c1", "-q", "await_online_nodes", "3", "--timeout", "120")
		return err
	}()
	if err != nil {
		for _, n := range nodes {
			_, _ = b.script(context.WithoutCancel(ctx), nil, "rabbitmq-node.sh", "stop", n)
		}
		return err
	}
	for _, n := range nodes {
		if err := b.record(n); err != nil {
			return err
		}
	}
	status, _ := ctl("c1", "-q", "cluster_status", "--formatter", "json")
	b.printf("==> resil: cluster: %s", runningNodesRE.FindString(strings.ReplaceAll(status, "\n", "")))
	c1, _ := nodeNamed("c1")
	return b.writeEnv(name, fmt.Sprintf("http://127.0.0.1:%d", c1.mgmt()), "guest", "guest",
		fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", c1.amqp), "", "", assignments{
			{"QUEUEY_RESTART_NODES", "restart310,restart43"}, {"QUEUEY_CLUSTER_NODES", "c1,c2,c3"}})
}

// stop stops every node a start recorded.
func (b *brokers) stop(ctx context.Context) {
	file := filepath.Join(b.dir, "started")
	text, err := os.ReadFile(file)
	if err != nil {
		return
	}
	lines := strings.Fields(strings.ReplaceAll(string(text), "node ", ""))
	slices.Sort(lines)
	for _, n := range slices.Compact(lines) {
		if _, err := b.script(context.WithoutCancel(ctx), nil, "rabbitmq-node.sh", "stop", n); err != nil {
			b.logf("could not stop node %s", n)
		}
	}
	_ = os.Remove(file)
}

var runningNodesRE = regexp.MustCompile(`"running_nodes":\[[^]]*\]`)

// overviewVersion is the rabbitmq_version the management API reports ("" when
// it does not answer).
func overviewVersion(endpoint, user, password string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var v struct {
		Version string `json:"rabbitmq_version"`
	}
	if getJSON(ctx, endpoint+"/api/overview?columns=rabbitmq_version", user, password, &v) != nil {
		return ""
	}
	return v.Version
}
