package execute

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
)

// OpenAccount is how the requests that were due in an open-model run ended:
// Recorded (complete or failed, each once) + Unsent = Due.
type OpenAccount struct {
	// Due is the number of requests whose intended start fell within the
	// run: rate × the run's time as scheduled, at most the request count.
	Due int64
	// Recorded is the number of requests recorded (complete or failed).
	Recorded int64
	// Unsent were due but got no outcome: never sent because the run
	// ended or every worker was busy (-c full), or sent and still in
	// flight when the window closed (InFlight of them: drained, see
	// Outcome.Drained).
	Unsent   int64
	InFlight int64
}

// Open runs the open model: requests are scheduled at cfg.Rate (or in the
// rates of cfg.Stages) whatever the responses do, and each latency is
// measured from its intended send time (the correction for coordinated
// omission that wrk2 made known). cfg.Concurrency is the ceiling of requests
// in flight: when every worker is busy, the next request is sent late, and
// its latency still counts from its intended time. cfg.Requests, when set,
// is the number of requests to schedule. Workers take request numbers i = 0, 1, 2 ... from
// one atomic counter; request i is due at start + i/Rate. A worker that takes
// a number before its time waits until then (pacer: precise to tens of
// microseconds); one that takes it late (it was busy: the in-flight ceiling
// held the rate back) sends at once. The recorder sees Intended on every
// result, and tells the two kinds of lateness apart.
//
// After the run, every request that was due but got no outcome is counted
// (OpenAccount) and enters the corrected latencies as if it had completed at
// the end of the run, the earliest it could have: leaving it out would hide
// the worst of a backlog, since exactly the requests that waited longest are
// the ones the run never sent.
func Open(ctx context.Context, cfg Config) (Outcome, OpenAccount, error) {
	if cfg.Rate <= 0 && len(cfg.Stages) == 0 {
		return Outcome{}, OpenAccount{}, errors.New("execute: rate must be greater than 0")
	}
	sched := newSchedule(cfg.Rate, cfg.Stages, cfg.Ramp)
	sched.mix = cfg.Mix
	var next atomic.Int64
	var mu sync.Mutex
	var pending []pendingReq
	closed := cfg
	closed.Engine = nil // the pacer's workers wait on time, not on sockets
	out, err := drive(ctx, closed, func(window context.Context, c load.Client, sh *recorder.Shard, start int64, _ int) int64 {
		p, ok := openWorker(window, c, sh, &next, cfg.Requests, start, sched, cfg.Watch)
		if !ok {
			return 0
		}
		mu.Lock()
		pending = append(pending, p)
		mu.Unlock()
		if p.sent {
			return 1
		}
		return 0
	})
	if err != nil {
		return out, OpenAccount{}, err
	}
	// Due: the requests i with start + i*interval < Stop.
	span := float64(out.Stop - out.Start)
	due := sched.count(span)
	if cfg.Requests > 0 {
		due = min(due, cfg.Requests)
	}
	acc := OpenAccount{Due: due, Recorded: cfg.Recorder.Done()}
	acc.Unsent = max(acc.Due-acc.Recorded, 0)
	// The corrected latency of each unsent request: from its intended
	// start to the end of the run. First those a worker held, then those
	// no worker took.
	left := acc.Unsent
	for _, p := range pending {
		if left > 0 && p.intended < out.Stop {
			cfg.Recorder.RecordUnsent(out.Stop - p.intended)
			left--
			if p.sent {
				acc.InFlight++
			}
		}
	}
	for i := next.Load(); left > 0; i++ {
		at, ok := sched.at(i)
		if !ok {
			break
		}
		cfg.Recorder.RecordUnsent(out.Stop - (out.Start + at))
		left--
	}
	return out, acc, nil
}

// pendingReq is the request a worker held when the run ended: taken, due,
// and without an outcome.
type pendingReq struct {
	intended int64
	sent     bool // sent, and in flight when the window closed (drained)
}

// openWorker sends the requests it takes at their intended times while the
// window (ctx) is open. It returns the request it held without an outcome
// when the window closed, if any: one not yet sent, or one in flight then,
// which it let finish and did not record (drained).
func openWorker(ctx context.Context, c load.Client, sh *recorder.Shard, next *atomic.Int64, limit, start int64, sched *schedule, w *Watch) (pendingReq, bool) {
	var res load.Result
	pc := newPacer(ctx)
	defer pc.close()
	// A worker's first number is taken as the worker starts: late only
	// by how long the goroutine took to start (the client's lateness),
	// never because -c was full. Only a number taken late after a
	// request of its own says that every worker was busy: numbers go out
	// in order, so while any worker waits idle it holds an earlier one.
	first := true
	for ctx.Err() == nil {
		i := next.Add(1) - 1
		if limit > 0 && i >= limit {
			return pendingReq{}, false
		}
		at, ok := sched.at(i)
		if !ok {
			return pendingReq{}, false
		}
		due := start + at
		queued := !first && load.Now() >= due
		first = false
		if !queued && !pc.waitUntil(ctx, due) {
			return pendingReq{intended: due}, true
		}
		if ctx.Err() != nil {
			return pendingReq{intended: due}, true
		}
		res.Reset()
		if len(sched.mix) > 0 {
			res.Target = int(sched.mix[i%int64(len(sched.mix))])
		}
		res.Intended = due
		res.Queued = queued
		c.Do(&res)
		if ctx.Err() != nil {
			return pendingReq{intended: due, sent: true}, true
		}
		sh.Record(&res)
		if w != nil {
			w.observe(&res)
		}
	}
	return pendingReq{}, false
}
