package brokertest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// CloseConnection closes, as an administrator does from the management UI,
// the client connections whose connection_name is name, and reports how many
// it closed (0 while the management API does not list it yet).
func (a *Admin) CloseConnection(ctx context.Context, name string) (int, error) {
	var conns []struct {
		Name  string         `json:"name"`
		Props map[string]any `json:"client_properties"`
	}
	if err := a.do(ctx, http.MethodGet, "connections?columns=name,client_properties", nil, &conns); err != nil {
		return 0, err
	}
	closed := 0
	for _, c := range conns {
		if fmt.Sprint(c.Props["connection_name"]) != name {
			continue
		}
		if err := a.do(ctx, http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil, nil); err != nil && !IsNotFound(err) {
			return closed, err
		}
		closed++
	}
	return closed, nil
}
