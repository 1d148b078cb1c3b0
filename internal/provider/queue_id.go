package provider

import (
	"fmt"
	"net/url"
	"strings"
)

// queueID is a queue's Terraform ID: vhost and name, each escaped as a URL path segment and joined
// by a slash, e.g. %2F/orders. Neither part can contain an unescaped slash, so the ID splits
// unambiguously, whatever the names hold (@, spaces, slashes).
func queueID(vhost, name string) string {
	return url.PathEscape(vhost) + "/" + url.PathEscape(name)
}

// parseQueueID splits an ID made by queueID.
func parseQueueID(id string) (vhost, name string, err error) {
	parts := strings.Split(id, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("the import ID must be the vhost and the queue name, each escaped as a URL path segment, joined by one slash: "+
			"%q for queue \"orders\" in vhost \"/\", %q for queue \"odd name@x\" in vhost \"team/a b\"; got %q",
			queueID("/", "orders"), queueID("team/a b", "odd name@x"), id)
	}
	if vhost, err = url.PathUnescape(parts[0]); err != nil {
		return "", "", fmt.Errorf("the vhost part %q of import ID %q is not a valid escaped path segment: %v", parts[0], id, err)
	}
	if name, err = url.PathUnescape(parts[1]); err != nil {
		return "", "", fmt.Errorf("the name part %q of import ID %q is not a valid escaped path segment: %v", parts[1], id, err)
	}
	return vhost, name, nil
}
