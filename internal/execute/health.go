package execute

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// Health is the client side of a run: how much CPU the process used and how
// late its goroutines were woken, to tell when the client itself was the
// bottleneck.
type Health struct {
	// UserCPU and SysCPU are the process's CPU time during the run.
	UserCPU, SysCPU time.Duration
	// Cores is the number of CPUs the process may use.
	Cores int
	// SchedLateMax is the worst lateness of a 10 ms sleep during the run:
	// how long a ready goroutine could wait for a CPU.
	SchedLateMax time.Duration
}

// healthMeter measures Health between start and stop.
type healthMeter struct {
	ru0     syscall.Rusage
	stop    chan struct{}
	wg      sync.WaitGroup
	lateMax time.Duration
}

const schedTick = 10 * time.Millisecond

func startHealth() *healthMeter {
	h := &healthMeter{stop: make(chan struct{})}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &h.ru0)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTimer(schedTick)
		defer t.Stop()
		for {
			before := time.Now()
			select {
			case <-h.stop:
				return
			case <-t.C:
				if late := time.Since(before) - schedTick; late > h.lateMax {
					h.lateMax = late
				}
				t.Reset(schedTick)
			}
		}
	}()
	return h
}

func (h *healthMeter) finish() Health {
	close(h.stop)
	h.wg.Wait()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return Health{
		UserCPU:      tvDiff(ru.Utime, h.ru0.Utime),
		SysCPU:       tvDiff(ru.Stime, h.ru0.Stime),
		Cores:        runtime.GOMAXPROCS(0),
		SchedLateMax: h.lateMax,
	}
}

func tvDiff(a, b syscall.Timeval) time.Duration {
	return time.Duration((a.Sec-b.Sec)*1e9 + (int64(a.Usec)-int64(b.Usec))*1e3)
}

// clientHealth turns the runner's measurements into the report's lines,
// with a warning when the client itself may have been the bottleneck.
func clientHealth(out Outcome, policy string) stats.ClientHealth {
	h := out.Health
	c := stats.ClientHealth{
		Scheduling:         policy,
		CPUUserSeconds:     h.UserCPU.Seconds(),
		CPUSysSeconds:      h.SysCPU.Seconds(),
		Cores:              h.Cores,
		SchedulerLateMaxMs: float64(h.SchedLateMax) / 1e6,
		Warnings:           []string{},
	}
	if el := out.Elapsed(); el.Seconds() >= stats.CPUShareMinSeconds {
		c.CPUPercent = float64(h.UserCPU+h.SysCPU) / float64(el) * 100
	}
	if c.Cores > 0 && c.CPUPercent >= stats.CPUWarnFraction*100*float64(c.Cores) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("client CPU at %.0f%% of %d cores: the client may have been the bottleneck", c.CPUPercent, c.Cores))
	}
	if c.SchedulerLateMaxMs > stats.SchedLateWarnMs {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the client's goroutines waited up to %.1f ms for a CPU: latencies include client delay", c.SchedulerLateMaxMs))
	}
	return c
}
