package execute

import (
	"math"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// TestSchedule: request i is due when the rate asked has counted i
// requests: at a constant rate, through held stages (a stage of rate 0
// sends nothing) and ramps; count is at's inverse, and the stages' total
// bounds the numbers.
func TestSchedule(t *testing.T) {
	sec := float64(time.Second)
	cases := []struct {
		name   string
		rate   float64
		stages []stats.Stage
		ramp   bool
		// want: the due time of request i, in s
		want  func(i float64) float64
		total float64
	}{
		{"constant", 100, nil, false, func(i float64) float64 { return i / 100 }, math.Inf(1)},
		{"held", 0, []stats.Stage{{Length: time.Second, Target: 100}, {Length: time.Second, Target: 0}, {Length: 2 * time.Second, Target: 50}}, false, func(i float64) float64 {
			if i < 100 {
				return i / 100
			}
			return 2 + (i-100)/50
		}, 200},
		{"ramp", 0, []stats.Stage{{Length: 2 * time.Second, Target: 200}, {Length: time.Second, Target: 200}}, true, func(i float64) float64 {
			// 0 → 200 req/s over 2 s: n(t) = 50 t², 200 requests; then 200/s.
			if i < 200 {
				return math.Sqrt(i / 50)
			}
			return 2 + (i-200)/200
		}, 400},
		{"ramp down", 0, []stats.Stage{{Length: time.Second, Target: 100}, {Length: time.Second, Target: 0}}, true, func(i float64) float64 {
			// 0 → 100 over 1 s (50 requests), then 100 → 0 over 1 s: n(τ) = 100τ − 50τ².
			if i < 50 {
				return math.Sqrt(i / 50)
			}
			m := i - 50
			return 1 + (100-math.Sqrt(100*100-4*50*m))/100
		}, 100},
	}
	for _, c := range cases {
		s := newSchedule(c.rate, c.stages, c.ramp)
		if got := s.total(); got != c.total && !(math.IsInf(got, 1) && math.IsInf(c.total, 1)) {
			t.Errorf("%s: total %g, want %g", c.name, got, c.total)
		}
		for i := int64(0); i < 400; i++ {
			at, ok := s.at(i)
			if float64(i) >= c.total {
				if ok {
					t.Errorf("%s: request %d past the stages' %g is due", c.name, i, c.total)
				}
				continue
			}
			want := c.want(float64(i)) * sec
			if !ok || math.Abs(float64(at)-want) > 1000 {
				t.Errorf("%s: request %d due at %d ns, want %.0f", c.name, i, at, want)
			}
			// count(t) counts the requests due before t.
			if n := s.count(float64(at) + 1); n != i+1 {
				t.Errorf("%s: count just after request %d = %d", c.name, i, n)
			}
		}
	}
}
