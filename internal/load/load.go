// Package load holds the leaf value types that the protocol clients, the
// runners, the statistics and the reporters share: the outcome of one request
// (Result), the failure classes (ErrClass), and the Client and ClientFactory
// contracts through which a runner drives a protocol without knowing it.
//
// It also holds the one grammar of the values that a command's flags and a
// study file both take (grammar.go: concurrency levels, seconds, ratios and
// percentages, sizes, CPU lists), read with one function each and refused
// with the same words wherever they are written.
//
// It imports the standard library only, so that every other package may
// depend on it without cycles.
package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// ErrClass is the failure class of one request. The zero value, OK, means the
// request completed with a full response (whatever its status code).
type ErrClass uint8

// The failure classes. Connect, Receive, Length and Exceptions are ab's;
// Timeout and Protocol are ours, split out of what ab would call Receive or
// Exceptions so that a user can tell a slow server from a broken one.
const (
	// OK means a complete response was read.
	OK ErrClass = iota
	// Connect means the connection could not be established.
	Connect
	// Receive means the connection failed or was cut short while the
	// response was read (reset, EOF mid-response, a record cut short).
	Receive
	// Length means the body length differed from the first response's. As
	// in ab, such a response is both complete and failed. Clients never set
	// it; the runner does.
	Length
	// Exceptions means a socket error outside connect and read, such as a
	// failed write of the request.
	Exceptions
	// Timeout means no complete response arrived within the request
	// timeout.
	Timeout
	// Protocol means the response was malformed: a bad status line, bad
	// FastCGI framing, a wrong request id, a head over the size limit, or a
	// FastCGI END_REQUEST whose protocol status refuses the request.
	Protocol
	// NumClasses is the number of classes, for arrays indexed by ErrClass.
	NumClasses
)

var classNames = [NumClasses]string{"ok", "connect", "receive", "length", "exceptions", "timeout", "protocol"}

// String returns the lower-case name of the class, as used in JSON keys.
func (c ErrClass) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "unknown"
}

// Result is the outcome of one request. A Client fills it in Do; the runner
// owns it and reuses it, so a Client must set every field it is responsible
// for (Reset clears it first).
//
// All times are monotonic nanoseconds from Now (the same clock for every
// field). Connected is meaningful only when Dialed is true.
type Result struct {
	// Class is the failure class; OK when a complete response was read.
	Class ErrClass
	// Err describes a failure; nil on success. Set only on the failure
	// path, so that success costs no allocation.
	Err error
	// Status is the response status code (HTTP status, or the CGI Status
	// header for FastCGI, 200 when absent); 0 if no head was read.
	Status int
	// Dialed reports that this request opened a new connection (a dial
	// that failed opened none: Dialed stays false).
	Dialed bool
	// Target is the index of the request of a mix (--targets) to send:
	// the runner sets it before Do (from the run's schedule), the client
	// sends its request of that index and leaves the field alone. 0
	// without a mix.
	Target int
	// Upstream is the index of the address the connection went to, when
	// the target is a cluster of several addresses (0 otherwise).
	Upstream int
	// Reconnects counts kept connections that were found dead (closed by
	// the server before any byte of this response) and redialed.
	Reconnects int
	// KeepAlive reports that the connection stayed open after the response
	// and will be reused (ab's "Keep-Alive requests").
	KeepAlive bool
	// Intended is when the request was scheduled to start, in ns, in the
	// open model (0 in the closed model). The runner sets it before Do;
	// clients leave it alone. Latency from Intended includes the time the
	// request waited for a free worker (coordinated omission corrected).
	Intended int64
	// Queued reports, in the open model, that the request was taken by a
	// worker only after its intended time, because every worker was busy:
	// the in-flight ceiling held the rate back.
	Queued bool
	// Start is when the request began (before the dial, if any), in ns.
	Start int64
	// Connected is when the dial completed, in ns (Start when not dialed).
	Connected int64
	// Written is when the last byte of the request was written, in ns.
	Written int64
	// FirstByte is when the first byte of the response was read, in ns.
	FirstByte int64
	// Done is when the response was fully read (or the failure seen), in ns.
	Done int64
	// BytesRead counts every byte read from the socket for this request,
	// headers and framing included (ab's "Total transferred"), in bytes.
	BytesRead int64
	// BodyBytes counts the bytes of the response body (ab's "HTML
	// transferred"), after HTTP or CGI headers and without framing.
	BodyBytes int64
	// StderrBytes counts FastCGI STDERR bytes; 0 for HTTP.
	StderrBytes int64
	// Stderr is the start (at most 256 bytes) of the first FastCGI STDERR
	// content the client received in the run, on the result of the
	// response that carried it only; nil otherwise. It may point into the
	// client's memory and is valid only until the next Do.
	Stderr []byte
	// BytesWritten counts the bytes of the request written, in bytes, on
	// the connection that answered (a redial of a dead kept connection
	// starts the count again, as it does BytesRead's).
	BytesWritten int64
	// Server is the Server header of the response (up to the first space
	// or control byte, as ab prints it). It may point into the client's
	// buffer and is valid only until the next Do; copy it to keep it.
	Server []byte
	// Unsolicited counts the bytes the server sent after the complete
	// response (after its body, or after END_REQUEST) that had come with
	// it: nobody asked for them, and read as the next answer they would
	// be blamed on the next request, so the client drops the connection
	// instead. The response itself is complete (Class OK).
	Unsolicited int64
}

// Reset clears r for the next request.
func (r *Result) Reset() { *r = Result{} }

// Client sends one request at a time over the connection it owns. It is used
// by one goroutine; Close may be called once after the last Do.
type Client interface {
	// Do sends the request and reads the whole response, filling r. It
	// never blocks past the client's request timeout, nor past the
	// cancellation of the context the client was made with.
	Do(r *Result)
	// Close closes the client's connection, if any.
	Close() error
}

// ClientFactory makes one Client per worker. ctx bounds every dial and every
// read and write of the client: when it is cancelled, a Do in progress
// returns promptly (its result is then discarded by the runner), its
// connection closed. The runner makes its clients with the run's own
// context (an interrupt), never with its time limit: at the end of a
// measurement window no request starts, and those in flight finish within
// the request timeout, for a connection closed after a request began and
// before its answer kills some backends (Ruby's fcgi.rb).
type ClientFactory func(ctx context.Context) (Client, error)

var epoch = time.Now()

// Now returns the monotonic time in nanoseconds since the process started.
// Every Result time uses this clock.
func Now() int64 { return int64(time.Since(epoch)) }

// Time converts a time from Now back into a wall-clock time.Time.
func Time(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }

// ParseErrClass returns the class named name (as String spells it).
func ParseErrClass(name string) (ErrClass, bool) {
	for c, n := range classNames {
		if n == name {
			return ErrClass(c), true
		}
	}
	return 0, false
}

// MarshalText returns the class's name.
func (c ErrClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a class's name.
func (c *ErrClass) UnmarshalText(b []byte) error {
	v, ok := ParseErrClass(string(b))
	if !ok {
		return fmt.Errorf("load: unknown failure class %q", b)
	}
	*c = v
	return nil
}

// Unreachable reports whether a dial error says that nothing accepts
// connections at the address: connection refused, no such Unix socket, not
// a socket, or permission denied (not a full backlog, a timeout or a
// shortage of the client's own ports or files); or that the address is a
// TLS server whose certificate does not verify, which no later dial would
// change either.
func Unreachable(err error) bool {
	var ve *tls.CertificateVerificationError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, syscall.ENOTSOCK) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) ||
		errors.As(err, &ve)
}

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
