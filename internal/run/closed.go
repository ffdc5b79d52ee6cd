// Package run drives load. In the closed model (Closed), C workers each send
// one request at a time over their own client until a shared request budget
// or a time limit runs out. In the open model (Open), requests are scheduled
// at a constant rate and C is only the ceiling of requests in flight.
//
// Counts are exact: the budget is one atomic counter, so N requests are sent
// whatever N mod C is, and every request that was sent is recorded once,
// except those cut short by the end of a time limit or by an interrupt (they
// are in flight when the run stops and are neither complete nor failed).
//
// The runner knows no protocol: clients arrive through a load.ClientFactory.
package run

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

// Config configures a closed-model run.
type Config struct {
	// Concurrency is the number of workers, each with its own client.
	Concurrency int
	// Requests is the total number of requests; 0 means no count limit
	// (a Duration is then required).
	Requests int64
	// Duration is the time limit of the run; 0 means none.
	Duration time.Duration
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
	// Stages, when not empty, are the concurrency of each stage of a
	// closed-model run, held or (Ramp) moved linearly from the previous
	// stage's: worker i works while the concurrency in force is above i
	// and waits otherwise (Concurrency should be the largest).
	Stages []stats.Stage
	Ramp   bool
}

// Engine runs the workers of a run: work(i) for every client i,
// concurrently, returning when every call has returned.
type Engine interface {
	Run(clients []load.Client, work func(i int))
}

// Outcome describes how a run went.
type Outcome struct {
	// Start and End bound the run, in load.Now nanoseconds: End is when
	// the last worker stopped. Stop is when the run was told to stop (its
	// time limit, or an interrupt), or End if earlier: the end of the
	// schedule in the open model.
	Start, End, Stop int64
	// Interrupted reports that ctx was cancelled before the run ended.
	Interrupted bool
	// Health is the client's CPU use and scheduling delay during the run.
	Health Health
}

// Elapsed returns the run's wall time.
func (o Outcome) Elapsed() time.Duration { return time.Duration(o.End - o.Start) }

// Closed runs the closed model. It returns when the budget is spent, the
// time limit has passed, or ctx is cancelled (Outcome.Interrupted). An error
// is returned only when a client cannot be made.
func Closed(ctx context.Context, cfg Config) (Outcome, error) {
	var budget atomic.Int64
	budget.Store(cfg.Requests)
	limited := cfg.Requests > 0
	return drive(ctx, cfg, func(ctx context.Context, c load.Client, sh *recorder.Shard, start int64, i int) {
		var turn func() bool
		if len(cfg.Stages) > 0 {
			turn = stageTurn(ctx, cfg.Stages, cfg.Ramp, start, i)
		}
		worker(ctx, c, sh, &budget, limited, cfg.Watch, turn)
	})
}

// drive checks cfg, makes one client per worker, runs work in a goroutine
// per worker until all return, within the time limit, and measures the
// client's health meanwhile. work gets the run's context, its client, its
// shard and the run's start (load.Now nanoseconds).
func drive(ctx context.Context, cfg Config, work func(context.Context, load.Client, *recorder.Shard, int64, int)) (Outcome, error) {
	if cfg.Concurrency < 1 {
		return Outcome{}, errors.New("run: concurrency must be at least 1")
	}
	if cfg.Requests <= 0 && cfg.Duration <= 0 {
		return Outcome{}, errors.New("run: need a request count or a duration")
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.Duration > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeout(runCtx, cfg.Duration)
		defer stop()
	}
	var stopAt atomic.Int64
	defer context.AfterFunc(runCtx, func() { stopAt.Store(load.Now()) })()
	clients, err := makeClients(runCtx, cfg.Factory, cfg.Concurrency)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Start: load.Now()}
	cfg.Recorder.Begin(out.Start)
	if cfg.Watch != nil {
		cfg.Watch.begin(cancel, cfg.Recorder, out.Start)
	}
	health := startHealth()
	one := func(i int) {
		defer clients[i].Close()
		work(runCtx, clients[i], cfg.Recorder.Shard(i), out.Start, i)
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
// lock per request beyond the shard's short lock.
func worker(ctx context.Context, c load.Client, sh *recorder.Shard, budget *atomic.Int64, limited bool, w *Watch, turn func() bool) {
	var res load.Result
	for ctx.Err() == nil {
		if turn != nil && !turn() {
			return
		}
		if limited && budget.Add(-1) < 0 {
			return
		}
		res.Reset()
		c.Do(&res)
		if res.Class != load.OK && ctx.Err() != nil {
			// Cut short by the end of the run (time limit or interrupt):
			// neither complete nor failed.
			return
		}
		sh.Record(&res)
		if w != nil {
			w.observe(&res)
		}
	}
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
