package broker

import (
	"context"
	"encoding/json"
	"net/http"
)

// AdminPut sends a PUT of body (JSON) to path below /api/. The provider
// itself never uses it; tests and tools use it to set up vhosts and
// permissions.
func (c *Client) AdminPut(ctx context.Context, path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.send(ctx, "PUT "+path, http.MethodPut, path, b)
}

// AdminDelete sends a DELETE to path below /api/.
func (c *Client) AdminDelete(ctx context.Context, path string) error {
	return c.send(ctx, "DELETE "+path, http.MethodDelete, path, nil)
}
