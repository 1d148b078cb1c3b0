package topology

import (
	"strings"
	"testing"
)

func TestHoldQueue(t *testing.T) {
	t.Parallel()
	h, err := HoldForTTL("orders", 30000, DefaultSuffixes())
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "orders.deferred.30000" || h.TTLMs != 30000 || h.ExpiresMs != 60000 {
		t.Errorf("HoldForTTL = %+v", h)
	}
	want := `{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`
	if got := h.Args.JSON(); got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
	custom := Suffixes{Dead: "-dlq", Deferred: "-wait-"}
	h, err = HoldForTTL("jobs", 120000, custom)
	if err != nil || h.Name != "jobs-wait-120000" {
		t.Errorf("custom HoldForTTL = %+v, %v", h, err)
	}
	for _, ttl := range []int64{0, -1, MaxDeferralMs + 1} {
		if _, err := HoldQueueArgs("q", ttl); err == nil || !strings.Contains(err.Error(), "1 to 2147483647") {
			t.Errorf("HoldQueueArgs(%d) error = %v", ttl, err)
		}
	}
}
