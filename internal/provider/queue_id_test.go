package provider

import (
	"strings"
	"testing"
)

func TestQueueID(t *testing.T) {
	t.Parallel()
	tests := []struct{ vhost, name, id string }{
		{"/", "orders", "%2F/orders"},
		{"team/a b", "odd name@x", "team%2Fa%20b/odd%20name@x"},
		{"v", "a%b?c#d", "v/a%25b%3Fc%23d"},
		{"ünï", "ç", "%C3%BCn%C3%AF/%C3%A7"},
	}
	for _, tt := range tests {
		if got := queueID(tt.vhost, tt.name); got != tt.id {
			t.Errorf("queueID(%q, %q) = %q, want %q", tt.vhost, tt.name, got, tt.id)
		}
		v, n, err := parseQueueID(tt.id)
		if err != nil || v != tt.vhost || n != tt.name {
			t.Errorf("parseQueueID(%q) = %q, %q, %v", tt.id, v, n, err)
		}
	}
	for _, bad := range []string{"orders", "/orders", "%2F/", "a/b/c", "%zz/orders", "v/%zz", ""} {
		if _, _, err := parseQueueID(bad); err == nil || !strings.Contains(err.Error(), "import ID") {
			t.Errorf("parseQueueID(%q) error = %v", bad, err)
		}
	}
}
