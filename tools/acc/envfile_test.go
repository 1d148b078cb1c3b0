package main

import "testing"

func TestAssignments(t *testing.T) {
	a := assignments{{"A", "plain/path:1"}, {"B", "it's two words"}, {"C", ""}, {"D", "$HOME"}}
	got := parseAssignments("# a comment\n" + a.format() + "not an assignment\n")
	if len(got) != len(a) {
		t.Fatalf("parsed %q from %q", got, a.format())
	}
	for i := range a {
		if got[i] != a[i] {
			t.Errorf("round trip of %q gave %q", a[i], got[i])
		}
	}
	// bash's printf %q, as scripts/broker-ready.sh writes.
	if v := parseAssignments(`P=pa\$s\ word`).get("P"); v != "pa$s word" {
		t.Errorf("printf %%q value read as %q", v)
	}
}

func TestAMQPEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"amqp://guest:guest@127.0.0.1:5672/": "amqp://127.0.0.1:5672",
		"amqps://u@host:5671":                "amqps://host:5671",
		"amqp://127.0.0.1:5673/":             "amqp://127.0.0.1:5673",
	} {
		if got := amqpEndpoint(in); got != want {
			t.Errorf("amqpEndpoint(%s) = %s, want %s", in, got, want)
		}
	}
}
