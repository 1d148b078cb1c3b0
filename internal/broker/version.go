package broker

import "context"

// Version returns the broker's RabbitMQ version, e.g. "3.10.8" (GET /api/overview, its one field),
// read once for the client's life and shared: which policy keys keep a policy off a classic queue
// differ between versions.
func (c *Client) Version(ctx context.Context) (string, error) {
	return c.version.do(ctx, "", kept, func(ctx context.Context) (string, error) {
		var o struct {
			Version string `json:"rabbitmq_version"`
		}
		err := c.getJSON(ctx, "reading the broker's version", "overview?columns=rabbitmq_version", &o)
		return o.Version, err
	})
}
