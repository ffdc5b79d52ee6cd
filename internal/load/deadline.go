package load

import (
	"net"
	"time"
)

// MaxDeadlineSlack bounds how far past a request's own deadline a
// connection's I/O deadline may lie (see Deadline).
const MaxDeadlineSlack = 100 * time.Millisecond

// Deadline arms a connection's I/O deadline lazily. Setting a deadline costs
// a runtime timer update, which shows in the profile of a keep-alive loop
// when done on every request, so the deadline is set to the request's own
// deadline plus a slack (a sixteenth of the timeout, at most
// MaxDeadlineSlack) and left alone while it stays within [due, due+slack] of
// the requests that follow. A client then checks Late after a response: one
// that completed past its own deadline is still a Timeout.
type Deadline struct {
	at    int64 // the armed deadline in Now nanoseconds; 0 when none
	slack int64
}

// NewDeadline returns a Deadline for requests of the given timeout.
func NewDeadline(timeout time.Duration) Deadline {
	return Deadline{slack: int64(min(timeout/16, MaxDeadlineSlack))}
}

// Arm makes sure conn's deadline lies between due and due plus the slack
// (Now nanoseconds), setting it only when it does not.
func (d *Deadline) Arm(conn net.Conn, due int64) error {
	if d.at >= due && d.at <= due+d.slack {
		return nil
	}
	d.at = due + d.slack
	return conn.SetDeadline(Time(d.at))
}

// Forget is called when the connection changes or its deadline was set
// elsewhere (a cancellation): the next Arm sets it.
func (d *Deadline) Forget() { d.at = 0 }
