package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// worstTask fills every field of a task with the value whose JSON is
// longest for its size: strings of n bytes that each escape to 6 bytes,
// the longest int, true, and times with nanoseconds and an offset. Fields
// are set by reflection, so a field added to kanban.Task is filled too.
func worstTask(t *testing.T, n int) kanban.Task {
	t.Helper()
	tm := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -(11*3600+59*60)))
	var task kanban.Task
	v := reflect.ValueOf(&task).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.String:
			f.SetString(strings.Repeat("\x00", n))
		case f.Kind() == reflect.Int:
			f.SetInt(math.MinInt64)
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Type() == reflect.TypeOf(time.Time{}):
			f.Set(reflect.ValueOf(tm))
		case f.Type() == reflect.TypeOf(&time.Time{}):
			f.Set(reflect.ValueOf(&tm))
		default:
			t.Fatalf("field %s of type %s: teach worstTask (and taskJSONBound) about it", v.Type().Field(i).Name, f.Type())
		}
	}
	return task
}

func TestTaskJSONBound(t *testing.T) {
	for _, n := range []int{0, 1, 1000} {
		task := worstTask(t, n)
		b, err := json.Marshal(task)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if bound := taskJSONBound(task); bound < len(b) {
			t.Errorf("strings of %d bytes: got bound %d, want at least the encoded size %d", n, bound, len(b))
		}
	}
	var zero kanban.Task
	zero.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if bound := taskJSONBound(zero); bound <= PageBudget {
		t.Errorf("a time JSON cannot encode: got bound %d, want over the page budget", bound)
	}
}

// withinBudget gives the same count with a bound as by measuring every
// row, on pages below, around and above the budget.
func TestWithinBudgetBoundAgrees(t *testing.T) {
	small := worstTask(t, 10)
	big := worstTask(t, 100_000) // about 6 MB of JSON each, over the budget alone
	mid := worstTask(t, 14_000)  // about 1.3 MB: the fourth crosses the budget
	pages := map[string][]kanban.Task{
		"empty":     {},
		"small":     {small, small, small},
		"big first": {big, small},
		"big later": {small, big, small},
		"mid":       {mid, mid, mid, mid, mid},
	}
	for name, rows := range pages {
		for _, limit := range []int{1, 3, 50} {
			got := withinBudget(rows, limit, taskJSONBound)
			want := withinBudget(rows, limit, nil)
			if got != want {
				t.Errorf("%s, limit %d: got %d rows with a bound, want %d as measured", name, limit, got, want)
			}
		}
	}
	if n := withinBudget(pages["mid"], 50, nil); n != 3 {
		t.Fatalf("got %d mid rows within the budget, want 3 (the test pages must cross it)", n)
	}
}
