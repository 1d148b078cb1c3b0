package broker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A host that does not resolve counts as no contact too, and the error says
// to check the host name.
func TestTiming_firstContactUnresolved(t *testing.T) {
	t.Parallel()
	tm := fastTiming
	tm.firstContact = 50 * time.Millisecond
	c := fakeClient(t, Config{Endpoint: "http://rabbit.invalid:15672", Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm})
	c.transport.base = roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "rabbit.invalid", IsNotFound: true}}
	})
	_, err := c.GetVhost(context.Background(), "/")
	for _, want := range []string{"nothing answered at rabbit.invalid:15672", "lookup rabbit.invalid: no such host"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if e := (*Error)(nil); !errors.As(err, &e) || e.Cause != CauseFirstContact || !e.Unresolved {
		t.Errorf("got %#v, want first contact with an unresolved host", err)
	}
}

func TestDialFailed(t *testing.T) {
	t.Parallel()
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded} // "i/o timeout"
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.EHOSTUNREACH}, true},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, true},
		{timeout, false},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false},
		{errors.New("EOF"), false},
	} {
		if got := dialFailed(tc.err); got != tc.want {
			t.Errorf("dialFailed(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	for u, want := range map[string]string{"http://h": "h:80", "https://h": "h:443", "http://h:15672": "h:15672", "https://[::1]:1": "[::1]:1"} {
		r, _ := http.NewRequest(http.MethodGet, u, nil)
		if got := hostPort(r.URL); got != want {
			t.Errorf("hostPort(%s) = %s, want %s", u, got, want)
		}
	}
}

// The first-contact error, word for word (the docs quote it).
func TestFirstContactErrorText(t *testing.T) {
	t.Parallel()
	e := &firstContactError{Addr: "127.0.0.1:15672", Attempts: 12, Waited: 10_040 * time.Millisecond,
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	if got, want := e.Error(), "nothing answered at 127.0.0.1:15672 in 10s (12 attempts): connection refused"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
