package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Value is an integer or a string argument, never confused: RabbitMQ would refuse "30000".
type Value struct {
	isInt bool
	i     int64
	s     string
}

// Int returns an integer argument value.
func Int(i int64) Value { return Value{isInt: true, i: i} }

// String returns a string argument value.
func String(s string) Value { return Value{s: s} }

// IsInt reports whether the value is an integer.
func (v Value) IsInt() bool { return v.isInt }

// Int64 returns the integer held, or 0 for a string value.
func (v Value) Int64() int64 { return v.i }

func (v Value) str() string { return v.s }

// Any returns the value as an int64 or a string, ready for encoding/json.
func (v Value) Any() any {
	if v.isInt {
		return v.i
	}
	return v.s
}

// String renders the value as it appears in JSON: 30000 or "orders".
func (v Value) String() string {
	if v.isInt {
		return strconv.FormatInt(v.i, 10)
	}
	return jsonString(v.s)
}

// Arguments is a queue's declaration argument table.
type Arguments map[string]Value

// Keys returns the argument keys in ascending order.
func (a Arguments) Keys() []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Map returns the table as sent to the management API; an empty table gives an empty, non-nil map.
func (a Arguments) Map() map[string]any {
	m := make(map[string]any, len(a))
	for k, v := range a {
		m[k] = v.Any()
	}
	return m
}

// JSON returns the canonical encoding: compact, keys in order, integers as integers; {} when empty.
func (a Arguments) JSON() string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range a.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(k))
		b.WriteByte(':')
		b.WriteString(a[k].String())
	}
	b.WriteByte('}')
	return b.String()
}

// jsonString writes s as Terraform's jsonencode does, so a *_json attribute equals it.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // encoding a string cannot fail
	return string(b)
}

// difference is one way actual arguments differ from wanted ones; a missing side has Has* false.
type difference struct {
	Key       string
	HasActual bool
	Actual    string
	HasWanted bool
	Wanted    string
}

// compareArgs lists by key every difference between the broker's table and wanted, bar ignore.
func compareArgs(actual map[string]any, wanted Arguments, ignore map[string]string) []difference {
	keys := make(map[string]struct{}, len(actual)+len(wanted))
	for k := range actual {
		keys[k] = struct{}{}
	}
	for k := range wanted {
		keys[k] = struct{}{}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)

	var diffs []difference
	for _, k := range sorted {
		av, hasA := actual[k]
		wv, hasW := wanted[k]
		if hasA && !hasW {
			if iv, ok := ignore[k]; ok {
				if s, isStr := av.(string); isStr && s == iv {
					continue
				}
			}
		}
		if hasA && hasW && equalValue(av, wv) {
			continue
		}
		d := difference{Key: k, HasActual: hasA, HasWanted: hasW}
		if hasA {
			d.Actual = renderAny(av)
		}
		if hasW {
			d.Wanted = wv.String()
		}
		diffs = append(diffs, d)
	}
	return diffs
}

// equalValue compares by type and value: the integer 30000 is not the string "30000".
func equalValue(actual any, wanted Value) bool {
	if !wanted.IsInt() {
		s, ok := actual.(string)
		return ok && s == wanted.str()
	}
	i, ok := asInt(actual)
	return ok && i == wanted.Int64()
}

// AsInt returns a broker-reported argument value as an int64 when it is a whole number.
func AsInt(v any) (int64, bool) { return asInt(v) }

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	default:
		return 0, false
	}
}

func renderAny(v any) string {
	if i, ok := asInt(v); ok {
		return strconv.FormatInt(i, 10)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}

// Queue is a broker queue to declare: its name and its argument table.
type Queue struct {
	Name string
	Args Arguments
}
