package run

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// OpenConfig configures an open-model run: requests are scheduled at a
// constant rate whatever the responses do, and each latency is measured from
// its intended send time (the correction for coordinated omission that wrk2
// made known).
type OpenConfig struct {
	// Rate is the arrival rate in requests per second.
	Rate float64
	// Concurrency is the ceiling of requests in flight: the number of
	// workers, each with its own client. When every worker is busy, the
	// next request is sent late, and its latency still counts from its
	// intended time.
	Concurrency int
	// Requests is the number of requests to schedule; 0 means no count
	// limit (a Duration is then required).
	Requests int64
	// Duration is the time limit of the run; 0 means none.
	Duration time.Duration
	// Factory makes one client per worker.
	Factory load.ClientFactory
	// Recorder receives every result.
	Recorder *stats.Recorder
}

// Open runs the open model. Workers take request numbers i = 0, 1, 2 ... from
// one atomic counter; request i is due at start + i/Rate. A worker that takes
// a number before its time sleeps until then; one that takes it late (it was
// busy: the in-flight ceiling held the rate back) sends at once. The
// recorder sees Intended on every result, and tells the two kinds of
// lateness apart.
func Open(ctx context.Context, cfg OpenConfig) (Outcome, error) {
	if cfg.Rate <= 0 {
		return Outcome{}, errors.New("run: rate must be greater than 0")
	}
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
	clients, err := makeClients(runCtx, cfg.Factory, cfg.Concurrency)
	if err != nil {
		return Outcome{}, err
	}
	interval := float64(time.Second) / cfg.Rate
	var next atomic.Int64
	out := Outcome{Start: load.Now()}
	probe := startHealth()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			openWorker(runCtx, c, cfg.Recorder.Shard(i), &next, cfg.Requests, out.Start, interval)
		}()
	}
	wg.Wait()
	out.End = load.Now()
	out.Health = probe.finish()
	out.Interrupted = ctx.Err() != nil
	return out, nil
}

func openWorker(ctx context.Context, c load.Client, sh *stats.Shard, next *atomic.Int64, limit, start int64, interval float64) {
	var res load.Result
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for ctx.Err() == nil {
		i := next.Add(1) - 1
		if limit > 0 && i >= limit {
			return
		}
		due := start + int64(float64(i)*interval)
		wait := due - load.Now()
		if wait > 0 {
			timer.Reset(time.Duration(wait))
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		res.Reset()
		res.Intended = due
		res.Queued = wait <= 0
		c.Do(&res)
		if res.Class != load.OK && ctx.Err() != nil {
			return
		}
		sh.Record(&res)
	}
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
