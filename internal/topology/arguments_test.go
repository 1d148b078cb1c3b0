package topology

import (
	"encoding/json"
	"math"
	"testing"
)

// AsInt takes a number a broker reported as an integer only when it is one
// exactly: a float64 up to 2^53 in magnitude (every integer there is exact),
// nothing fractional, nothing beyond.
func TestAsInt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    any
		want int64
		ok   bool
	}{
		{float64(1 << 53), 1 << 53, true},
		{-float64(1 << 53), -(1 << 53), true},
		{math.Nextafter(float64(1<<53), math.Inf(1)), 0, false},
		{-math.Nextafter(float64(1<<53), math.Inf(1)), 0, false},
		{30000.0, 30000, true},
		{0.5, 0, false},
		{int(7), 7, true},
		{int32(7), 7, true},
		{int64(7), 7, true},
		{json.Number("9007199254740993"), 9007199254740993, true},
		{json.Number("1.5"), 0, false},
		{"7", 0, false},
		{nil, 0, false},
	} {
		got, ok := AsInt(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AsInt(%#v) = %d, %v; want %d, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}
