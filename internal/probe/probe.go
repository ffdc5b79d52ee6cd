// Package probe holds what the FastCGI and HTTP protocol probes (fcgi.Probe,
// httpprobe.Probe) share: the outcome of one check, the verdict words common
// to both, how an I/O error becomes a verdict and a line of evidence, the
// probe connection, whose every exchange is bounded by a deadline and whose
// reads go through one bounded buffer, and the one check runner (Runner):
// the dial, the deadlines, the evidence of a failed exchange, the checks
// both protocols make the same way (a connection kept for a second request,
// the requests one connection serves) and the recording of every check of a
// probe in order (Sequence). A protocol gives it data and its own steps:
// what to send and how to read and judge the answer (Ask).
//
// It imports the standard library and sockets only.
package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/backbench/backbench/sockets"
)

// Check is what every check reports.
type Check struct {
	// Verdict is one word (or words) of the protocol's Verdict* constants.
	Verdict string `json:"verdict"`
	// Evidence says what was sent and what came back, or did not.
	Evidence string `json:"evidence"`
	// Seconds is how long the check took.
	Seconds float64 `json:"seconds"`
}

// NamedCheck is one line of a text report: a check's key and its outcome.
type NamedCheck struct {
	Name string
	Check
}

// Verdict words common to the FastCGI and HTTP checks.
const (
	VerdictNoAnswer   = "no answer"
	VerdictClosed     = "closed"
	VerdictError      = "error"
	VerdictHonored    = "honored"
	VerdictIgnored    = "ignored"
	VerdictMeasured   = "measured"
	VerdictNotReached = "not reached"
	VerdictSupported  = "supported"
	// VerdictUnsolicited is a check whose answer was followed by bytes
	// nobody asked for: read as the next answer they would make a
	// second request look answered, so they are reported, not counted.
	VerdictUnsolicited = "unsolicited"
)

// UnsolicitedWait is how long a check waits, after an answer and before
// the next request on the same connection, for bytes nobody asked for
// that did not come with the answer, in ms-scale time.
const UnsolicitedWait = 50 * time.Millisecond

// VerdictOf maps an I/O error to a verdict: a timeout is "no answer", a
// close or reset is "closed", anything else "error".
func VerdictOf(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return VerdictNoAnswer
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return VerdictClosed
	}
	return VerdictError
}

// DescribeErr names an I/O error for the evidence; inside names where an
// unexpected EOF cut the answer ("a record", "the body").
func DescribeErr(err error, timeout time.Duration, inside string) string {
	switch {
	case VerdictOf(err) == VerdictNoAnswer:
		return "no answer within " + timeout.String()
	case errors.Is(err, io.EOF):
		return "the server closed the connection"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection inside " + inside
	}
	return sockets.Describe(err)
}

// Since returns the seconds since start, rounded to the millisecond.
func Since(start time.Time) float64 {
	return float64(time.Since(start).Round(time.Millisecond)) / float64(time.Second)
}

// ErrCheckTimeout is what Dial returns for a case of a check that is not
// sent because the check's timeout ran out on an earlier case.
var ErrCheckTimeout = errors.New("not sent: the check's timeout ran out on an earlier case (no answer)")

// Conn is a probe connection: each exchange on it is bounded by a deadline,
// and the end of the probe's context ends its I/O. In reads it through a
// buffer of a fixed size, counting the bytes read (BytesRead); Read, of
// the embedded net.Conn, bypasses both.
type Conn struct {
	net.Conn
	// In is the connection's buffered reader, of DefaultBufferSize bytes
	// or the Runner's BufferSize.
	In    *bufio.Reader
	read  int64
	stop  func() bool
	limit time.Time // no deadline later than this (zero: none)
}

// DefaultBufferSize is the size of a probe connection's read buffer when
// none is asked for: 16 KiB.
const DefaultBufferSize = 16 << 10

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *int64
}

func (c countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	*c.n += int64(n)
	return n, err
}

// Dial opens a fresh connection with d whose I/O is bounded by timeout from
// now, and never runs past limit when that is not zero (the cases of one
// check share its timeout).
func Dial(ctx context.Context, d *sockets.Dialer, timeout time.Duration, limit time.Time) (*Conn, error) {
	return dial(ctx, d, timeout, limit, DefaultBufferSize)
}

// dial is Dial with a read buffer of size bytes.
func dial(ctx context.Context, d *sockets.Dialer, timeout time.Duration, limit time.Time, size int) (*Conn, error) {
	deadline := time.Now().Add(timeout)
	if !limit.IsZero() && limit.Before(deadline) {
		deadline = limit
	}
	if !time.Now().Before(deadline) {
		return nil, ErrCheckTimeout
	}
	c, err := d.DialDeadline(ctx, deadline)
	if err != nil {
		return nil, err
	}
	pc := &Conn{Conn: c, limit: limit}
	pc.In = bufio.NewReaderSize(countReader{c, &pc.read}, size)
	pc.stop = context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	c.SetDeadline(deadline)
	if ctx.Err() != nil {
		c.SetDeadline(time.Unix(1, 0)) // the hook may have run before
	}
	return pc, nil
}

// Exchange starts a new exchange: its deadline is d from now, or the limit
// when that comes first. After the context's end it changes nothing.
func (c *Conn) Exchange(ctx context.Context, d time.Duration) {
	if ctx.Err() != nil {
		return
	}
	deadline := time.Now().Add(d)
	if !c.limit.IsZero() && c.limit.Before(deadline) {
		deadline = c.limit
	}
	c.SetDeadline(deadline)
}

// CanWaitIdle reports whether the check may wait for bytes with a short
// deadline and keep using the connection after the deadline passed: not
// over TLS, where a read cut by a deadline left the next exchange without
// an answer (seen with crypto/tls in TestProbePortRangeAndHTTPS).
func (c *Conn) CanWaitIdle() bool {
	_, isTLS := c.Conn.(*tls.Conn)
	return !isTLS
}

// BytesRead is how many bytes In has read from the connection so far: a
// check compares it before and after a request to tell a connection closed
// before any byte of the answer from one cut inside it.
func (c *Conn) BytesRead() int64 { return c.read }

// Unsolicited returns how many bytes came after the answer just read:
// those already buffered, or else those that come within wait (0: none
// waited for; never over TLS, see CanWaitIdle). Bytes nobody asked for
// would be read as the answer to the next request, so a check that sends
// one must look first.
func (c *Conn) Unsolicited(ctx context.Context, wait time.Duration) int {
	if n := c.In.Buffered(); n > 0 || wait <= 0 || !c.CanWaitIdle() {
		return n
	}
	c.Exchange(ctx, wait)
	if _, err := c.In.Peek(1); err != nil {
		return 0
	}
	return c.In.Buffered()
}

// WatchClose waits up to d for the server to close the connection and
// reports whether it did; unexpected bytes count as "not closed".
func (c *Conn) WatchClose(ctx context.Context, d time.Duration) bool {
	c.Exchange(ctx, d)
	var b [1]byte
	_, err := c.In.Read(b[:])
	return err != nil && VerdictOf(err) == VerdictClosed
}

// Close unregisters the cancellation hook and closes the connection. A
// second Close does nothing more than return the connection's error.
func (c *Conn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// DialFailed sets the verdict and evidence of a check whose connection
// could not be made.
func DialFailed(c *Check, err error) {
	switch {
	case errors.Is(err, ErrCheckTimeout):
		c.Verdict, c.Evidence = VerdictNoAnswer, err.Error()
	case VerdictOf(err) == VerdictNoAnswer:
		c.Verdict, c.Evidence = VerdictNoAnswer, "connect: no answer (timeout)"
	default:
		c.Verdict, c.Evidence = VerdictError, "connect: "+sockets.Describe(err)
	}
}

// VerdictSkipped is the verdict of a check that did not run (--only,
// --skip, or a server that stopped accepting connections).
const VerdictSkipped = "skipped"

// NotSelected is the evidence of a check left out by --only or --skip.
const NotSelected = "not selected (--only, --skip)"

// Select returns the checks to run among known (the names in run order)
// given lists of names to run only and to skip; an unknown name is an
// error that lists the known ones.
func Select(known, only, skip []string) (map[string]bool, error) {
	valid := map[string]bool{}
	for _, n := range known {
		valid[n] = true
	}
	run := map[string]bool{}
	for _, list := range [][]string{only, skip} {
		for _, n := range list {
			if !valid[n] {
				return nil, fmt.Errorf("unknown check %q (want one of: %s)", n, strings.Join(known, ", "))
			}
		}
	}
	for _, n := range known {
		run[n] = len(only) == 0
	}
	for _, n := range only {
		run[n] = true
	}
	for _, n := range skip {
		run[n] = false
	}
	return run, nil
}
