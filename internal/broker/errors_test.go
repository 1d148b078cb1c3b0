package broker

import (
	"context"
	"errors"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A 400 without a reason at the management API's own root (no path) is a
// port that is not the management API.
func TestNotTheManagementAPI(t *testing.T) {
	s := brokertest.New(t)
	s.Script(nil, brokertest.Reply(400, ""))
	c, err := New(Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueue(context.Background(), "/", "q", Declared)
	if !errors.Is(err, ErrNotAPI) || causeOf(err) != CauseNotAPI {
		t.Errorf("a 400 without a reason: %v", err)
	}
}

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
