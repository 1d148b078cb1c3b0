package broker

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// versionBroker maps a path (below /api/) to the answer a RabbitMQ version
// gives there.
type versionBroker map[string]answer

type answer = struct {
	status int
	body   string
}

// client starts a fake broker that answers the paths of vb as given, and
// returns a client of it.
func (vb versionBroker) client(t *testing.T) (*Client, *brokertest.Server) {
	t.Helper()
	b := brokertest.New(t)
	b.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		a, ok := vb[strings.TrimPrefix(r.URL.EscapedPath(), "/api/")]
		if ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			_, _ = w.Write([]byte(a.body))
		}
		return ok
	})
	return fakeClient(t, b, 5*time.Second), b
}

// The answers are those recorded from RabbitMQ 3.10.8, 4.0.5 and 4.3.6
// (brokertest/versions.go).

func TestClassify_authProblemsOnEveryVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		whoami string // answer of /api/whoami; "" when it must not be asked
		want   Cause
	}{
		{"wrong password 3.10", 401, brokertest.LoginFailed310, "", CauseCredentials},
		{"wrong password 4.x", 401, brokertest.LoginFailed4x, "", CauseCredentials},
		{"no management tag", 401, brokertest.NotManagement, "", CauseManagementTag},
		{"no vhost access 3.10/4.0", 401, brokertest.NotVhostUser, "", CauseVhostAccess},
		{"pattern does not match", 401, brokertest.AccessRefused, "", CausePermissions},
		{"unknown reason, whoami answers", 401, `{"error":"x","reason":"Something new"}`, "200", CausePermissions},
		{"unknown reason, whoami refuses the login", 401, `{"error":"x","reason":"Something new"}`, "401", CauseCredentials},
		{"unknown reason, whoami refuses the tag", 401, `{"error":"x","reason":"Something new"}`, "401tag", CauseManagementTag},
		{"no reason (rabbit-hole), whoami refuses", 401, ``, "401", CauseCredentials},
		{"unknown reason, whoami answers 300", 401, `{"error":"x","reason":"Something new"}`, "300", CauseCredentials},
		{"unknown 403, whoami fails", 403, `{"error":"x","reason":"Something new"}`, "400", CausePermissions},
		{"unknown 403, whoami refuses the tag", 403, `{"error":"x","reason":"Something new"}`, "403tag", CauseManagementTag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vb := versionBroker{"queues/v": {tc.status, tc.body}}
			switch tc.whoami {
			case "200":
				vb["whoami"] = answer{200, `{"name":"u","tags":["management"]}`}
			case "401":
				vb["whoami"] = answer{401, brokertest.LoginFailed4x}
			case "401tag":
				vb["whoami"] = answer{401, brokertest.NotManagement}
			case "403tag":
				vb["whoami"] = answer{403, brokertest.NotManagement}
			case "300":
				vb["whoami"] = answer{300, `{}`}
			case "400":
				vb["whoami"] = answer{400, `{}`}
			}
			c, b := vb.client(t)
			_, err := queuesOf(c, context.Background(), "v", Declared, Kept)
			if !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("got %v, want ErrUnauthorized", err)
			}
			if got := causeOf(err); got != tc.want {
				t.Errorf("got %q with cause %d, want %d", err, got, tc.want)
			}
			if tc.whoami == "" && len(b.RequestsMatching("GET whoami")) != 0 {
				t.Errorf("asked /api/whoami for a known reason")
			}
		})
	}
}

func TestConfirmNotFound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vb       versionBroker
		wantKind error
		want     Cause
	}{
		{
			name: "administrator, vhost gone",
			vb: versionBroker{
				"queues/v": answer{404, brokertest.ObjectNotFound},
				"vhosts/v": answer{404, brokertest.ObjectNotFound},
			},
			wantKind: ErrNotFound,
		},
		{
			name: "management user, vhost gone (3.10/4.0) or not accessible (4.3)",
			vb: versionBroker{
				"queues/v": answer{404, brokertest.NotFound43},
				"vhosts/v": answer{401, brokertest.NotAdministrator},
				"vhosts":   answer{200, `[{"name":"other"}]`},
			},
			wantKind: ErrUnauthorized,
			want:     CauseVhostNotVisible,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := tc.vb.client(t)
			_, err := queuesOf(c, context.Background(), "v", Declared, Kept)
			if !errors.Is(err, tc.wantKind) {
				t.Fatalf("got %v, want %v", err, tc.wantKind)
			}
			var e *Error
			if errors.As(err, &e); e.Cause != tc.want || (tc.want == CauseVhostNotVisible && (e.Vhost != "v" || e.User != "u")) {
				t.Errorf("got %#v, want cause %d naming vhost \"v\" and user \"u\"", err, tc.want)
			}
		})
	}
}

func TestGetVhost_nodeDefaultQueueType(t *testing.T) {
	for _, tc := range []struct {
		name         string
		vhost        string
		overview     string
		wantType     string
		wantFromNode bool
	}{
		{"3.10: undefined, no node setting", `{"name":"v","default_queue_type":"` + brokertest.NoDefaultQueueType310 + `"}`, brokertest.Overview310, "", false},
		{"4.x: the vhost's own", `{"name":"v","default_queue_type":"classic"}`, ``, "classic", false},
		{"vhost sets none, node quorum", `{"name":"v","metadata":{}}`, `{"default_queue_type":"quorum"}`, "quorum", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vb := versionBroker{"vhosts/v": answer{200, tc.vhost}}
			if tc.overview != "" {
				vb["overview"] = answer{200, tc.overview}
			}
			c, _ := vb.client(t)
			v, err := c.GetVhost(context.Background(), "v")
			if err != nil {
				t.Fatal(err)
			}
			if v.DefaultQueueType != tc.wantType || v.FromNode != tc.wantFromNode {
				t.Errorf("got %+v, want type %q from node %v", v, tc.wantType, tc.wantFromNode)
			}
			if v.IsClassic() != (tc.wantType == "" || tc.wantType == "classic") {
				t.Errorf("IsClassic() = %v for %+v", v.IsClassic(), v)
			}
		})
	}
}
