package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// apiStatus is the HTTP status of GET ENDPOINT/api/overview as user (0 when
// nothing answers).
func apiStatus(ctx context.Context, endpoint, user, password string) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/api/overview", nil)
	if err != nil {
		return 0
	}
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// describe puts a status of apiStatus in words.
func describe(status int) string {
	switch status {
	case 0:
		return "no answer"
	case http.StatusUnauthorized:
		return "HTTP 401, credentials refused"
	}
	return fmt.Sprintf("HTTP %d", status)
}

// waitRule says when waiting for a broker ends.
type waitRule struct {
	anyAnswer bool // any HTTP answer will do (a node booting, whose users may not be there yet)
	refused   bool // stop at HTTP 401: the caller repairs the user, then waits again
}

// done says whether status ends the wait, and whether it is the answer wanted.
func (w waitRule) done(status int) (stop, ok bool) {
	switch {
	case status == http.StatusOK, w.anyAnswer && status != 0:
		return true, true
	case w.refused && status == http.StatusUnauthorized:
		return true, false
	}
	return false, false
}

// waitAPI polls the management API every interval until the rule says
// done or timeout has passed; it returns the last status.
func waitAPI(ctx context.Context, endpoint, user, password string, rule waitRule, timeout, every time.Duration) (int, bool) {
	deadline := time.Now().Add(timeout)
	for {
		status := apiStatus(ctx, endpoint, user, password)
		if stop, ok := rule.done(status); stop {
			return status, ok
		}
		if !time.Now().Add(every).Before(deadline) {
			return status, false
		}
		select {
		case <-ctx.Done():
			return status, false
		case <-time.After(every):
		}
	}
}

// getJSON decodes the answer of GET url as user into v.
func getJSON(ctx context.Context, url, user, password string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
