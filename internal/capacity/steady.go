package capacity

import (
	"fmt"
	"math"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// Held is the verdict on whether a step held its load: the backend served
// the asked rate and neither the requests in flight nor the latency grew
// through the step.
type Held int

// Verdicts of Held. The zero value, HeldYes, is also a step not judged
// (no windows).
const (
	// HeldYes: the load was held; the step's objectives decide.
	HeldYes Held = iota
	// HeldUnsure: the second half grew more than noise allows but not
	// clearly; a longer step must tell.
	HeldUnsure
	// HeldNo: a queue grew through the step, or the backend served less
	// than the asked rate: the step fails whatever its percentiles say.
	HeldNo
)

// StepWindows is how many windows a step is cut into for Judge.
const StepWindows = 10

// Bounds of Judge (see the package doc for why these).
const (
	// ServedShare is the least share of the asked rate the backend must
	// serve (completions per second after the first window), less
	// servedSlack requests over the step for the counting at its edges.
	ServedShare = 0.98
	servedSlack = 2
	// Growth: a half's mean latency or mean requests in flight may exceed
	// the first half's by GrowthShare of it plus an absolute allowance
	// (growthLatencyMs, growthInFlight); up to twice that is unsure, more
	// is a growing queue.
	GrowthShare     = 0.25
	growthLatencyMs = 1.0
	growthInFlight  = 2.0
)

// Steadiness is the judgement of a step's load (Judge).
type Steadiness struct {
	// Verdict is HeldYes, HeldUnsure or HeldNo.
	Verdict Held
	// Why says what grew or fell short; "" when held.
	Why string
	// LatencyMs are the mean latencies (ms, from the intended start in the
	// open model) of the requests due in the step's first and second
	// halves; InFlight the mean requests in flight (due and not finished,
	// open model only) at the window ends of each half.
	LatencyMs [2]float64
	InFlight  [2]float64
	// ServedRPS is the rate of finished requests after the first window
	// (open model; 0 in the closed model, whose rate is not asked).
	ServedRPS float64
	// Judged reports that there were windows to judge.
	Judged bool
}

// Judge tells whether an open-model step held its load, from its windows
// (equal slices of its time from its start, width each) and the asked
// rate; a closed-model step (rate 0) is not judged (Judged false, held).
//
// The test compares the step's halves. In the open model the backlog
// (requests due and not yet finished, which counts those the client could
// not send) is read at the end of every window; a queue that grows makes
// the second half's mean backlog and the mean latency of the requests due
// in it larger than the first half's, by half the step's growth, whatever
// the percentiles. The first window is left out of the latency and the
// served rate (the pipe fills), the last out of the latency (requests due
// in it that had not finished when the step ended are missing from it,
// and they are the slowest; the backlog counts them).
//
// span is how long the step actually ran from the windows' origin (0: all
// of them): a run starts its clock after it has made its clients, so its
// end may fall short of the last window's, whose backlog and served rate
// are then read at the end of the run, not past it.
func Judge(ws []stats.Window, width, span time.Duration, rate float64) Steadiness {
	var s Steadiness
	n := len(ws)
	if width <= 0 || rate <= 0 {
		// The closed model holds at most -c in flight: its queue cannot
		// grow for as long as the step lasts, and a latency that grows
		// there is the machine slowing down, which the objectives judge.
		return s
	}
	if full := time.Duration(n) * width; span <= 0 || span > full {
		span = full
	}
	n = min(n, int((span+width-1)/width)) // windows that began before the end
	ws = ws[:n]
	if n < 4 {
		return s
	}
	s.Judged = true
	// Latency: windows 1 .. n-2, cut in two halves.
	lat := ws[1 : n-1]
	h := len(lat) / 2
	s.LatencyMs = [2]float64{meanLatency(lat[:h]), meanLatency(lat[h:])}
	grow := func(a, b, abs float64) Held {
		allowed := a*GrowthShare + abs
		switch {
		case b <= a+allowed:
			return HeldYes
		case b <= a+2*allowed:
			return HeldUnsure
		}
		return HeldNo
	}
	worst := func(v Held, why string) {
		if v > s.Verdict {
			s.Verdict, s.Why = v, why
		}
	}
	worst(grow(s.LatencyMs[0], s.LatencyMs[1], growthLatencyMs), fmt.Sprintf("mean latency grew from %s to %s through the step",
		FormatMs(s.LatencyMs[0]), FormatMs(s.LatencyMs[1])))
	w := width.Seconds()
	var finished, served int64
	var sum [2]float64
	for i, x := range ws {
		finished += x.Finished
		if i > 0 {
			served += x.Finished
		}
		// Due by the end of window i (or of the run): requests j with
		// j/rate < that time.
		end := min(float64(i+1)*w, span.Seconds())
		due := math.Ceil(end * rate)
		sum[i*2/n] += max(due-float64(finished), 0)
	}
	s.InFlight = [2]float64{sum[0] / float64(n/2), sum[1] / float64(n-n/2)}
	worst(grow(s.InFlight[0], s.InFlight[1], growthInFlight), fmt.Sprintf("requests in flight grew from %.1f to %.1f through the step",
		s.InFlight[0], s.InFlight[1]))
	servedSpan := span.Seconds() - w
	s.ServedRPS = float64(served) / servedSpan
	if float64(served) < ServedShare*rate*servedSpan-servedSlack {
		worst(HeldNo, fmt.Sprintf("the backend served %.1f req/s of the %s asked", s.ServedRPS, FormatRate(rate)))
	}
	return s
}

// meanLatency is the mean latency of the requests started in ws, in ms.
func meanLatency(ws []stats.Window) float64 {
	var n, sum int64
	for _, w := range ws {
		n += w.Started
		sum += w.LatencySum
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n) / 1e6
}
