package redact

import "testing"

// URL hides what stands before the last "@" of the authority, whatever the shape of the string:
// the password of a URL, the user info of a string without a scheme or with an empty one (even
// when empty, so the output never tells), never an "@" in the path, query or fragment.
func TestURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://u:secret@h:15672":        "http://u:xxxxx@h:15672",
		"http://h:15672":                 "http://h:15672",
		"u:secret@rabbit:15672":          "xxxxx@rabbit:15672",
		"http://u:secret@rabbit:15672:1": "http://xxxxx@rabbit:15672:1",
		"://u:secret@h":                  "://xxxxx@h",
		"h/p@x":                          "h/p@x",
		"/p@x":                           "/p@x",
		"h?q=a@b":                        "h?q=a@b",
		"@h":                             "xxxxx@h",
		"rabbit:15672":                   "rabbit:15672",
		"amqp://u:pw@h:5672":             "amqp://u:xxxxx@h:5672",
		"amqp://u:p%zz@h/x":              "amqp://xxxxx@h/x",
		"u:pw@h:5672":                    "xxxxx@h:5672",
		"amqp://h:5672":                  "amqp://h:5672",
		"amqp://u:p w@h?x=@y#a@":         "amqp://xxxxx@h?x=@y#a@",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
