package broker

import "net/http"

// observeAttempts calls f before every HTTP attempt. Call it before the
// client is used.
func (c *Client) observeAttempts(f func(*http.Request)) { c.transport.onAttempt = f }
