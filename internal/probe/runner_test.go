package probe

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// testRequest is the request of the runner's tests: HTTP/1.1, kept.
const testRequest = "GET / HTTP/1.1\r\nHost: backbench\r\n\r\n"

// askHTTP is an Ask of testRequest that reads the response head (the
// built-in backend answers an empty body by default) and says its status
// line.
func askHTTP(ctx context.Context, c *Conn) (Answer, error) {
	c.Exchange(ctx, time.Minute)
	if _, err := c.Write([]byte(testRequest)); err != nil {
		return Answer{}, err
	}
	status := ""
	for {
		line, err := c.In.ReadSlice('\n')
		if err != nil {
			return Answer{Got: status}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return Answer{Got: status}, nil
		}
		if status == "" {
			status = string(line)
		}
	}
}

func runnerFor(t *testing.T, s *fixtures.Server, timeout time.Duration) *Runner {
	t.Helper()
	tg, err := sockets.ParseTarget(s.URL("/"))
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Dialer: sockets.NewDialer(tg, 0), Timeout: timeout, Inside: "the body"}
}

// TestRunnerAnswered: against a backend that answers, Run hands a
// connection to the step and Reuse and MaxRequests give their verdicts
// and evidence, on TCP and on a Unix socket.
func TestRunnerAnswered(t *testing.T) {
	ctx := context.Background()
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{})
			r := runnerFor(t, s, 5*time.Second)
			var dials []error
			r.Dialed = func(err error) { dials = append(dials, err) }

			var chk Check
			served := 0
			ran := r.Run(ctx, &chk, time.Time{}, func(c *Conn) {
				served = r.Reuse(ctx, c, &chk, Reuse{First: "request 1 (test)", Ask: askHTTP})
			})
			want := "request 1 (test): HTTP/1.1 200 OK; request 2 answered on the same connection (HTTP/1.1 200 OK)"
			if !ran || served != 2 || chk.Verdict != VerdictHonored || chk.Evidence != want {
				t.Errorf("reuse: ran %v, served %d, %q %q\nwant %q", ran, served, chk.Verdict, chk.Evidence, want)
			}
			if len(dials) != 1 || dials[0] != nil {
				t.Errorf("dials told: %v", dials)
			}

			m := r.MaxRequests(ctx, Repeat{What: "test requests", Bound: 5, Time: time.Minute, Ask: askHTTP})
			if m.Verdict != VerdictNotReached || m.Served != 5 || m.Bound != 5 || m.Requests != nil ||
				m.Evidence != "5 test requests answered on one connection, still open" {
				t.Errorf("max requests: %+v", m)
			}
		})
	}
}

// TestRunnerClosesAfter: a backend that closes after each answer (Reuse:
// "ignored") or after three on one connection (MaxRequests: "measured").
func TestRunnerClosesAfter(t *testing.T) {
	ctx := context.Background()
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			off := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}})
			r := runnerFor(t, off, 5*time.Second)
			var chk Check
			r.Run(ctx, &chk, time.Time{}, func(c *Conn) {
				r.Reuse(ctx, c, &chk, Reuse{First: "request 1 (test)", Ask: askHTTP})
			})
			if chk.Verdict != VerdictIgnored || !strings.HasPrefix(chk.Evidence, "request 1 (test): HTTP/1.1 200 OK; the server closed the connection after it (request 2: ") {
				t.Errorf("reuse: %q %q", chk.Verdict, chk.Evidence)
			}

			three := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 3}})
			m := runnerFor(t, three, 5*time.Second).MaxRequests(ctx, Repeat{What: "test requests", Bound: 10, Time: time.Minute, Ask: askHTTP})
			if m.Verdict != VerdictMeasured || m.Requests == nil || *m.Requests != 3 || m.Served != 3 ||
				m.Evidence != "3 test requests answered, then the server closed the connection" {
				t.Errorf("max requests: %+v", m)
			}
		})
	}
}

// TestRunnerTimesOut: a backend that never answers gives "no answer" and
// says the timeout; the context's end ends the wait too.
func TestRunnerTimesOut(t *testing.T) {
	ctx := context.Background()
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{Fault: fixtures.FaultHang})
			r := runnerFor(t, s, 200*time.Millisecond)
			ask := func(ctx context.Context, c *Conn) (Answer, error) {
				c.Exchange(ctx, r.Timeout)
				if _, err := c.Write([]byte(testRequest)); err != nil {
					return Answer{}, err
				}
				_, err := c.In.ReadByte()
				return Answer{Got: "got nothing"}, err
			}
			var chk Check
			r.Run(ctx, &chk, time.Time{}, func(c *Conn) {
				r.Reuse(ctx, c, &chk, Reuse{First: "request 1 (test)", Ask: ask})
			})
			if chk.Verdict != VerdictNoAnswer || chk.Evidence != "request 1 (test): got nothing; no answer within 200ms" {
				t.Errorf("reuse: %q %q", chk.Verdict, chk.Evidence)
			}

			// A check whose limit has passed is not sent.
			chk = Check{}
			called := false
			if r.Run(ctx, &chk, time.Now().Add(-time.Second), func(*Conn) { called = true }) || called ||
				chk.Verdict != VerdictNoAnswer || chk.Evidence != ErrCheckTimeout.Error() {
				t.Errorf("past the limit: called %v, %q %q", called, chk.Verdict, chk.Evidence)
			}

			// The end of the probe's context ends the exchange at once,
			// however long the timeout.
			long := runnerFor(t, s, time.Hour)
			cctx, cancel := context.WithCancel(ctx)
			chk = Check{}
			long.Run(cctx, &chk, time.Time{}, func(c *Conn) {
				c.Write([]byte(testRequest))
				cancel()
				_, err := c.In.ReadByte()
				long.Fail(&chk, "read: ", err)
			})
			if chk.Verdict != VerdictNoAnswer || chk.Evidence != "read: no answer within 1h0m0s" {
				t.Errorf("cancelled: %q %q", chk.Verdict, chk.Evidence)
			}
		})
	}
}

// TestRunnerCut: a backend that resets the connection instead of an
// answer gives "closed", in Reuse and in MaxRequests (no answer before,
// so nothing is measured).
func TestRunnerCut(t *testing.T) {
	ctx := context.Background()
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{Fault: fixtures.FaultReset})
			r := runnerFor(t, s, 5*time.Second)
			var chk Check
			r.Run(ctx, &chk, time.Time{}, func(c *Conn) {
				r.Reuse(ctx, c, &chk, Reuse{First: "request 1 (test)", Ask: askHTTP})
			})
			// A Unix socket has no RST: the server's close is an EOF.
			want := map[string]string{"tcp": "request 1 (test): connection reset by peer",
				"unix": "request 1 (test): the server closed the connection"}[network]
			if chk.Verdict != VerdictClosed || chk.Evidence != want {
				t.Errorf("reuse: %q %q, want %q", chk.Verdict, chk.Evidence, want)
			}
			m := r.MaxRequests(ctx, Repeat{What: "test requests", Bound: 10, Time: time.Minute, Ask: askHTTP})
			if m.Verdict != VerdictClosed || m.Served != 0 || m.Requests != nil ||
				!strings.HasPrefix(m.Evidence, "request 1 on the kept connection: ") {
				t.Errorf("max requests: %+v", m)
			}
		})
	}
}

// TestRunnerUnsolicited: bytes nobody asked for after the first answer
// give "unsolicited" and stop the check before a second request.
func TestRunnerUnsolicited(t *testing.T) {
	ctx := context.Background()
	s := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Fault: fixtures.FaultTrailingJunk})
	r := runnerFor(t, s, 5*time.Second)
	var chk Check
	served := 0
	r.Run(ctx, &chk, time.Time{}, func(c *Conn) {
		served = r.Reuse(ctx, c, &chk, Reuse{First: "request 1 (test)", Trailer: " after the answer", Ask: askHTTP})
	})
	if served != 1 || chk.Verdict != VerdictUnsolicited ||
		!strings.HasPrefix(chk.Evidence, "request 1 (test): HTTP/1.1 200 OK; then, before request 2, the server sent ") ||
		!strings.HasSuffix(chk.Evidence, " bytes nobody asked for after the answer: not counted as an answer") {
		t.Errorf("reuse: served %d, %q %q", served, chk.Verdict, chk.Evidence)
	}
}

// TestRunnerRefused: no connection can be made (a Unix socket nobody
// listens on, and one that does not exist): the step is not called, the
// check says why, and Dialed is told.
func TestRunnerRefused(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false) // the file stays, with nobody behind it
	ln.Close()
	for _, tc := range []struct{ path, evidence string }{
		{stale, "connect: connection refused"},
		{filepath.Join(dir, "none.sock"), "connect: no such Unix socket"},
	} {
		var told error
		r := &Runner{Dialer: sockets.NewDialer(sockets.Target{Network: "unix", Address: tc.path}, 0), Timeout: time.Second,
			Dialed: func(err error) { told = err }}
		var chk Check
		called := false
		if r.Run(context.Background(), &chk, time.Time{}, func(*Conn) { called = true }) || called {
			t.Errorf("%s: step called", tc.path)
		}
		if chk.Verdict != VerdictError || chk.Evidence != tc.evidence || told == nil {
			t.Errorf("%s: %q %q (told %v), want %q", tc.path, chk.Verdict, chk.Evidence, told, tc.evidence)
		}
		m := r.MaxRequests(context.Background(), Repeat{What: "test requests", Bound: 3, Ask: askHTTP})
		if m.Verdict != VerdictError || m.Evidence != tc.evidence || m.Bound != 3 {
			t.Errorf("%s: max requests %+v", tc.path, m)
		}
	}
}

// TestRunAll: the selected steps run in order, the others are skipped as
// not selected (after the rest ran, so that a step may fill another's
// outcome), a stop skips the later ones and an error ends the run.
func TestRunAll(t *testing.T) {
	var a, b, c, d Check
	var order []string
	step := func(name string, chk *Check) Step {
		return Step{Name: name, Check: chk, Run: func() {
			order = append(order, name)
			chk.Verdict = "ran"
			if name == "a" {
				b.Verdict = "filled by a" // overwritten: b is not selected
			}
		}}
	}
	steps := []Step{step("a", &a), step("b", &b), step("c", &c), step("d", &d)}
	sel := map[string]bool{"a": true, "c": true, "d": true}
	err := RunAll(steps, sel, func(s Step) (string, error) {
		if s.Name == "c" {
			return "stopped after c", nil
		}
		return "", nil
	})
	if err != nil || strings.Join(order, " ") != "a c" || a.Verdict != "ran" || c.Verdict != "ran" ||
		b != (Check{Verdict: VerdictSkipped, Evidence: NotSelected}) || d != (Check{Verdict: VerdictSkipped, Evidence: "stopped after c"}) {
		t.Errorf("err %v, order %v: %+v %+v %+v %+v", err, order, a, b, c, d)
	}

	boom := errors.New("boom")
	order = nil
	if err := RunAll(steps, sel, func(Step) (string, error) { return "", boom }); err != boom || len(order) != 1 {
		t.Errorf("error: %v after %v", err, order)
	}
}
