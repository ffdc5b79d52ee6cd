package plan

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
)

// TestReplayTruth replays a generated 10,000-line access log (combined
// lines, a few common ones, POSTs and bad lines among them) against
// built-in backends that count what they receive: each path arrives in
// its share of the log within 1%, the counts add up to the run's, and
// the lines left out are counted in the summary.
func TestReplayTruth(t *testing.T) {
	dir := t.TempDir()
	shares := []struct {
		req   string
		share float64
	}{{"GET /", 0.40}, {"GET /product/42", 0.25}, {"HEAD /health", 0.10}, {"GET /search?q=x", 0.14}, {"GET /static/app.css", 0.08}, {"POST /checkout", 0.03}}
	rng := rand.New(rand.NewSource(48))
	var b strings.Builder
	want := map[string]int64{}
	const lines = 10000
	var replayed, malformed int64
	for i := 1; i <= lines; i++ {
		if i%997 == 0 {
			b.WriteString("this line is not a log line\n")
			malformed++
			continue
		}
		x, req := rng.Float64(), shares[len(shares)-1].req
		for _, s := range shares {
			if x < s.share {
				req = s.req
				break
			}
			x -= s.share
		}
		if i%3 == 0 {
			fmt.Fprintf(&b, "10.0.0.%d - - [07/Dec/2026:12:00:%02d +0000] \"%s HTTP/1.1\" 200 512\n", i%250, i%60, req)
		} else {
			fmt.Fprintf(&b, "10.0.0.%d - - [07/Dec/2026:12:00:%02d +0000] \"%s HTTP/1.1\" 200 512 \"-\" \"bot/1.0 (+\\\"x\\\")\"\n", i%250, i%60, req)
		}
		if !strings.HasPrefix(req, "POST") {
			m, u, _ := strings.Cut(req, " ")
			p, _, _ := strings.Cut(u, "?")
			want[m+" "+p]++
			replayed++
		}
	}
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ proto, network string }{{fixtures.ProtoHTTP, "tcp"}, {fixtures.ProtoFCGI, "unix"}} {
		t.Run(c.proto+"/"+c.network, func(t *testing.T) {
			tally := &fixtures.Tally{}
			srv := fixtures.StartTB(t, c.proto, c.network, fixtures.Options{BodyBytes: 10, Tally: tally})
			o := Defaults(srv.URL("/"))
			o.Requests, o.RequestsSet, o.Concurrency, o.KeepAlive, o.AccessLog = replayed, true, 4, true, log
			l, err := o.Build()
			if err != nil {
				t.Fatal(err)
			}
			run, err := execute.Run(context.Background(), l.Plan, execute.Options{Discard: true})
			if err != nil {
				t.Fatal(err)
			}
			s := run.Summary
			if s.Complete != replayed || s.Failed != 0 {
				t.Fatalf("complete %d failed %d, want %d", s.Complete, s.Failed, replayed)
			}
			seen := tally.Snapshot()
			var sum int64
			for _, ts := range s.Targets {
				sum += ts.Requests
			}
			if sum != replayed || len(s.Targets) != 5 {
				t.Errorf("%d targets adding up to %d, want 5 and %d", len(s.Targets), sum, replayed)
			}
			for key, n := range want {
				got := seen[key].N
				if math.Abs(float64(got-n)) > 0.01*float64(n) {
					t.Errorf("%s: the server saw %d, the log has %d", key, got, n)
				}
			}
			if len(seen) != len(want) {
				t.Errorf("the server saw %d requests, want %d: %v", len(seen), len(want), seen)
			}
			r := s.Replay
			if r == nil || r.Lines != lines || r.Replayed != replayed || r.Malformed != malformed || r.Skipped != lines-replayed-malformed ||
				r.FirstBadLine == 0 || r.File != log {
				t.Errorf("replay %+v, want %d lines, %d replayed, %d malformed", r, lines, replayed, malformed)
			}
		})
	}
}

// TestReplayErrors: a log with no usable line is a usage error naming
// its first bad line; the log flags go together.
func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(log, []byte("\nnot a log\n1.2.3.4 - - [t] \"POST /x HTTP/1.1\" 200 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Defaults("http://127.0.0.1:1/")
	o.AccessLog = log
	if _, err := o.Build(); err == nil || !strings.HasPrefix(err.Error(), log+":2: no request to replay: does not match the log format") {
		t.Errorf("bad log: %v", err)
	}
	o.ReplayMethods = "POST"
	if _, err := o.Build(); err != nil {
		t.Errorf("POST replayed: %v", err)
	}
	o.ReplayMethods = "GET HEAD"
	if _, err := o.Build(); err == nil || !strings.Contains(err.Error(), "--replay-methods") {
		t.Errorf("bad methods: %v", err)
	}
	o = Defaults("http://127.0.0.1:1/")
	o.LogFormat = "common"
	if _, err := o.Build(); err == nil || !strings.Contains(err.Error(), "add --access-log") {
		t.Errorf("--log-format alone: %v", err)
	}
	o.AccessLog, o.Targets = log, log
	if _, err := o.Build(); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("both: %v", err)
	}
	o = Defaults("http://127.0.0.1:1/")
	o.AccessLog, o.LogFormat = log, "$remote_addr $status"
	if _, err := o.Build(); err == nil || !strings.Contains(err.Error(), "want $request") {
		t.Errorf("format: %v", err)
	}
}
