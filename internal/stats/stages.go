package stats

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Stage is one stage of a run's load (bench --stages): for Length, a
// rate in requests per second (open model) or a number of connections
// (closed model).
type Stage struct {
	// Length is the stage's duration, in ns.
	Length time.Duration `json:"length_ns"`
	// Target is its rate or concurrency: held through the stage, or
	// reached at its end with a ramp.
	Target float64 `json:"target"`
}

// ParseStages reads "30s:100,60s:400": stages of a length (a Go duration
// or seconds) and a target of 0 or more, at least one, each longer than
// zero.
func ParseStages(s string) ([]Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no stage: want LENGTH:TARGET[,LENGTH:TARGET...] (30s:100,60s:400)")
	}
	var out []Stage
	for _, part := range strings.Split(s, ",") {
		ls, ts, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("stage %q: want LENGTH:TARGET (30s:100)", part)
		}
		d, err := time.ParseDuration(ls)
		if err != nil {
			f, ferr := strconv.ParseFloat(ls, 64)
			if ferr != nil {
				return nil, fmt.Errorf("stage %q: length %q: want a duration (30s) or seconds", part, ls)
			}
			d = time.Duration(f * float64(time.Second))
		}
		if d <= 0 {
			return nil, fmt.Errorf("stage %q: the length must be more than 0", part)
		}
		v, err := strconv.ParseFloat(ts, 64)
		if err != nil || v < 0 || v != v || v > 1e9 {
			return nil, fmt.Errorf("stage %q: target %q: want a number from 0 to 1e9", part, ts)
		}
		out = append(out, Stage{Length: d, Target: v})
	}
	return out, nil
}

// StagesLength returns the stages' total length.
func StagesLength(st []Stage) time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Length
	}
	return d
}

// StageValue returns the target in force at t from the start of the
// stages: the stage's own, or with ramp the value moved linearly from the
// previous stage's target (0 before the first) to the stage's at its
// end; past the end, the last target.
func StageValue(st []Stage, ramp bool, t time.Duration) float64 {
	prev := 0.0
	for _, s := range st {
		if t < s.Length {
			if !ramp {
				return s.Target
			}
			return prev + (s.Target-prev)*float64(t)/float64(s.Length)
		}
		t -= s.Length
		prev = s.Target
	}
	return prev
}
