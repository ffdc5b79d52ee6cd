package load

import (
	"net"
	"testing"
	"time"
)

// deadlineConn records the deadlines set on it.
type deadlineConn struct {
	net.Conn
	sets int
	at   time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.sets++
	c.at = t
	return nil
}

// TestDeadlineArm: over a second of requests 1 ms apart, the connection's
// deadline always lies within [due, due+slack] and is set about once per
// slack, not once per request; Forget forces the next Arm to set it.
func TestDeadlineArm(t *testing.T) {
	const timeout = 30 * time.Second
	d := NewDeadline(timeout)
	if d.slack != int64(MaxDeadlineSlack) {
		t.Fatalf("slack %v, want %v", time.Duration(d.slack), MaxDeadlineSlack)
	}
	c := &deadlineConn{}
	start := Now()
	const requests = 1000
	for i := range requests {
		due := start + int64(i)*int64(time.Millisecond) + int64(timeout)
		if err := d.Arm(c, due); err != nil {
			t.Fatal(err)
		}
		at := c.at.Sub(Time(0)).Nanoseconds()
		if at < due || at > due+d.slack {
			t.Fatalf("request %d: deadline %v after due, want within [0, %v]", i, time.Duration(at-due), time.Duration(d.slack))
		}
	}
	if want := requests*int(time.Millisecond)/int(MaxDeadlineSlack) + 1; c.sets > want {
		t.Errorf("%d SetDeadline calls for %d requests, want at most %d", c.sets, requests, want)
	}
	sets := c.sets
	d.Forget()
	d.Arm(c, start+int64(requests)*int64(time.Millisecond)+int64(timeout))
	if c.sets != sets+1 {
		t.Errorf("Arm after Forget made %d calls, want 1", c.sets-sets)
	}
	if short := NewDeadline(160 * time.Millisecond); short.slack != int64(10*time.Millisecond) {
		t.Errorf("slack of a 160 ms timeout: %v, want 10ms", time.Duration(short.slack))
	}
}
