package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/mover"
)

// terraform apply -invoke moves every dead letter back to q in order, with
// its body, properties and headers unchanged, and says so.
func TestAccAction_redriveKeepsOrderAndProperties(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	name := actionTopology(t, "redrive")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", redriveBlock(name, "")))
	publishDead(t, amqpChannel(t, "/"), name, 25, nil)

	out := tf.mustRun("plan", "-invoke=action.queuey_redrive_dead_letters.r")
	if !saysWords(out, name+".dead holds 25 messages: invoking moves them to "+name) {
		t.Errorf("plan lacks the warning with the count:\n%s", out)
	}
	out = tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	t.Logf("terraform apply -invoke prints:\n%s", out)
	if !saysWords(out, "moved 25 messages from "+name+".dead to "+name) {
		t.Errorf("apply -invoke lacks the last line:\n%s", out)
	}
	got := readBack(t, amqpChannel(t, "/"), name)
	if len(got) != 25 {
		t.Fatalf("%s holds %d messages after the redrive, want 25", name, len(got))
	}
	for i, d := range got {
		want := deadLetter(name, i)
		if d.MessageId != want.MessageId || string(d.Body) != string(want.Body) || d.ContentType != want.ContentType ||
			d.ContentEncoding != want.ContentEncoding || d.DeliveryMode != want.DeliveryMode || d.Priority != want.Priority ||
			d.CorrelationId != want.CorrelationId || d.ReplyTo != want.ReplyTo || !d.Timestamp.Equal(want.Timestamp) ||
			d.Type != want.Type || d.AppId != want.AppId {
			t.Fatalf("message %d changed on the way:\n got %+v\nwant %+v", i, d, want)
		}
		if !reflect.DeepEqual(d.Headers, want.Headers) {
			t.Fatalf("message %d: headers %v, want %v", i, d.Headers, want.Headers)
		}
	}
	if n := messagesIn(t, "/", name+".dead"); n != 0 {
		t.Errorf("%s.dead holds %d messages after the redrive", name, n)
	}
	// Nothing left: the plan says nothing, the invoke says so.
	out = tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	if !saysWords(out, "nothing to move") || saysWords(out, "Dead Letters Will Be Moved") {
		t.Errorf("a redrive of an empty queue:\n%s", out)
	}
}

// limit moves the oldest that many and leaves the rest, in order.
func TestAccAction_redriveLimit(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	name := actionTopology(t, "limit")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", redriveBlock(name, "    limit = 4\n")))
	publishDead(t, amqpChannel(t, "/"), name, 10, nil)
	out := tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	if !saysWords(out, "invoking moves the oldest 4 of them") || !saysWords(out, "moved 4 messages from") {
		t.Errorf("apply -invoke with a limit:\n%s", out)
	}
	moved, left := readBack(t, amqpChannel(t, "/"), name), readBack(t, amqpChannel(t, "/"), name+".dead")
	if len(moved) != 4 || len(left) != 6 || moved[0].MessageId != "m-000000" || moved[3].MessageId != "m-000003" ||
		left[0].MessageId != "m-000004" {
		t.Fatalf("after a redrive with limit 4: %d moved (%v), %d left (%v)", len(moved), ids(moved), len(left), ids(left))
	}
}

// 10,000 dead letters: each arrives on q at least once, and q.dead is empty.
func TestAccAction_redriveTenThousand(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	const n = 10000
	name := actionTopology(t, "tenk")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", redriveBlock(name, "")))
	publishDead(t, amqpChannel(t, "/"), name, n, func(_ int, p *amqp.Publishing) { p.Body = make([]byte, 1024) })
	out := tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	if !saysWords(out, "moved 10000 messages from "+name+".dead to "+name) ||
		!regexp.MustCompile(`moved \d+ of 10000 messages`).MatchString(out) {
		t.Errorf("apply -invoke of 10,000:\n%s", out)
	}
	moved, left := readBack(t, amqpChannel(t, "/"), name), readBack(t, amqpChannel(t, "/"), name+".dead")
	dups := checkNoneLost(t, n, moved, left)
	if len(left) != 0 {
		t.Errorf("%d messages left on %s.dead", len(left), name)
	}
	t.Logf("10,000 moved: %d on %s (%d duplicates)", len(moved), name, dups)
}

// A redrive into a q that is gone before it begins moves nothing, naming q;
// one that goes mid-move (deleted after the first progress report) stops on
// the broker's returns, and every message is on q or still on q.dead.
func TestAccAction_redriveIntoVanishedQueue(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	name := actionTopology(t, "vanish")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", redriveBlock(name, "")))
	publishDead(t, amqpChannel(t, "/"), name, 50, nil)
	deleteOutOfBand(t, name)
	out, err := tf.run("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	if err == nil || !regexp.MustCompile(`Queue\s+Not\s+Found`).MatchString(out) || !saysWords(out, `"`+name+`"`) {
		t.Errorf("a redrive into a missing queue: %v\n%s", err, out)
	}
	if n := messagesIn(t, "/", name+".dead"); n != 50 {
		t.Errorf("%s.dead holds %d messages, want all 50", name, n)
	}

	const n = 3000
	mid := actionTopology(t, "vanishmid")
	publishDead(t, amqpChannel(t, "/"), mid, n, nil)
	var once atomic.Bool
	moved, err := accMover(t).Move(context.Background(), mover.Move{Vhost: "/", From: mid + ".dead", To: mid,
		Progress: func(moved, _ int) {
			if moved > 0 && !once.Swap(true) {
				deleteOutOfBand(t, mid)
			}
		}})
	if me, ok := errors.AsType[*mover.MoveError](err); !ok || me.Cause != mover.DestinationGone || moved >= n {
		t.Fatalf("redrive into a queue deleted mid-move: moved %d, %v", moved, err)
	}
	t.Logf("stopped: %v", err)
	// The messages reported moved went with the queue; every other one must still be on q.dead:
	// the ids it lacks, in order, all come before the first not moved.
	onDead := readBack(t, amqpChannel(t, "/"), mid+".dead")
	if _, missing, _ := tally(n, onDead); len(missing) > 0 && missing[len(missing)-1] >= fmt.Sprintf("m-%06d", moved) {
		t.Fatalf("%s is neither reported moved nor on %s.dead", missing[len(missing)-1], mid)
	}
}

// ids are the message ids of ds.
func ids(ds []amqp.Delivery) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.MessageId)
	}
	return out
}

// A connection closed mid-move (the management API's DELETE of the
// connection) stops the move with an error saying how many moved; nothing
// is lost: every message is on q or still on q.dead.
func TestAccAction_redriveConnectionClosedMidMove(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	const n = 5000
	name := actionTopology(t, "killconn")
	publishDead(t, amqpChannel(t, "/"), name, n, nil)
	var killed atomic.Bool
	moved, err := accMover(t).Move(context.Background(), mover.Move{Vhost: "/", From: name + ".dead", To: name,
		Progress: func(moved, _ int) {
			if moved > 0 && !killed.Swap(true) {
				// Closed once the management API lists it (up to a minute: a busy broker lists
				// a new connection only at its next statistics round).
				waitFor(t, "the redrive's connection to show", func() bool {
					n, err := accAdmin(t).CloseConnection(t.Context(), "terraform-provider-queuey redrive "+name+".dead")
					if err != nil {
						t.Fatal(err)
					}
					return n > 0
				})
			}
		}})
	var me *mover.MoveError
	if !errors.As(err, &me) || me.Cause != mover.ConnectionLost || moved >= n {
		t.Fatalf("redrive with its connection closed: moved %d, %v", moved, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("moved %d of %d messages", moved, n)) {
		t.Errorf("the error does not say how many moved: %v", err)
	}
	t.Logf("stopped: %v", err)
	onQ, onDead := readBack(t, amqpChannel(t, "/"), name), readBack(t, amqpChannel(t, "/"), name+".dead")
	dups := checkNoneLost(t, n, onQ, onDead)
	if len(onQ) < moved {
		t.Errorf("%s holds %d messages, fewer than the %d reported moved", name, len(onQ), moved)
	}
	t.Logf("%d on %s, %d on %s.dead, %d duplicates", len(onQ), name, len(onDead), name, dups)
}

// A dead letter whose user_id is another user's stops the move before it
// is published, naming its message id; nothing is lost.
func TestAccAction_redriveForeignUserID(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	name := actionTopology(t, "userid")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", redriveBlock(name, "")))
	// A user with the impersonator tag may publish any user_id: it
	// publishes the dead letters, the 6th claiming another user, the 3rd
	// the test's own user, the others none.
	user := "tfacc-impersonator-" + name
	createUser(t, user, "pw", "impersonator", "/", allPermissions)
	u, _ := url.Parse(amqpURL("/"))
	u.User = url.UserPassword(user, "pw")
	publishDead(t, amqpChannelAt(t, u.String()), name, 10, func(i int, p *amqp.Publishing) {
		switch i {
		case 2:
			p.UserId = testUser()
		case 5:
			p.UserId = "someone-else"
		}
	})
	out, err := tf.run("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	if err == nil || !saysWords(out, `"m-000005"`) || !saysWords(out, "someone-else") ||
		!saysWords(out, "impersonator") {
		t.Errorf("a redrive meeting a foreign user_id: %v\n%s", err, out)
	}
	onQ, onDead := readBack(t, amqpChannel(t, "/"), name), readBack(t, amqpChannel(t, "/"), name+".dead")
	checkNoneLost(t, 10, onQ, onDead)
	if len(onQ) != 5 || len(onDead) != 5 || onDead[0].MessageId != "m-000005" {
		t.Errorf("after the stop: on q %v, on q.dead %v; want the 5 before m-000005 moved, the rest kept", ids(onQ), ids(onDead))
	}
}
