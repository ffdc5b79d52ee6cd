package execute

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// UnreachableError is returned when no address of the target can be
// reached: a Unix socket path that is no socket, or a run none of whose
// dials reached the target (unless Options.KeepOnUnreachable).
type UnreachableError struct{ Err error }

// Error is the cause's message.
func (e *UnreachableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// CheckSockets checks, without connecting, the Unix socket paths of the
// target or of its upstreams (sockets.StatUnix): a connection without a
// request takes some servers down, so reachability over the network is
// decided by the run's own dials (Watch). It fails only when no
// address is left; a bad path in a cluster is reported on stderr and shows
// in the report as that address's connect failures.
func CheckSockets(t sockets.Target, ups []sockets.Addr, stderr io.Writer) error {
	if len(ups) == 0 {
		return sockets.StatUnix(t)
	}
	var firstErr error
	ok := 0
	for _, a := range ups {
		ut := t
		ut.Network, ut.Address = a.Network, a.Address
		if err := sockets.StatUnix(ut); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if len(ups) > 1 {
				fmt.Fprintf(stderr, "backbench: warning: upstream %s: %v\n", a, err)
			}
			continue
		}
		ok++
	}
	if ok == 0 {
		return firstErr
	}
	return nil
}

// DialError words a dial failure of upstream i (of ups; the target itself
// when ups is empty) as the unreachable error of exit status 1.
func DialError(t sockets.Target, ups []sockets.Addr, i int, err error) error {
	network, address := t.Network, t.Address
	if i >= 0 && i < len(ups) {
		network, address = ups[i].Network, ups[i].Address
	}
	hint := ""
	if sockets.IsUnverified(err) {
		hint = "; --insecure accepts it"
	}
	return fmt.Errorf("cannot connect to %s %s: %s%s", network, address, strings.TrimPrefix(err.Error(), "connect: "), hint)
}

// warnDeadUpstreams reports on stderr the upstreams of a cluster that no
// dial of the run reached (their failures are in the report).
func warnDeadUpstreams(t sockets.Target, ups []sockets.Addr, errs []error, stderr io.Writer) {
	if len(ups) < 2 {
		return
	}
	for i, err := range errs {
		if err != nil && i < len(ups) {
			fmt.Fprintf(stderr, "backbench: warning: upstream %s: %v\n", ups[i], DialError(t, ups, i, err))
		}
	}
}

// Watch follows the dials of a run, so that reachability is decided by the
// run's own connections and never by a connection without a request (some
// servers, Ruby's fcgi.rb among them, exit on one):
//
//   - Unreachable: while no dial of the run has succeeded, a dial that
//     fails because nothing accepts at the address (load.Unreachable) stops
//     the run at once. With several upstreams, the run stops only when every
//     upstream has failed so and none has succeeded.
//   - Lost: a target that accepted connections and then refuses them is
//     lost; the first such failure is kept (when, after how many completed
//     requests, why) and, with StopOnLoss, ends the run. Only for one
//     address: in a cluster the other upstreams go on.
//
// A Watch serves one run. Its hot-path cost is one atomic load per result.
type Watch struct {
	// Upstreams is the number of addresses of the target (0 or 1: one).
	Upstreams int
	// StopOnLoss ends the run when the target is lost.
	StopOnLoss bool
	// KeepOnUnreachable lets the run go on when its target is unreachable
	// (its failures are data); Unreachable still says so.
	KeepOnUnreachable bool
	// OnReach, when set, is called once, from a worker, by the first
	// result that reached the target.
	OnReach func()

	reached   atomic.Bool
	upReached []atomic.Bool
	cancel    context.CancelFunc
	rec       *recorder.Recorder
	start     int64

	mu          sync.Mutex
	upErr       []error
	unreachable error
	lost        *stats.BackendLost
}

func (w *Watch) begin(cancel context.CancelFunc, rec *recorder.Recorder, start int64) {
	w.cancel, w.rec, w.start = cancel, rec, start
	n := max(w.Upstreams, 1)
	w.upReached = make([]atomic.Bool, n)
	w.upErr = make([]error, n)
}

// observe sees every recorded result.
func (w *Watch) observe(res *load.Result) {
	up := res.Upstream
	if up < 0 || up >= len(w.upReached) {
		up = 0
	}
	if res.Class != load.Connect {
		if !w.upReached[up].Load() {
			w.upReached[up].Store(true)
			if w.reached.CompareAndSwap(false, true) && w.OnReach != nil {
				w.OnReach()
			}
		}
		return
	}
	if !load.Unreachable(res.Err) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.upErr[up] == nil && !w.upReached[up].Load() {
		w.upErr[up] = res.Err
	}
	if !w.reached.Load() {
		for _, e := range w.upErr {
			if e == nil {
				return
			}
		}
		if w.unreachable == nil {
			w.unreachable = w.upErr[0]
			if !w.KeepOnUnreachable {
				w.cancel()
			}
		}
		return
	}
	if w.lost != nil || len(w.upReached) > 1 {
		return
	}
	w.lost = &stats.BackendLost{AfterRequests: w.rec.Completed(), AtSeconds: float64(res.Done-w.start) / 1e9,
		Error: strings.TrimPrefix(res.Err.Error(), "connect: ")}
	if w.StopOnLoss {
		w.cancel()
	}
}

// Unreachable returns the dial error that stopped the run because no
// address could be reached; nil if none did.
func (w *Watch) Unreachable() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reached.Load() {
		return nil
	}
	return w.unreachable
}

// UpstreamErrors returns, per upstream, the first unreachable error of an
// upstream that no dial of the run reached; nil for the others.
func (w *Watch) UpstreamErrors() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]error, len(w.upErr))
	for i, e := range w.upErr {
		if i < len(w.upReached) && !w.upReached[i].Load() {
			out[i] = e
		}
	}
	return out
}

// Lost returns when the target was lost during the run; nil if it was not.
func (w *Watch) Lost() *stats.BackendLost {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}
