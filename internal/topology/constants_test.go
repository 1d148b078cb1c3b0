package topology

import (
	"testing"
)

func TestConstants(t *testing.T) {
	t.Parallel()
	if MaxTTLMs != 1<<32-1 {
		t.Errorf("MaxTTLMs = %d", MaxTTLMs)
	}
	if MaxDeferralMs != 2147483647 || 2*MaxDeferralMs > MaxTTLMs {
		t.Errorf("MaxDeferralMs = %d", MaxDeferralMs)
	}
	if got := DefaultSuffixes().MaxNameBytes(); got != 235 {
		t.Errorf("MaxNameBytes with default suffixes = %d, want 235", got)
	}
}
