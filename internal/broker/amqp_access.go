package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"
)

// What the AMQP mover (internal/mover) takes from this client: the credentials and TLS settings of
// the management API, the user they authenticate as, and the mark of a write for the shared reads.

// AMQPCredentials returns the SASL PLAIN user and password of an AMQP connection made for op:
// basic auth as is; with a bearer or OAuth 2.0 token, the token is the password (RabbitMQ's OAuth
// 2.0 backend reads the token from the password and ignores the username). A token that cannot be
// had is an *Error of op.
func (c *Client) AMQPCredentials(ctx context.Context, op string) (user, pass string, err error) {
	switch c.cfg.authKind() {
	case authOAuth2:
		tok, err := c.tokens.token(ctx)
		if err != nil {
			if e := c.authError(op, err); e != nil {
				return "", "", e
			}
			return "", "", err
		}
		return c.tokenUser(), tok, nil
	case authBearerToken:
		return c.tokenUser(), c.cfg.BearerToken, nil
	}
	return c.cfg.Username, c.cfg.Password, nil
}

// tokenUser is the username sent with a token: the username setting when given, else a fixed
// name (the OAuth 2.0 backend ignores it).
func (c *Client) tokenUser() string {
	if c.cfg.Username != "" {
		return c.cfg.Username
	}
	return "terraform-provider-queuey"
}

// UsesToken says the client authenticates with a bearer or OAuth 2.0 token, not a password.
func (c *Client) UsesToken() bool { return c.cfg.authKind() != authBasic }

// TLSConfig returns the management API's TLS settings (certificates, CA, insecure), a copy.
func (c *Client) TLSConfig() *tls.Config { return c.tlsConfig.Clone() }

// MarkWritten tells the shared reads that something changed besides this client's own calls
// (messages moved or purged over AMQP): no listing asked before it answers a read after it.
func (c *Client) MarkWritten() { c.wrote() }

// Whoami returns the name of the user the credentials authenticate as and whether it has the
// impersonator tag, from the management API's whoami; for basic auth the username when whoami
// does not answer, else "".
func (c *Client) Whoami(ctx context.Context) (string, bool) {
	var who struct {
		Name string `json:"name"`
		Tags any    `json:"tags"`
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.getJSON(wctx, "reading the current user", "whoami", &who); err != nil || who.Name == "" {
		if !c.UsesToken() {
			return c.cfg.Username, false
		}
		return "", false
	}
	var tags []string
	switch t := who.Tags.(type) {
	case string:
		tags = strings.Split(t, ",")
	case []any:
		for _, v := range t {
			tags = append(tags, fmt.Sprint(v))
		}
	}
	for _, t := range tags {
		if strings.TrimSpace(t) == "impersonator" {
			return who.Name, true
		}
	}
	return who.Name, false
}
