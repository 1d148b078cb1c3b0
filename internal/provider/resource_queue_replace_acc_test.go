package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// A replacement with force_destroy = true in the same apply deletes the old
// queue with its messages; without it, it is refused with the replacement's
// advice and loses nothing.
func TestAccQueue_replacementHonoursForceDestroyOfTheSameApply(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("replace")
	cleanupQueues(t, "/", name)
	count := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if n := messageCount(t, name); n != want {
				return fmt.Errorf("%s holds %d messages, want %d", name, n, want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", name, name+".dead"),
		Steps: []resource.TestStep{
			{Config: queueConfig(name, `  message_ttl = "1h"`)},
			{
				PreConfig: func() { publish(t, name, 2) },
				Config:    queueConfig(name, `  message_ttl = "2h"`),
				ExpectError: regexp.MustCompile(`(?s)Queue\s+Not\s+Empty.*` + regexp.QuoteMeta(name) + `:\s+2\s+messages.*first\s+half\s+of\s+replacing` +
					`.*force_destroy\s+=\s+true\s+in\s+the\s+same\s+apply`),
			},
			{
				PreConfig: func() {
					if n := messageCount(t, name); n != 2 {
						t.Fatalf("after a refused replacement %s holds %d messages, want 2", name, n)
					}
				},
				Config: queueConfig(name, "  message_ttl = \"2h\"\n  force_destroy = true"),
				Check: resource.ComposeTestCheckFunc(count(0),
					checkBrokerQueue(t, "/", name, `{"x-message-ttl":7200000}`)),
			},
		},
	})
}
