package execute_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
)

// TestWaitingAsAbDefinesIt: Waiting runs from the request's last byte
// written to the response's first byte read, and Processing to done, which
// on a connection the server closes is the server's close (ab's done). A
// server that holds each connection 5 ms after its whole response before
// closing (Thin's or Ruby fcgi's late close) shows Processing at least 5 ms
// above Waiting, whatever the machine's load, since the close cannot come
// sooner. On kept connections, against a server that writes each response
// whole in one write, the two agree within 0.1 ms (medians: a single
// preempted read could part them). Both protocols, both engines.
func TestWaitingAsAbDefinesIt(t *testing.T) {
	const closeDelay = 5 * time.Millisecond
	for _, engine := range enginesToRun(t) {
		for _, proto := range []string{fixtures.ProtoHTTP, fixtures.ProtoFCGI} {
			for _, network := range []string{"tcp", "unix"} {
				name := engine + "/" + proto + "/" + network
				t.Run(name, func(t *testing.T) {
					late := fixtures.StartTB(t, proto, network, fixtures.Options{
						Behaviour: fixtures.Behaviour{CloseDelay: closeDelay}})
					kept := fixtures.StartTB(t, proto, network, fixtures.Options{})
					// A worker whose server once let sockets.LingerGrace
					// pass (a starved machine) stops waiting for closes:
					// hence the retries; a broken Waiting fails them all.
					retryOpenSpeed(t, func() (bad []string) {
						s := runBenchPlan(t, context.Background(), benchLoad{n: 40, c: 2, timeout: 30, engine: engine}.options(late.URL("/")),
							execute.Options{Quiet: true, Observe: true}).Summary
						if s.Complete != 40 || s.Failed != 0 {
							t.Fatalf("late close: %d complete, %d failed", s.Complete, s.Failed)
						}
						ct := s.ConnectionTimes
						if gap := ct.Processing.Median - ct.Waiting.Median; gap < 4 {
							bad = append(bad, fmt.Sprintf("late close: Processing median %.3f ms, Waiting %.3f ms: want Processing ≥ Waiting + 4 ms "+
								"(the server closes 5 ms after its response)", ct.Processing.Median, ct.Waiting.Median))
						}
						if ct.Waiting.Median >= float64(closeDelay.Milliseconds()) {
							bad = append(bad, fmt.Sprintf("late close: Waiting median %.3f ms counts the server's close", ct.Waiting.Median))
						}

						s = runBenchPlan(t, context.Background(), benchLoad{n: 400, c: 2, timeout: 30, keepAlive: true, engine: engine}.options(kept.URL("/")),
							execute.Options{Quiet: true, Observe: true}).Summary
						if s.Complete != 400 || s.Failed != 0 {
							t.Fatalf("kept: %d complete, %d failed", s.Complete, s.Failed)
						}
						ct = s.ConnectionTimes
						if d := math.Abs(ct.Processing.Median - ct.Waiting.Median); d > 0.1 {
							bad = append(bad, fmt.Sprintf("kept: Processing median %.3f ms, Waiting %.3f ms: want equal within 0.1 ms",
								ct.Processing.Median, ct.Waiting.Median))
						}
						return bad
					})
				})
			}
		}
	}
}
