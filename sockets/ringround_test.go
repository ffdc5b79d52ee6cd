package sockets

import (
	"slices"
	"testing"
	"time"
)

// TestRingRoundBounded: one round of a ring driver gives tasks their turn
// for at most MaxRingWait (one task at least), whatever the number of tasks
// waiting, so that the driver looks at deadlines and completions between
// rounds; tasks whose operation completed go before tasks not started,
// each queue in order. No ring is needed: these tasks make no operation.
func TestRingRoundBounded(t *testing.T) {
	d := &ringDriver{}
	spin := func() {
		for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
		}
	}
	const n = 1000
	for range n {
		d.fresh = append(d.fresh, ringTask{bind: func(*RingSlot) {}, run: spin})
	}
	ended := d.resume()
	if ended < 1 || ended > 100 {
		t.Errorf("one round ran %d tasks of %d, each 200 µs long: want one at least and the round bounded by %v", ended, n, MaxRingWait)
	}
	total := ended
	for rounds := 1; d.waiting(); rounds++ {
		if rounds > n {
			t.Fatal("the tasks never all ran")
		}
		total += d.resume()
	}
	if total != n || len(d.free) != len(d.slots) {
		t.Errorf("%d tasks ended of %d; %d slots free of %d", total, n, len(d.free), len(d.slots))
	}

	// Order: a task resumed after its operation goes first, then the
	// tasks not started, in order.
	var order []string
	var a *RingSlot
	d.fresh = append(d.fresh[:0], ringTask{bind: func(s *RingSlot) { a = s }, run: func() {
		order = append(order, "a1")
		a.yield(struct{}{}) // as RingSlot.do does, its operation in flight
		order = append(order, "a2")
	}})
	if d.resume(); !slices.Equal(order, []string{"a1"}) || d.waiting() {
		t.Fatalf("first round: %v", order)
	}
	for _, name := range []string{"b", "c"} {
		d.fresh = append(d.fresh, ringTask{bind: func(*RingSlot) {}, run: func() { order = append(order, name) }})
	}
	d.ready = append(d.ready, a) // as complete does
	for d.waiting() {
		d.resume()
	}
	if want := []string{"a1", "a2", "b", "c"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}
