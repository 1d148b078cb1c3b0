package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Each value of policy_check picks its mode; no value (null, or unknown until
// apply) is the default, warn.
func TestResolvePolicyCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    types.String
		want policyCheckMode
	}{
		{types.StringValue("warn"), policyCheckWarn},
		{types.StringValue("error"), policyCheckError},
		{types.StringValue("off"), policyCheckOff},
		{types.StringNull(), policyCheckWarn},
		{types.StringUnknown(), policyCheckWarn},
	} {
		if got := resolvePolicyCheck(tt.v); got != tt.want {
			t.Errorf("resolvePolicyCheck(%v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
