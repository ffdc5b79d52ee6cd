package stats

import (
	"math"
	"slices"
	"time"
)

// WorstWindow is the window of a run's timeline whose p99 latency stood
// out from the run's median window by more than the noise (StandsOut).
type WorstWindow struct {
	// Index is the window's index in the timeline.
	Index int `json:"index"`
	// StartSeconds and EndSeconds bound the window, in seconds from the
	// run's start.
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
	// P99Ms and MaxMs are the window's p99 and maximum latency, in ms;
	// MedianP99Ms is the median of the p99 of the windows with a complete
	// request.
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	MedianP99Ms float64 `json:"median_p99_ms"`
	// RequestsPerSecond is the window's complete requests per second,
	// MedianRequestsPerSecond the median of the windows'.
	RequestsPerSecond       float64 `json:"requests_per_second"`
	MedianRequestsPerSecond float64 `json:"median_requests_per_second"`
	// Failed counts the window's failed requests.
	Failed int64 `json:"failed"`
}

// Noise bounds of WorstWindow: a window stands out when its p99 is more
// than StandsOutFactor times the median window's, and above it by at
// least StandsOutMinMs and StandsOutMADs median absolute deviations of
// the windows' p99, among at least 3 windows with complete requests.
const (
	StandsOutFactor = 3.0
	StandsOutMinMs  = 1.0
	StandsOutMADs   = 5.0
)

// worstWindow returns the timeline's window that stands out, nil when
// none does.
func worstWindow(tl *Timeline) *WorstWindow {
	if tl == nil || tl.Width <= 0 {
		return nil
	}
	i, median, ok := tl.Worst()
	if !ok {
		return nil
	}
	w := &tl.Windows[i]
	p99 := ms(w.Latency(99))
	width := tl.Width.Seconds()
	var rates, devs []float64
	for j := range tl.Windows {
		if x := &tl.Windows[j]; x.Complete > 0 {
			rates = append(rates, float64(x.Complete)/width)
			devs = append(devs, math.Abs(ms(x.Latency(99))-ms(median)))
		}
	}
	slices.Sort(rates)
	slices.Sort(devs)
	mad := devs[len(devs)/2]
	if p99 <= StandsOutFactor*ms(median) || p99-ms(median) < max(StandsOutMinMs, StandsOutMADs*mad) {
		return nil
	}
	return &WorstWindow{Index: i, StartSeconds: float64(i) * width, EndSeconds: float64(i+1) * width,
		P99Ms: p99, MaxMs: ms(w.LatencyMax), MedianP99Ms: ms(median),
		RequestsPerSecond: float64(w.Complete) / width, MedianRequestsPerSecond: rates[len(rates)/2], Failed: w.Failed()}
}

// StageSummary is what one stage of a run in stages (Plan.Stages)
// did, from the run's timeline: the windows that start within the stage.
type StageSummary struct {
	// StartSeconds and EndSeconds bound the stage, in seconds from the
	// run's start.
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
	// Target is the stage's rate (open model) or concurrency (closed),
	// held or, with Ramp, reached at its end.
	Target float64 `json:"target"`
	Ramp   bool    `json:"ramp,omitempty"`
	// Complete and Failed count the requests of its windows;
	// RequestsPerSecond is Complete over the windows' span.
	Complete          int64   `json:"complete"`
	Failed            int64   `json:"failed"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	// P50Ms and P99Ms are the latency percentiles of its windows' complete
	// requests (the timeline's histogram: within about 12%), MaxMs the
	// exact maximum, in ms.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// stageSummaries returns the figures of each stage of the plan, nil for
// a run not in stages or without a timeline.
func stageSummaries(pl *Plan, tl *Timeline) []StageSummary {
	if len(pl.Stages) == 0 || tl == nil || tl.Width <= 0 {
		return nil
	}
	var out []StageSummary
	var from time.Duration
	for _, st := range pl.Stages {
		to := from + st.Length
		var sum TimelineWindow
		n := 0
		for i := range tl.Windows {
			if at := time.Duration(i) * tl.Width; at >= from && at < to {
				sum.Merge(&tl.Windows[i])
				n++
			}
		}
		s := StageSummary{StartSeconds: from.Seconds(), EndSeconds: to.Seconds(), Target: st.Target, Ramp: pl.Ramp,
			Complete: sum.Complete, Failed: sum.Failed(), P50Ms: ms(sum.Latency(50)), P99Ms: ms(sum.Latency(99)), MaxMs: ms(sum.LatencyMax)}
		if n > 0 {
			s.RequestsPerSecond = float64(sum.Complete) / (float64(n) * tl.Width.Seconds())
		}
		out = append(out, s)
		from = to
	}
	return out
}
