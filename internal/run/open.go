package run

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// OpenConfig configures an open-model run: requests are scheduled at a
// constant rate whatever the responses do, and each latency is measured from
// its intended send time (the correction for coordinated omission that wrk2
// made known). Config.Concurrency is the ceiling of requests in flight: when
// every worker is busy, the next request is sent late, and its latency still
// counts from its intended time. Config.Requests is the number of requests
// to schedule.
type OpenConfig struct {
	Config
	// Rate is the arrival rate in requests per second.
	Rate float64
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
	interval := float64(time.Second) / cfg.Rate
	var next atomic.Int64
	return drive(ctx, cfg.Config, func(ctx context.Context, c load.Client, sh *stats.Shard, start int64) {
		openWorker(ctx, c, sh, &next, cfg.Requests, start, interval, cfg.Watch)
	})
}

func openWorker(ctx context.Context, c load.Client, sh *stats.Shard, next *atomic.Int64, limit, start int64, interval float64, w *Watch) {
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
		if w != nil {
			w.observe(&res)
		}
	}
}
