package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/backbench/backbench/sockets"
)

// Runner runs the checks of one probe, one at a time: it dials each
// check's connection, bounds its exchanges, turns a failed exchange into a
// verdict and a line of evidence, and runs the checks both protocols make
// the same way (Reuse, MaxRequests). What to send and how to read and judge
// an answer is the protocol's (an Ask, or a step given to Run).
type Runner struct {
	// Dialer opens every connection.
	Dialer *sockets.Dialer
	// Timeout bounds each exchange of a check.
	Timeout time.Duration
	// Inside names, in the evidence, where an unexpected EOF cut an
	// answer: "a record", "the body".
	Inside string
	// BufferSize is the size of each connection's read buffer, in bytes
	// (0: DefaultBufferSize); it bounds what a check reads at once.
	BufferSize int
	// Dialed, when not nil, is told of every dial's outcome: nil for a
	// connection made, else why none was.
	Dialed func(err error)
}

// Dial opens a fresh connection whose I/O is bounded by the timeout from
// now, and never runs past limit when that is not zero (the cases of one
// check share its timeout).
func (r *Runner) Dial(ctx context.Context, limit time.Time) (*Conn, error) {
	size := r.BufferSize
	if size <= 0 {
		size = DefaultBufferSize
	}
	c, err := dial(ctx, r.Dialer, r.Timeout, limit, size)
	if r.Dialed != nil {
		r.Dialed(err)
	}
	return c, err
}

// Run runs one check on a fresh connection (bounded by limit when not
// zero): it hands the connection to step, closes it after, and records in
// c.Seconds how long the whole check took. When no connection can be made,
// c gets the dial's verdict and evidence (DialFailed), step is not called
// and Run returns false.
func (r *Runner) Run(ctx context.Context, c *Check, limit time.Time, step func(*Conn)) bool {
	start := time.Now()
	defer func() { c.Seconds = Since(start) }()
	conn, err := r.Dial(ctx, limit)
	if err != nil {
		DialFailed(c, err)
		return false
	}
	defer conn.Close()
	step(conn)
	return true
}

// Describe names an I/O error of an exchange for the evidence.
func (r *Runner) Describe(err error) string { return DescribeErr(err, r.Timeout, r.Inside) }

// Fail gives c the verdict of the I/O error err and, as evidence, prefix
// followed by what err means.
func (r *Runner) Fail(c *Check, prefix string, err error) {
	c.Verdict, c.Evidence = VerdictOf(err), prefix+r.Describe(err)
}

// Then returns ev, followed by what err means when err is not nil.
func (r *Runner) Then(ev string, err error) string {
	if err != nil {
		return ev + "; " + r.Describe(err)
	}
	return ev
}

// Answer is what a protocol's Ask read of one answer, for the evidence and
// the verdicts of the shared checks.
type Answer struct {
	// Got says what came back, for the evidence: on success what the
	// answer was ("" when the protocol says only that it was answered),
	// on an error what came before the error ("" when nothing is said).
	Got string
	// Ends reports that the answer ends the connection: its framing or
	// its headers say so.
	Ends bool
	// EndsByClose reports that the answer's own end is the connection's
	// close (a body delimited by the close): the connection cannot be
	// kept, whatever the server would do.
	EndsByClose bool
}

// Ask is a protocol's ordinary request on a probe connection: it starts an
// exchange (Conn.Exchange), sends the request, reads the whole answer and
// says what came back. An error is the I/O or protocol error that ended it.
type Ask func(ctx context.Context, c *Conn) (Answer, error)

// got is what came back before an error, followed by "; " when something
// is said.
func (a Answer) got() string {
	if a.Got == "" {
		return ""
	}
	return a.Got + "; "
}

// Reuse describes a check of whether the server keeps a connection for a
// second request: the request, sent twice on one connection, and how the
// evidence names it.
type Reuse struct {
	// First names the first request in the evidence: "request 1 with
	// FCGI_KEEP_CONN", "request 1 (HTTP/1.1)".
	First string
	// Trailer follows "bytes nobody asked for" in the evidence of an
	// unsolicited verdict (" after END_REQUEST", or "").
	Trailer string
	// Ask sends the request and reads its answer.
	Ask Ask
}

// Reuse sends u's request twice on c and gives chk its verdict: "honored"
// when both were answered, "ignored" when the server closed the connection
// after the first answer (before any byte of the second) or the first
// answer ended with the close, "unsolicited" when bytes nobody asked for
// came between them, else the verdict of the error. It returns how many
// requests were answered (after "unsolicited", 1: the caller stops there).
func (r *Runner) Reuse(ctx context.Context, c *Conn, chk *Check, u Reuse) (served int) {
	a1, err := u.Ask(ctx, c)
	if err != nil {
		r.Fail(chk, u.First+": "+a1.got(), err)
		return 0
	}
	ev := u.First + " answered"
	if a1.Got != "" {
		ev = u.First + ": " + a1.Got
	}
	if a1.EndsByClose {
		chk.Verdict = VerdictIgnored
		chk.Evidence = ev + "; the body ended with the close, so the connection cannot be kept"
		return 1
	}
	if n := c.Unsolicited(ctx, UnsolicitedWait); n > 0 {
		chk.Verdict = VerdictUnsolicited
		chk.Evidence = ev + fmt.Sprintf("; then, before request 2, the server sent %d bytes nobody asked for%s: not counted as an answer", n, u.Trailer)
		return 1
	}
	read := c.BytesRead()
	a2, err := u.Ask(ctx, c)
	switch {
	case err == nil:
		served = 2
		chk.Verdict = VerdictHonored
		ev += "; request 2 answered on the same connection"
		if a2.Got != "" {
			ev += " (" + a2.Got + ")"
		}
	case c.BytesRead() == read && VerdictOf(err) == VerdictClosed:
		// Closed before any byte of the second answer: the server does
		// not keep connections. A close inside it is a broken answer.
		served = 1
		chk.Verdict = VerdictIgnored
		ev += "; the server closed the connection after it (request 2: " + r.Describe(err) + ")"
	default:
		served = 1
		chk.Verdict = VerdictOf(err)
		ev += "; request 2 on the same connection: " + a2.got() + r.Describe(err)
	}
	chk.Evidence = ev
	return served
}

// MaxRequestsResult is the outcome of a max_requests_per_connection check.
type MaxRequestsResult struct {
	Check
	// Requests is how many requests one kept connection served before the
	// server closed it, nil when it did not close within the bound.
	Requests *int `json:"requests"`
	// Served is how many requests were answered on the connection.
	Served int `json:"served"`
	// Bound is the most requests the check sends.
	Bound int `json:"bound"`
}

// Repeat describes a max_requests_per_connection check: the request sent
// again and again on one connection, the bounds, and how the evidence
// names the requests.
type Repeat struct {
	// What names the requests in the evidence: "requests with
	// FCGI_KEEP_CONN", "HTTP/1.1 requests".
	What string
	// Trailer follows "bytes nobody asked for" in the evidence of an
	// unsolicited verdict (" after END_REQUEST", or "").
	Trailer string
	// Bound is the most requests sent; Time bounds the check's duration.
	Bound int
	Time  time.Duration
	// Ask sends one request and reads its answer.
	Ask Ask
}

// MaxRequests sends m's request on one connection until the server closes
// it ("measured": the count before the close, or the answer that said it
// ends the connection), the bound or the time ("not reached"), bytes
// nobody asked for ("unsolicited") or an error (its verdict).
func (r *Runner) MaxRequests(ctx context.Context, m Repeat) (res MaxRequestsResult) {
	res.Bound = m.Bound
	start := time.Now()
	r.Run(ctx, &res.Check, time.Time{}, func(c *Conn) {
		stop := start.Add(m.Time)
		for res.Served < res.Bound {
			if time.Now().After(stop) {
				res.Verdict = VerdictNotReached
				res.Evidence = fmt.Sprintf("%d %s answered on one connection; stopped after %v", res.Served, m.What, m.Time)
				return
			}
			read := c.BytesRead()
			a, err := m.Ask(ctx, c)
			if err != nil {
				if res.Served > 0 && c.BytesRead() == read && VerdictOf(err) == VerdictClosed {
					n := res.Served
					res.Requests = &n
					res.Verdict = VerdictMeasured
					res.Evidence = fmt.Sprintf("%d %s answered, then the server closed the connection", n, m.What)
					return
				}
				r.Fail(&res.Check, fmt.Sprintf("request %d on the kept connection: %s", res.Served+1, a.got()), err)
				return
			}
			res.Served++
			if n := c.Unsolicited(ctx, 0); n > 0 {
				res.Verdict = VerdictUnsolicited
				res.Evidence = fmt.Sprintf("%d %s answered; after answer %d the server sent %d bytes nobody asked for%s: not counted as an answer",
					res.Served, m.What, res.Served, n, m.Trailer)
				return
			}
			if a.Ends || a.EndsByClose {
				n := res.Served
				res.Requests = &n
				res.Verdict = VerdictMeasured
				res.Evidence = fmt.Sprintf("%d %s answered; the last one ended the connection (%s)", n, m.What, a.Got)
				return
			}
		}
		res.Verdict = VerdictNotReached
		res.Evidence = fmt.Sprintf("%d %s answered on one connection, still open", res.Served, m.What)
	})
	return res
}

// Step is one named check of a probe: Run runs it and fills its outcome,
// whose Check is at Check.
type Step struct {
	Name  string
	Check *Check
	Run   func()
}

// RunAll runs the selected steps in order, and records every step that
// selected leaves out as "skipped" (NotSelected), after the others ran (a
// step may fill another's outcome too, as the HTTP framing and server
// checks share one exchange). After each step that ran, after (when not
// nil) is called: a stop it returns that is not "" skips every later
// selected step with stop as evidence; an error ends the run and is
// returned.
func RunAll(steps []Step, selected map[string]bool, after func(Step) (stop string, err error)) error {
	stop := ""
	for _, s := range steps {
		switch {
		case !selected[s.Name]:
			continue
		case stop != "":
			s.Check.Verdict, s.Check.Evidence = VerdictSkipped, stop
			continue
		}
		s.Run()
		if after == nil {
			continue
		}
		st, err := after(s)
		if err != nil {
			return err
		}
		if st != "" {
			stop = st
		}
	}
	for _, s := range steps {
		if !selected[s.Name] {
			*s.Check = Check{Verdict: VerdictSkipped, Evidence: NotSelected}
		}
	}
	return nil
}
