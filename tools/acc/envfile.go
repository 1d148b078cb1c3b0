package main

import (
	"fmt"
	"regexp"
	"strings"
)

// kv is one shell assignment, NAME=value.
type kv struct{ name, value string }

// assignments are shell assignments in their order, as the node script
// prints them and as the env files of build/brokers hold them.
type assignments []kv

func (a assignments) get(name string) string {
	for _, x := range a {
		if x.name == name {
			return x.value
		}
	}
	return ""
}

var assignmentRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// parseAssignments reads the NAME=value lines of text; a value is plain,
// 'single-quoted' (as shQuote writes it) or backslash-escaped (bash's
// printf %q), and every other line is left out.
func parseAssignments(text string) assignments {
	var out assignments
	for _, line := range strings.Split(text, "\n") {
		m := assignmentRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := m[2]
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = strings.ReplaceAll(v[1:len(v)-1], `'\''`, `'`)
		} else {
			v = regexp.MustCompile(`\\(.)`).ReplaceAllString(v, "$1")
		}
		out = append(out, kv{m[1], v})
	}
	return out
}

var plainRE = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shQuote quotes v for a shell, leaving plain words as they are.
func shQuote(v string) string {
	if plainRE.MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// format writes a as lines a shell can load with set -a; . FILE; set +a.
func (a assignments) format() string {
	var b strings.Builder
	for _, x := range a {
		fmt.Fprintf(&b, "%s=%s\n", x.name, shQuote(x.value))
	}
	return b.String()
}

var credentialsRE = regexp.MustCompile(`^(amqps?://)[^@/]*@`)

// amqpEndpoint is the provider's amqp_endpoint for an AMQP URL: the URL
// without its credentials and trailing slash.
func amqpEndpoint(url string) string {
	return strings.TrimSuffix(credentialsRE.ReplaceAllString(url, "$1"), "/")
}
