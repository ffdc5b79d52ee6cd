package probe

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/testnet"
	"github.com/backbench/backbench/sockets"
)

// TestConn: a probe connection's exchanges end at their deadline, never
// past the check's limit; a case past the limit is not dialed; the
// context's end ends a read; DialFailed names each way a dial fails.
func TestConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent: never answers
		}
	}()
	d := sockets.NewDialer(sockets.Target{Network: "tcp", Address: ln.Addr().String()}, 0)
	ctx := context.Background()

	limit := time.Now().Add(300 * time.Millisecond)
	c, err := Dial(ctx, d, 10*time.Second, limit)
	if err != nil {
		t.Fatal(err)
	}
	c.Exchange(ctx, 10*time.Second) // the limit still wins
	start := time.Now()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("read past the limit: %v after %v", err, time.Since(start))
	}
	c.Close()
	if _, err := Dial(ctx, d, 10*time.Second, time.Now().Add(-time.Second)); !errors.Is(err, ErrCheckTimeout) {
		t.Errorf("dial past the limit: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	c, err = Dial(cctx, d, 10*time.Second, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	if _, err := c.Read(make([]byte, 1)); err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("read after cancel: %v after %v", err, time.Since(start))
	}

	refused := testnet.DeadTCP(t, "127.0.0.1") // bound, never listening: no one else can take it
	_, refusedErr := Dial(ctx, sockets.NewDialer(sockets.Target{Network: "tcp", Address: refused}, 0), time.Second, time.Time{})
	for _, tc := range []struct {
		err      error
		verdict  string
		evidence string
	}{
		{ErrCheckTimeout, VerdictNoAnswer, ErrCheckTimeout.Error()},
		{os.ErrDeadlineExceeded, VerdictNoAnswer, "connect: no answer (timeout)"},
		{refusedErr, VerdictError, "connect: connection refused"},
	} {
		var ch Check
		DialFailed(&ch, tc.err)
		if ch.Verdict != tc.verdict || ch.Evidence != tc.evidence {
			t.Errorf("DialFailed(%v) = %q %q, want %q %q", tc.err, ch.Verdict, ch.Evidence, tc.verdict, tc.evidence)
		}
	}
}
