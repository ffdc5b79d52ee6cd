package execute

import (
	"math"
	"sort"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// schedule gives the intended start of each request number of an
// open-model run, in ns from the run's start: i / rate at a constant
// rate, or through stages of rates, held or ramped (stats.Stage), where
// request i is due when the count of requests the rate has asked for
// reaches i. It is read by every worker and never written after
// newSchedule: no lock.
type schedule struct {
	interval float64 // ns between requests at a constant rate; 0 with stages
	stages   []stats.Stage
	ramp     bool
	from     []float64 // each stage's first rate (the previous target with a ramp)
	starts   []float64 // each stage's start, in ns
	counts   []float64 // requests asked for before each stage; one more: the total
	mix      []int32   // the mix's schedule (Config.Mix): request i sends mix[i % len]
}

// newSchedule returns the schedule of a constant rate, or of the stages
// when there are any.
func newSchedule(rate float64, stages []stats.Stage, ramp bool) *schedule {
	if len(stages) == 0 {
		return &schedule{interval: float64(time.Second) / rate}
	}
	s := &schedule{stages: stages, ramp: ramp}
	t, n, prev := 0.0, 0.0, 0.0
	for _, st := range stages {
		a := st.Target
		if ramp {
			a = prev
		}
		s.from, s.starts, s.counts = append(s.from, a), append(s.starts, t), append(s.counts, n)
		n += (a + st.Target) / 2 * st.Length.Seconds()
		t += float64(st.Length)
		prev = st.Target
	}
	s.counts = append(s.counts, n)
	return s
}

// total returns how many requests the stages ask for (+Inf at a constant
// rate).
func (s *schedule) total() float64 {
	if s.interval > 0 {
		return math.Inf(1)
	}
	return s.counts[len(s.counts)-1]
}

// at returns when request i is due, in ns from the start; ok is false
// when the stages ask for fewer requests.
func (s *schedule) at(i int64) (int64, bool) {
	if s.interval > 0 {
		return int64(float64(i) * s.interval), true
	}
	n := float64(i)
	if n >= s.total() {
		return 0, false
	}
	// The last stage whose first request count is at most i.
	k := sort.Search(len(s.stages), func(k int) bool { return s.counts[k+1] > n }) // stage k holds i
	st := &s.stages[k]
	a, b, d := s.from[k], st.Target, st.Length.Seconds()
	m := n - s.counts[k]
	var tau float64 // seconds into the stage
	if c := (b - a) / (2 * d); math.Abs(c) < 1e-12 {
		tau = m / a
	} else {
		// a·τ + c·τ² = m
		tau = (-a + math.Sqrt(max(a*a+4*c*m, 0))) / (2 * c)
	}
	return int64(s.starts[k] + tau*1e9), true
}

// count returns how many requests are due before t ns from the start:
// those i with at(i) < t.
func (s *schedule) count(t float64) int64 {
	var n float64
	if s.interval > 0 {
		n = t / s.interval
	} else {
		n = s.total()
		for k := range s.stages {
			end := s.starts[k] + float64(s.stages[k].Length)
			if t < end {
				st := &s.stages[k]
				tau := (t - s.starts[k]) / 1e9
				a, b, d := s.from[k], st.Target, st.Length.Seconds()
				n = s.counts[k] + a*tau + (b-a)/(2*d)*tau*tau
				break
			}
		}
	}
	c := int64(n)
	if float64(c) < n {
		c++
	}
	return c
}
