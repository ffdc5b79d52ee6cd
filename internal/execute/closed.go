package execute

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
)

// Config configures a run: the plan's shape, by reference, and what runs it.
type Config struct {
	// Shape is the run's shape, the plan's own (Plan.Shape): Concurrency
	// workers, each with its own client; Requests in all (0: no count
	// limit, a Duration is then required); Duration, the time limit (0:
	// none). Closed reads Stages as the concurrency of each stage, held
	// or (Ramp) moved linearly from the previous stage's: worker i works
	// while the concurrency in force is above i and waits otherwise
	// (Concurrency should be the largest). Open reads Rate, or Stages as
	// the rate of each stage.
	*stats.Shape
	// Factory makes one client per worker.
	Factory load.ClientFactory
	// Recorder receives every result.
	Recorder *recorder.Recorder
	// Watch, when set, follows the run's dials and stops the run when its
	// target cannot be reached (see Watch).
	Watch *Watch
	// Engine, when set, runs the workers of a closed-model run; nil: a
	// goroutine per worker.
	Engine Engine
	// Mix, when not empty, is the schedule of a mix of requests
	// (internal/targets.Schedule): the run's k-th request (k from 0, in
	// the order workers take them) sends request Mix[k % len(Mix)]
	// (load.Result.Target). With a request budget k is the budget's own
	// count; without one, each worker counts its own requests from its own
	// place in the schedule (worker i of c from i/c of it), so that no
	// counter is shared: every worker sends the mix in its proportions,
	// and a target's count is within one per worker of its share.
	Mix []int32
}

// Engine runs the workers of a run: work(i) for every client i,
// concurrently, returning when every call has returned.
type Engine interface {
	Run(clients []load.Client, work func(i int))
}

// Outcome describes how a run went.
type Outcome struct {
	// Start and End bound the run, in load.Now nanoseconds: End is when
	// the last worker stopped, the requests drained after the window
	// included. Stop is when the window closed (the time limit, a stop by
	// the Watch, or an interrupt), or End if earlier (the budget was spent,
	// or the open model's schedule ended): Stop − Start is the window
	// (Window), whose counts and rates the record gives.
	Start, End, Stop int64
	// Drained counts the requests in flight when the window closed: let
	// finish (or, at an interrupt, cut) and counted neither complete nor
	// failed.
	Drained int64
	// Interrupted reports that ctx was cancelled before the run ended.
	Interrupted bool
	// Health is the client's CPU use and scheduling delay during the run.
	Health Health
}

// Elapsed returns the run's wall time, the drain after the window included.
func (o Outcome) Elapsed() time.Duration { return time.Duration(o.End - o.Start) }

// Window returns the length of the run's measurement window: from its start
// to the time limit, or to its end when that came first.
func (o Outcome) Window() time.Duration { return time.Duration(o.Stop - o.Start) }

// Closed runs the closed model. It returns when the budget is spent, the
// time limit has passed, or ctx is cancelled (Outcome.Interrupted). An error
// is returned only when a client cannot be made.
func Closed(ctx context.Context, cfg Config) (Outcome, error) {
	var budget atomic.Int64
	budget.Store(cfg.Requests)
	limited := cfg.Requests > 0
	return drive(ctx, cfg, func(window context.Context, c load.Client, sh *recorder.Shard, start int64, i int) int64 {
		var turn func() bool
		if len(cfg.Stages) > 0 {
			turn = stageTurn(window, cfg.Stages, cfg.Ramp, start, i)
		}
		var m *mix
		if n := int64(len(cfg.Mix)); n > 0 {
			m = &mix{sched: cfg.Mix, total: cfg.Requests, next: int64(i) * n / int64(cfg.Concurrency)}
		}
		return worker(window, c, sh, &budget, limited, cfg.Watch, turn, m)
	})
}

// drive checks cfg, makes one client per worker, runs work in a goroutine
// per worker until all return, and measures the client's health meanwhile.
// work gets the run's window (a context that ends when no request may
// start any more: the time limit, a stop by the Watch, or ctx's end), its
// client, its shard and the run's start (load.Now nanoseconds); it returns
// the number of its requests drained (see Outcome.Drained). The clients
// are made with ctx, not with the window: the window's end stops the
// workers between requests and never cuts one in flight.
func drive(ctx context.Context, cfg Config, work func(context.Context, load.Client, *recorder.Shard, int64, int) int64) (Outcome, error) {
	if cfg.Concurrency < 1 {
		return Outcome{}, errors.New("execute: concurrency must be at least 1")
	}
	if cfg.Requests <= 0 && cfg.Duration <= 0 {
		return Outcome{}, errors.New("execute: need a request count or a duration")
	}
	// The clients' context ends with ctx, but only after the window has
	// closed: a request that an interruption cuts short then finds the
	// window closed and is drained, never counted as failed (ctx's own
	// cancellation reaches the window after it wakes those waiting on
	// ctx, and a worker woken first would record the cut request, and
	// every request it started until the window closed, as failures).
	// Its parent never ends, so that a run that ends by itself (a budget
	// spent, a time limit) cuts nothing in flight.
	cctx, cancelClients := context.WithCancel(context.WithoutCancel(ctx))
	window, closeWindow := context.WithCancel(ctx)
	defer closeWindow()
	defer context.AfterFunc(ctx, func() { closeWindow(); cancelClients() })()
	clients, err := makeClients(cctx, cfg.Factory, cfg.Concurrency)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Start: load.Now()}
	if cfg.Duration > 0 {
		var stop context.CancelFunc
		window, stop = context.WithDeadline(window, load.Time(out.Start+int64(cfg.Duration)))
		defer stop()
	}
	var stopAt atomic.Int64
	defer context.AfterFunc(window, func() { stopAt.Store(load.Now()) })()
	cfg.Recorder.Begin(out.Start)
	if cfg.Watch != nil {
		cfg.Watch.begin(closeWindow, cfg.Recorder, out.Start)
	}
	health := startHealth()
	var drained atomic.Int64
	one := func(i int) {
		defer clients[i].Close()
		if n := work(window, clients[i], cfg.Recorder.Shard(i), out.Start, i); n > 0 {
			drained.Add(n)
		}
	}
	if cfg.Engine != nil {
		cfg.Engine.Run(clients, one)
	} else {
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() { one(i) })
		}
		wg.Wait()
	}
	out.End = load.Now()
	out.Stop = out.End
	if t := stopAt.Load(); t != 0 && t < out.End {
		out.Stop = t
	}
	out.Drained = drained.Load()
	out.Health = health.finish()
	out.Interrupted = ctx.Err() != nil
	return out, nil
}

// makeClients makes one client per worker, closing those made if one fails.
func makeClients(ctx context.Context, f load.ClientFactory, n int) ([]load.Client, error) {
	clients := make([]load.Client, n)
	for i := range clients {
		c, err := f(ctx)
		if err != nil {
			for _, c := range clients[:i] {
				c.Close()
			}
			return nil, err
		}
		clients[i] = c
	}
	return clients, nil
}

// worker is the hot loop of one worker: no allocation, channel or shared
// lock per request beyond the shard's short lock. It starts requests while
// the window is open; a request that ends after the window closed is
// drained: not recorded, and counted in the number it returns.
func worker(window context.Context, c load.Client, sh *recorder.Shard, budget *atomic.Int64, limited bool, w *Watch, turn func() bool, m *mix) int64 {
	var res load.Result
	for window.Err() == nil {
		if turn != nil && !turn() {
			return 0
		}
		left := int64(0)
		if limited {
			if left = budget.Add(-1); left < 0 {
				return 0
			}
		}
		res.Reset()
		if m != nil {
			res.Target = m.pick(limited, left)
		}
		c.Do(&res)
		if window.Err() != nil {
			// In flight when the window closed: drained, not counted.
			return 1
		}
		sh.Record(&res)
		if w != nil {
			w.observe(&res)
		}
	}
	return 0
}

// mix is one worker's view of a run's schedule of a mix of requests:
// the schedule, the run's budget, and for a run without one, where the
// worker is in the schedule (Config.Mix).
type mix struct {
	sched []int32
	total int64 // the budget; 0: none (next counts)
	next  int64 // the worker's next place in the schedule, without a budget
}

// pick returns the request of the next one taken: with a budget, the
// k-th of the run when left remain after it; otherwise the worker's next.
func (m *mix) pick(limited bool, left int64) int {
	k := m.total - 1 - left
	if !limited {
		k = m.next
		if m.next++; m.next == int64(len(m.sched)) {
			m.next = 0
		}
	}
	return int(m.sched[k%int64(len(m.sched))])
}

// stageTurn returns the wait of worker i of a closed-model run in stages:
// it returns at once while the concurrency in force (stats.StageValue)
// is above i, and otherwise waits, looking again every stageTick, until
// it is or ctx ends (then false). It allocates nothing while the worker
// may work.
func stageTurn(ctx context.Context, stages []stats.Stage, ramp bool, start int64, i int) func() bool {
	var t *time.Timer
	return func() bool {
		for float64(i) >= stats.StageValue(stages, ramp, time.Duration(load.Now()-start)) {
			if t == nil {
				t = time.NewTimer(stageTick)
			} else {
				t.Reset(stageTick)
			}
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
		return ctx.Err() == nil
	}
}

// stageTick is how often a waiting worker of a run in stages looks at the
// concurrency in force.
const stageTick = 5 * time.Millisecond
