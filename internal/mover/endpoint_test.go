package mover

import (
	"errors"
	"strings"
	"testing"
)

// The AMQP URL: the endpoint as given (the scheme's port when it has none), else the management
// endpoint's host with 5672 for http and 5671 for https; never the credentials.
func TestEndpointFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		management, endpoint, want string
		derived                    bool
	}{
		{"http://127.0.0.1:15672", "", "amqp://127.0.0.1:5672", true},
		{"http://rabbit.example.com:15672/", "", "amqp://rabbit.example.com:5672", true},
		{"https://rabbit.example.com", "", "amqps://rabbit.example.com:5671", true},
		{"https://rabbit.example.com:443/rabbitmq/", "", "amqps://rabbit.example.com:5671", true},
		{"http://[::1]:15672", "", "amqp://[::1]:5672", true},
		{"http://user:secret@127.0.0.1:15672", "", "amqp://127.0.0.1:5672", true},
		{"http://127.0.0.1:15672", "amqp://10.0.0.7:5673", "amqp://10.0.0.7:5673", false},
		{"http://127.0.0.1:15672", "amqps://mq.example.com", "amqps://mq.example.com:5671", false},
		{"https://127.0.0.1:15671", "amqp://127.0.0.1", "amqp://127.0.0.1:5672", false},
		{"https://127.0.0.1:15671", " amqp://127.0.0.1:5672/ ", "amqp://127.0.0.1:5672", false},
	} {
		got, derived, err := EndpointFor(tc.endpoint, tc.management)
		if err != nil || got != tc.want || derived != tc.derived {
			t.Errorf("management %s, endpoint %q: %s (derived %v), %v; want %s (derived %v)", tc.management, tc.endpoint, got,
				derived, err, tc.want, tc.derived)
		}
	}
	if _, _, err := EndpointFor("", "http://h:1%zz"); err == nil {
		t.Errorf("a management endpoint that does not parse: no error")
	}
}

// An endpoint that is not an amqp(s) URL of a host alone is refused with what is wrong, never
// echoing a password.
func TestValidateEndpoint(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]EndpointProblem{
		"http://127.0.0.1:5672":       NotAMQPScheme,
		"127.0.0.1:5672":              unparsable,
		"mq.example.com":              NotAMQPScheme,
		"amqp://h:5672/%zz":           unparsable,
		"amqp://":                     NoHost,
		"amqp://guest:secret@h:5672":  HasCredentials,
		"amqp://h:5672/%2F":           HasPath,
		"amqp://h:5672?heartbeat=10":  HasPath,
		"amqps://h:5671/vhost#x":      HasPath,
		"amqp://user:secret@h/%2Fx?q": HasCredentials,
	} {
		_, err := ValidateEndpoint(raw)
		var e *EndpointError
		if !errors.As(err, &e) || e.Problem != want {
			t.Errorf("%q: %#v, want problem %v", raw, err, want)
			continue
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(e.Value, "secret") {
			t.Errorf("%q: the error shows the password: %v", raw, err)
		}
	}
}
