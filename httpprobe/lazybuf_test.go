package httpprobe

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
)

// TestBufferAtFirstRequest: a client takes its read buffer at its first
// request, not when the run makes it, so that a run of many workers holds
// memory only for those that get to send (a run's clients are all made
// before the first dial).
func TestBufferAtFirstRequest(t *testing.T) {
	s := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 100})
	f, err := NewFactory(Config{Target: target(t, s.URL("/")), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	clients := make([]load.Client, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range clients {
		if clients[i], err = f(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per >= bufSize/8 {
		t.Errorf("%d bytes allocated per client before its first request, want well under the %d-byte buffer", per, bufSize)
	}
	c := clients[0].(*client)
	if c.buf != nil {
		t.Fatal("the buffer was taken before the first request")
	}
	for range 2 {
		var r load.Result
		c.Do(&r)
		if r.Class != load.OK || r.BodyBytes != 100 || len(c.buf) != bufSize {
			t.Fatalf("class %v err %v body %d buffer %d", r.Class, r.Err, r.BodyBytes, len(c.buf))
		}
	}
}
