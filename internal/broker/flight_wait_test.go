package broker

import "time"

// waitJoined waits until n callers wait on f's request in flight for key, or
// until moot reports that they never will (e.g. the broker got a second
// request: a caller asked on its own). The tests of shared reads use it, a
// condition, where a pause would let a slow machine outlast it.
func waitJoined[T any](f *flight[T], key string, n int, moot func() bool) {
	for !moot() {
		f.mu.Lock()
		c := f.calls[key]
		ok := c != nil && c.waiting >= n
		f.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
