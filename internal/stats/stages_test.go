package stats

import (
	"reflect"
	"testing"
	"time"
)

// TestParseStages: durations or seconds, targets of 0 or more; a stage of
// no length, a negative target or a malformed one is refused.
func TestParseStages(t *testing.T) {
	got, err := ParseStages("30s:100, 1.5:0,1m:400.5")
	want := []Stage{{30 * time.Second, 100}, {1500 * time.Millisecond, 0}, {time.Minute, 400.5}}
	if err != nil || !reflect.DeepEqual(got, want) || StagesLength(got) != 91500*time.Millisecond {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "30s", "0s:10", "-1s:10", "10s:-1", "10s:x", "x:10", "10s:NaN", "10s:1e10", "10s:1,"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestStageValue: held stages jump, ramps move linearly from the previous
// target (0 before the first); past the end, the last target.
func TestStageValue(t *testing.T) {
	st := []Stage{{time.Second, 10}, {2 * time.Second, 30}}
	for _, c := range []struct {
		ramp bool
		at   time.Duration
		want float64
	}{
		{false, 0, 10}, {false, 999 * time.Millisecond, 10}, {false, time.Second, 30}, {false, 5 * time.Second, 30},
		{true, 0, 0}, {true, 500 * time.Millisecond, 5}, {true, 2 * time.Second, 20}, {true, 3 * time.Second, 30},
	} {
		if got := StageValue(st, c.ramp, c.at); got != c.want {
			t.Errorf("ramp %v at %v: %g, want %g", c.ramp, c.at, got, c.want)
		}
	}
}
