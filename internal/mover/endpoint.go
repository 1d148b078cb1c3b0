package mover

import (
	"net"
	"net/url"
	"strings"

	"github.com/queuey/terraform-provider-queuey/internal/redact"
)

// The AMQP listener's usual ports.
const (
	amqpPort  = "5672"
	amqpsPort = "5671"
)

// EndpointFor is the AMQP URL to connect to: endpoint checked by ValidateEndpoint, or, when it is
// empty, derived from the management API's base URL management (derived true): the same host,
// amqp://HOST:5672 for http and amqps://HOST:5671 for https.
func EndpointFor(endpoint, management string) (u string, derived bool, err error) {
	if endpoint != "" {
		v, err := ValidateEndpoint(endpoint)
		if err != nil {
			return "", false, err
		}
		return v.String(), false, nil
	}
	mgmt, err := url.Parse(management)
	if err != nil {
		return "", false, &EndpointError{Value: redact.URL(management), Problem: unparsable}
	}
	if mgmt.Scheme == "https" {
		return "amqps://" + net.JoinHostPort(mgmt.Hostname(), amqpsPort), true, nil
	}
	return "amqp://" + net.JoinHostPort(mgmt.Hostname(), amqpPort), true, nil
}

// ValidateEndpoint checks an AMQP endpoint: amqp or amqps, with a host, without credentials (they
// go as SASL PLAIN), vhost path, query or fragment; a port left out is the scheme's. A refusal is
// an *EndpointError.
func ValidateEndpoint(raw string) (*url.URL, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(s)
	if err != nil {
		return nil, &EndpointError{Value: redact.URL(s), Problem: unparsable}
	}
	if u.Scheme != "amqp" && u.Scheme != "amqps" {
		return nil, &EndpointError{Value: redact.URL(s), Scheme: u.Scheme, Problem: NotAMQPScheme}
	}
	if u.Host == "" {
		return nil, &EndpointError{Value: redact.URL(s), Problem: NoHost}
	}
	if u.User != nil {
		return nil, &EndpointError{Value: redact.URL(s), Problem: HasCredentials}
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, &EndpointError{Value: redact.URL(s), Problem: HasPath}
	}
	if u.Port() == "" {
		port := amqpPort
		if u.Scheme == "amqps" {
			port = amqpsPort
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return u, nil
}
