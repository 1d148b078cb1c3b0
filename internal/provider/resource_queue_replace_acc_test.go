package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A replacement with force_destroy = true in the same apply deletes the old
// queue with its messages; without it, it is refused with the replacement's
// advice and loses nothing.
func TestAccQueue_replacementHonoursForceDestroyOfTheSameApply(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("replace")
	renamed := name + "-b"
	cleanupQueues(t, "/", name)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", renamed, renamed+".dead"),
		Steps: []resource.TestStep{
			{Config: queueConfig(name, `  message_ttl = "1h"`)},
			{
				// A new name replaces the queue.
				PreConfig: func() { publish(t, amqpChannel(t, "/"), name, 2) },
				Config:    queueConfig(renamed, `  message_ttl = "1h"`),
				ExpectError: regexp.MustCompile(`(?s)Queue\s+Not\s+Empty.*` + regexp.QuoteMeta(name) + `:\s+2\s+messages.*first\s+half\s+of\s+replacing` +
					`.*force_destroy\s+=\s+true\s+in\s+the\s+same\s+apply`),
			},
			{
				PreConfig: func() {
					if n := messagesIn(t, "/", name); n != 2 {
						t.Fatalf("after a refused replacement %s holds %d messages, want 2", name, n)
					}
				},
				Config: queueConfig(renamed, "  message_ttl = \"1h\"\n  force_destroy = true"),
				Check: resource.ComposeTestCheckFunc(checkGone(t, "/", name, name+".dead"),
					checkBrokerQueue(t, "/", renamed, `{"x-message-ttl":3600000}`)),
			},
		},
	})
}
