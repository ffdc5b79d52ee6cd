package main

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// runFor runs the loop against url for d with 3 connections on 2 threads.
func runFor(t *testing.T, url string, keep bool, d time.Duration) totals {
	t.Helper()
	cfg, err := newConfig(url, keep)
	if err != nil {
		t.Fatal(err)
	}
	cfg.measure = true
	var stop atomic.Bool
	time.AfterFunc(d, func() { stop.Store(true) })
	return run(cfg, 3, 2, &stop)
}

// settled returns srv's count of accepted connections once it has stopped
// changing: connections a run made just before it stopped may still wait in
// the listen queue, and must not count for the next run.
func settled(srv *fixtures.Server) int64 {
	n := srv.Accepted()
	for {
		time.Sleep(50 * time.Millisecond)
		m := srv.Accepted()
		if m == n {
			return n
		}
		n = m
	}
}

// TestLoop: both modes, TCP and Unix, every body framing, bodies over
// several reads: whole responses counted, none failed, every byte read, one
// connection per request without keep-alive and a few with it.
func TestLoop(t *testing.T) {
	const body = 100_000
	for _, network := range []string{"tcp", "unix"} {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{BodyBytes: body})
		for _, path := range []string{"/", fixtures.HTTPPathChunked, fixtures.HTTPPathClose} {
			for _, keep := range []bool{false, true} {
				acc := settled(srv)
				tot := runFor(t, srv.URL(path), keep, 200*time.Millisecond)
				conns := settled(srv) - acc
				if tot.ok == 0 || tot.failed != 0 || tot.non2xx != 0 {
					t.Fatalf("%s %s keep=%v: %d ok, %d failed, %d non-2xx", network, path, keep, tot.ok, tot.failed, tot.non2xx)
				}
				if tot.bytes < tot.ok*body {
					t.Errorf("%s %s keep=%v: %d bytes for %d responses of %d", network, path, keep, tot.bytes, tot.ok, body)
				}
				var recorded int64
				for _, n := range tot.hist {
					recorded += int64(n)
				}
				if recorded != tot.ok {
					t.Errorf("%s %s keep=%v: %d latencies for %d responses", network, path, keep, recorded, tot.ok)
				}
				if keep && path != fixtures.HTTPPathClose && conns > 3 {
					t.Errorf("%s %s: keep-alive used %d connections for 3", network, path, conns)
				}
				if (!keep || path == fixtures.HTTPPathClose) && conns < tot.ok {
					t.Errorf("%s %s keep=%v: %d connections for %d responses", network, path, keep, conns, tot.ok)
				}
			}
		}
	}
}

// TestFaults: broken responses are failures, never counts, and the loop
// ends on time.
func TestFaults(t *testing.T) {
	for _, fault := range []string{fixtures.FaultBadStatus, fixtures.FaultShortBody, fixtures.FaultReset,
		fixtures.FaultGarbage, fixtures.FaultChunkedBadSize, fixtures.FaultChunkedCut} {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 1000, Fault: fault})
		path := "/"
		if fault == fixtures.FaultChunkedBadSize || fault == fixtures.FaultChunkedCut {
			path = fixtures.HTTPPathChunked
		}
		for _, keep := range []bool{false, true} {
			tot := runFor(t, srv.URL(path), keep, 100*time.Millisecond)
			if tot.ok != 0 || tot.failed == 0 {
				t.Errorf("%s keep=%v: %d ok, %d failed", fault, keep, tot.ok, tot.failed)
			}
		}
	}
}

// TestRefused: a closed port is failures, retried at a bounded pace.
func TestRefused(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	url := srv.URL("/")
	srv.Close()
	tot := runFor(t, url, false, 100*time.Millisecond)
	if tot.ok != 0 || tot.failed == 0 || tot.failed > 3*20 {
		t.Errorf("refused: %d ok, %d failed", tot.ok, tot.failed)
	}
}

// TestBadURL: only plain http targets.
func TestBadURL(t *testing.T) {
	for _, u := range []string{"fcgi://127.0.0.1:9000/", "https://127.0.0.1/", "nonsense"} {
		if _, err := newConfig(u, false); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}
