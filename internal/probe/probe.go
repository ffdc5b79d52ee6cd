// Package probe holds what the FastCGI and HTTP protocol probes (fcgi.Probe,
// httpprobe.Probe) share: the outcome of one check, the verdict words common
// to both, and how an I/O error becomes a verdict and a line of evidence.
//
// It imports the standard library and sockets only.
package probe

import (
	"errors"
	"io"
	"net"
	"os"
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
)

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
