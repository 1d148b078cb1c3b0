package brokertest

import (
	"context"
	"fmt"
)

// CloseConnection closes the client connections named name and reports how many.
func (a *Admin) CloseConnection(ctx context.Context, name string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	conns, err := a.rh.ListConnections()
	if err != nil {
		return 0, err
	}
	closed := 0
	for _, c := range conns {
		if fmt.Sprint(c.ClientProperties["connection_name"]) != name {
			continue
		}
		if err := done(a.rh.CloseConnection(c.Name)); err != nil && !IsNotFound(err) {
			return closed, err
		}
		closed++
	}
	return closed, nil
}
