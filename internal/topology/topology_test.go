package topology

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDeferredTTLMs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		delay, gran time.Duration
		want        int64
		wantErr     string
	}{
		{"zero waits one step", 0, time.Second, 1000, ""},
		{"rounds up", 29200 * time.Millisecond, time.Second, 30000, ""},
		{"exact multiple", 30 * time.Second, time.Second, 30000, ""},
		{"one ms past rounds up a step", 30001 * time.Millisecond, time.Second, 31000, ""},
		{"5s granularity rounds 29.2s", 29200 * time.Millisecond, 5 * time.Second, 30000, ""},
		{"5s granularity rounds 30.5s", 30500 * time.Millisecond, 5 * time.Second, 35000, ""},
		{"sub-ms delay", time.Nanosecond, time.Millisecond, 1, ""},
		{"longest at 1s", 2147483 * time.Second, time.Second, 2147483000, ""},
		{"just past longest at 1s", 2147483*time.Second + time.Nanosecond, time.Second, 0, "longest delay accepted is 2147483s"},
		{"one step past longest at 1s", 2147484 * time.Second, time.Second, 0, "longest delay accepted is 2147483s"},
		{"longest at 1ms", 2147483647 * time.Millisecond, time.Millisecond, 2147483647, ""},
		{"one step past longest at 1ms", 2147483648 * time.Millisecond, time.Millisecond, 0, "longest delay accepted is 2147483647ms"},
		{"huge delay", time.Duration(1 << 62), time.Second, 0, "past the longest hold"},
		{"negative delay", -time.Second, time.Second, 0, "must not be negative"},
		{"zero granularity", time.Second, 0, 0, "granularity must be a positive whole number of milliseconds"},
		{"negative granularity", time.Second, -time.Second, 0, "positive"},
		{"sub-ms granularity", time.Second, 1500 * time.Microsecond, 0, "whole number of milliseconds"},
		{"granularity past the longest hold", time.Second, 2147483648 * time.Millisecond, 0, "at most 2147483647ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DeferredTTLMs("delay", tt.delay, tt.gran)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DeferredTTLMs(%s, %s) = %d, %v; want error containing %q", tt.delay, tt.gran, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("DeferredTTLMs(%s, %s) = %d, %v; want %d", tt.delay, tt.gran, got, err, tt.want)
			}
		})
	}
}

func TestArgumentsJSON(t *testing.T) {
	t.Parallel()
	ttl, prio := int64(5000), int64(10)
	tests := []struct {
		name string
		args Arguments
		want string
	}{
		{"empty", DeadQueueArgs(), "{}"},
		{"main with both", must(QueueArgs(&ttl, &prio)), `{"x-max-priority":10,"x-message-ttl":5000}`},
		{"main ttl zero", must(QueueArgs(new(int64), nil)), `{"x-message-ttl":0}`},
		{"main none", must(QueueArgs(nil, nil)), "{}"},
		// Escaped as Terraform's jsonencode escapes them.
		{"html escaping", must(HoldQueueArgs("a<b>&c\"d", 1)), `{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"a\u003cb\u003e\u0026c\"d","x-expires":2,"x-message-ttl":1}`},
	}
	for _, tt := range tests {
		if got := tt.args.JSON(); got != tt.want {
			t.Errorf("%s: JSON = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func must(a Arguments, err error) Arguments {
	if err != nil {
		panic(err)
	}
	return a
}

func TestQueueArgsLimits(t *testing.T) {
	t.Parallel()
	for _, p := range []int64{0, 256, -1} {
		if _, err := QueueArgs(nil, &p); err == nil || !strings.Contains(err.Error(), "1 to 255") {
			t.Errorf("priority %d: %v", p, err)
		}
	}
	for _, p := range []int64{1, 255} {
		if _, err := QueueArgs(nil, &p); err != nil {
			t.Errorf("priority %d: %v", p, err)
		}
	}
	for _, d := range []time.Duration{1500 * time.Microsecond, -time.Millisecond, time.Duration(MaxTTLMs+1) * time.Millisecond} {
		if _, err := MessageTTLMs(d); err == nil || !strings.Contains(err.Error(), "0 to 4294967295ms") {
			t.Errorf("MessageTTLMs(%s) = %v", d, err)
		}
	}
	if ms, err := MessageTTLMs(time.Duration(MaxTTLMs) * time.Millisecond); err != nil || ms != MaxTTLMs {
		t.Errorf("MessageTTLMs(max) = %d, %v", ms, err)
	}
}

func TestValidateQueueName(t *testing.T) {
	t.Parallel()
	def := DefaultSuffixes()
	tests := []struct {
		name    string
		s       Suffixes
		wantErr string
	}{
		{"orders", def, ""},
		{strings.Repeat("a", 235), def, ""},
		{strings.Repeat("a", 236), def, "1 to 235 bytes"},
		{"", def, "1 to 235"},
		{"amq.orders", def, `starts with "amq."`},
		{"amqp.orders", def, ""},
		{strings.Repeat("é", 118), def, "1 to 235 bytes"}, // 236 bytes
		{strings.Repeat("a", 244), Suffixes{Dead: ".d", Deferred: "."}, ""},
		{strings.Repeat("a", 245), Suffixes{Dead: ".d", Deferred: "."}, "1 to 244 bytes"},
		{strings.Repeat("a", 200), Suffixes{Dead: strings.Repeat("x", 56), Deferred: "."}, "1 to 199 bytes"},
		// The reason names the derived name that sets the limit.
		{strings.Repeat("a", 236), def, `(".deferred." followed by a 10-digit TTL) fits`},
		{strings.Repeat("a", 200), Suffixes{Dead: strings.Repeat("x", 56), Deferred: "."}, `(the dead-letter queue's, ending in "xxx`},
	}
	for _, tt := range tests {
		err := ValidateQueueName(tt.name, tt.s)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("ValidateQueueName(%d bytes, %+v) = %v, want %q", len(tt.name), tt.s, err, tt.wantErr)
		}
	}
}

func TestSuffixesValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s       Suffixes
		wantErr string
		setting string // the SettingError's
	}{
		{DefaultSuffixes(), "", ""},
		{Suffixes{Dead: "-dlq", Deferred: "-wait-"}, "", ""},
		{Suffixes{Dead: "", Deferred: ".deferred."}, "dead_suffix must not be empty", "dead_suffix"},
		{Suffixes{Dead: ".dead", Deferred: ""}, "deferred_suffix must not be empty", "deferred_suffix"},
		{Suffixes{Dead: ".x", Deferred: ".x"}, "must differ", "deferred_suffix"},
		{Suffixes{Dead: ".dead", Deferred: ".wait5"}, "must not end in a digit", "deferred_suffix"},
		{Suffixes{Dead: "5", Deferred: ".deferred."}, "look like hold queues", "dead_suffix"},
		{Suffixes{Dead: ".deferred.5", Deferred: ".deferred."}, "look like hold queues", "dead_suffix"},
		{Suffixes{Dead: ".5", Deferred: ".deferred."}, "look like hold queues", "dead_suffix"},
		{Suffixes{Dead: "x5", Deferred: ".deferred."}, "", ""},
		{Suffixes{Dead: ".05", Deferred: ".deferred."}, "look like hold queues", "dead_suffix"},
		{Suffixes{Dead: ".deferred.05", Deferred: ".deferred."}, "look like hold queues", "dead_suffix"},
		{Suffixes{Dead: ".deferred.99999999999", Deferred: ".deferred."}, "look like hold queues", "dead_suffix"},
		{Suffixes{Dead: ".dead2", Deferred: ".deferred."}, "", ""},
		{Suffixes{Dead: strings.Repeat("d", 255), Deferred: "."}, "leave no room", "dead_suffix"},
		{Suffixes{Dead: ".d", Deferred: strings.Repeat("w", 245)}, "leave no room", "deferred_suffix"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.s, err, tt.wantErr)
		}
		var se *SettingError
		if tt.setting != "" && (!errors.As(err, &se) || se.Setting != tt.setting) {
			t.Errorf("Validate(%+v) = %#v, want a SettingError for %s", tt.s, err, tt.setting)
		}
	}
}

func TestParseHoldQueueName(t *testing.T) {
	t.Parallel()
	s := DefaultSuffixes()
	tests := []struct {
		name string
		ttl  int64
		ok   bool
	}{
		{"orders.deferred.30000", 30000, true},
		{"orders.deferred.1", 1, true},
		{"orders.deferred.2147483647", 2147483647, true},
		{"orders.deferred.2147483648", 0, false},
		{"orders.deferred.99999999999", 0, false},
		{"orders.deferred.", 0, false},
		{"orders.deferred.0", 0, false},
		{"orders.deferred.05000", 0, false},
		{"orders.deferred.x1", 0, false},
		{"orders.deferred.5000.bak", 0, false},
		{"orders.deferred.-5", 0, false},
		{"orders.deferred.+5", 0, false},
		{"orders2.deferred.5000", 0, false},
		{"orders.dead", 0, false},
		{"orders", 0, false},
		{"xorders.deferred.5000", 0, false},
	}
	for _, tt := range tests {
		ttl, ok := ParseHoldQueueName("orders", tt.name, s)
		if ttl != tt.ttl || ok != tt.ok {
			t.Errorf("ParseHoldQueueName(%q) = %d, %v; want %d, %v", tt.name, ttl, ok, tt.ttl, tt.ok)
		}
	}
}

func TestPatterns(t *testing.T) {
	t.Parallel()
	s := DefaultSuffixes()
	if got := HoldQueuePattern("orders", s); got != `^orders\.deferred\.[0-9]+$` {
		t.Errorf("HoldQueuePattern = %s", got)
	}
	if got := QueuesPattern("orders", s); got != `^orders(\.dead|\.deferred\.[0-9]+)?$` {
		t.Errorf("QueuesPattern = %s", got)
	}
	if got := WritePattern("orders", s); got != `^(amq\.default|orders(\.dead|\.deferred\.[0-9]+)?)$` {
		t.Errorf("WritePattern = %s", got)
	}
	if got := HoldQueuePrefix("orders", s); got != "orders.deferred." {
		t.Errorf("HoldQueuePrefix = %s", got)
	}
	if got := DeadQueueName("orders", s); got != "orders.dead" {
		t.Errorf("DeadQueueName = %s", got)
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	want := Arguments{ArgMessageTTL: Int(30000), ArgDeadLetterExchange: String("")}
	ignore := map[string]string{"x-queue-type": "classic"}
	tests := []struct {
		name   string
		actual map[string]any
		want   []difference
	}{
		{"same, float from JSON", map[string]any{"x-message-ttl": float64(30000), "x-dead-letter-exchange": ""}, nil},
		{"classic type ignored", map[string]any{"x-message-ttl": float64(30000), "x-dead-letter-exchange": "", "x-queue-type": "classic"}, nil},
		{"quorum type reported", map[string]any{"x-message-ttl": float64(30000), "x-dead-letter-exchange": "", "x-queue-type": "quorum"}, []difference{{Key: "x-queue-type", HasActual: true, Actual: `"quorum"`}}},
		{"string ttl differs", map[string]any{"x-message-ttl": "30000", "x-dead-letter-exchange": ""}, []difference{{Key: "x-message-ttl", HasActual: true, Actual: `"30000"`, HasWanted: true, Wanted: "30000"}}},
		{"missing", map[string]any{"x-message-ttl": float64(30000)}, []difference{{Key: "x-dead-letter-exchange", HasWanted: true, Wanted: `""`}}},
		{"different", map[string]any{"x-message-ttl": float64(5000), "x-dead-letter-exchange": ""}, []difference{{Key: "x-message-ttl", HasActual: true, Actual: "5000", HasWanted: true, Wanted: "30000"}}},
		{"fractional", map[string]any{"x-message-ttl": 30000.5, "x-dead-letter-exchange": ""}, []difference{{Key: "x-message-ttl", HasActual: true, Actual: "30000.5", HasWanted: true, Wanted: "30000"}}},
	}
	for _, tt := range tests {
		if got := compareArgs(tt.actual, want, ignore); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Compare = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// Every refusal of a granularity, a delay, a message TTL or a priority names
// its attribute in a SettingError (the suffixes' are checked with Validate),
// so that callers report it there without reading the message.
func TestSettingError_setting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{ValidateGranularity("retry_granularity", 0), "retry_granularity"},
		{second(DeferredTTLMs("retry_delays[1]", 600*24*time.Hour, time.Second)), "retry_delays[1]"},
		{second(MessageTTLMs(-time.Second)), "message_ttl"},
		{ValidateMaxPriority(256), "max_priority"},
	} {
		var se *SettingError
		if !errors.As(tt.err, &se) || se.Setting != tt.want {
			t.Errorf("%v: got %+v, want a SettingError for %q", tt.err, se, tt.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestSuffixesOf(t *testing.T) {
	t.Parallel()
	def := DefaultSuffixes()
	for _, tt := range []struct {
		dead, hold string
		want       Suffixes
	}{
		{"orders-dlq", "orders-wait-", Suffixes{Dead: "-dlq", Deferred: "-wait-"}},
		{"", "", def},             // after an import: nothing known
		{"orders", "orders", def}, // no suffix at all
		{"other.dead", "orders-w-", Suffixes{Dead: def.Dead, Deferred: "-w-"}}, // not derived from orders
	} {
		if got := SuffixesOf("orders", tt.dead, tt.hold, def); got != tt.want {
			t.Errorf("SuffixesOf(orders, %q, %q) = %+v, want %+v", tt.dead, tt.hold, got, tt.want)
		}
	}
}
