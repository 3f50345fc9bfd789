package kanban

import (
	"encoding/json"
	"math"
	"strconv"
)

// IntegralNumbers rewrites, in place, json.Number values with an integral
// value (within ±2^53, where float64 is exact) in integer form, and
// returns v. JSON Schema counts 1.0 as an integer, so every transport
// normalises such numbers before decoding into Go int fields.
func IntegralNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = IntegralNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = IntegralNumbers(e)
		}
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return x
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
	}
	return v
}
