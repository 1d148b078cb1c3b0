package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitRule(t *testing.T) {
	for _, tc := range []struct {
		rule           waitRule
		status         int
		stop, answered bool
	}{
		{waitRule{}, 200, true, true},
		{waitRule{}, 0, false, false},
		{waitRule{}, 401, false, false},
		{waitRule{}, 503, false, false},
		{waitRule{refused: true}, 401, true, false},
		{waitRule{anyAnswer: true}, 401, true, true},
		{waitRule{anyAnswer: true}, 0, false, false},
	} {
		stop, ok := tc.rule.done(tc.status)
		if stop != tc.stop || ok != tc.answered {
			t.Errorf("%+v.done(%d) = %v, %v; want %v, %v", tc.rule, tc.status, stop, ok, tc.stop, tc.answered)
		}
	}
}

// waitAPI polls until the API answers 200, with the credentials given.
func TestWaitAPI(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, _ := r.BasicAuth(); r.URL.Path != "/api/overview" || u != "admin" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"rabbitmq_version":"3.10.25"}`))
	}))
	defer srv.Close()
	if status, ok := waitAPI(context.Background(), srv.URL+"/", "admin", "pw", waitRule{}, time.Minute, time.Millisecond); !ok || status != 200 || calls.Load() != 3 {
		t.Errorf("waitAPI = %d, %v after %d calls", status, ok, calls.Load())
	}
	if status, ok := waitAPI(context.Background(), srv.URL, "guest", "guest", waitRule{}, 5*time.Millisecond, time.Millisecond); ok || status != 401 {
		t.Errorf("waitAPI with refused credentials = %d, %v", status, ok)
	}
	if v := overviewVersion(srv.URL, "admin", "pw"); v != "3.10.25" {
		t.Errorf("overviewVersion = %q", v)
	}
}
