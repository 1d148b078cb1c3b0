package topology

import "fmt"

// InvalidError is an input that topology refuses. Attribute names the
// provider attribute or function argument it belongs to (dead_suffix,
// deferred_suffix, granularity, delay, message_ttl, max_priority, or the
// name the caller passed), so that a caller reports it there without
// reading the message; Message is the whole explanation, naming the
// attribute and the values accepted.
type InvalidError struct {
	Attribute string
	Message   string
}

func (e *InvalidError) Error() string { return e.Message }

// invalid returns an *InvalidError of attribute.
func invalid(attribute, format string, args ...any) error {
	return &InvalidError{Attribute: attribute, Message: fmt.Sprintf(format, args...)}
}
