package execute

import (
	"fmt"

	"github.com/backbench/backbench/internal/summary"
)

// keepAliveNotes names what real servers do with kept connections that
// skews a -k run, as seen on php-fpm, libfcgi workers, Thin, Puma, Unicorn,
// Starman and gunicorn (scripts/backends.sh):
//
//   - a server that closes after every response although the client asked
//     to keep the connection (Unicorn, gunicorn's sync workers; nginx and
//     others over HTTP/1.0 when the response has no Content-Length): -k
//     then measures a connect per request, as without -k;
//   - a server that gives each kept connection a worker of its own until
//     the connection closes (php-fpm, libfcgi processes, Starman): with -c
//     above the worker count the extra connections wait in the listen queue
//     for most of the run, which shows as a few requests as long as the run;
//   - a stall of the same look whose time is in the connect is a full
//     listen queue dropping SYNs (Thin past its backlog of 100), and is
//     named as such.
func keepAliveNotes(s *summary.Summary) []string {
	if !s.KeepAlive || s.Complete == 0 {
		return nil
	}
	var notes []string
	// HTTP says "Connection: close", so nothing was counted as kept; a
	// FastCGI server just closes, so every request after the first of a
	// connection found it closed and was redialed.
	closedEvery := s.ClosedEvery()
	if closedEvery {
		words := notesOf(s)
		what := words.KeepAlive
		n := "every response"
		if s.Complete > 1 {
			n = fmt.Sprintf("every one of the %d responses", s.Complete)
		}
		line := fmt.Sprintf("-k was asked but the server closed the connection after %s: it ignores %s", n, what)
		if words.ClosedEvery != nil {
			line += words.ClosedEvery(s)
		} else {
			line += ", so every request paid a new connection, as without -k"
		}
		notes = append(notes, line)
	}
	total := s.ConnectionTimes.Total
	wallMs := s.TimeTaken * 1000
	stalled := s.Open == nil && s.Concurrency > 1 && s.Complete >= 2*int64(s.Concurrency) && wallMs > 0 &&
		total.Max >= 0.7*wallMs && total.Max > 5*total.Median && !closedEvery
	// A connect that took half the longest request is a SYN the kernel
	// dropped (the listen queue was full) and the client sent again after
	// a second or more: the queue's limit, not a worker held by a kept
	// connection (whose waiting connections connect at once and wait for
	// their first byte).
	connectStall := s.ConnectsOver1s > 0 || s.ConnectionTimes.Connect.Max >= total.Max/2
	if stalled && connectStall {
		notes = append(notes, fmt.Sprintf("the longest request (%.0f ms) lasted most of the run (%.0f ms) while the median was %.0f ms, "+
			"and its connect took %.0f ms: SYNs dropped by the server's full listen queue and sent again by the kernel after 1 s or more, "+
			"not a slow request; raise the server's listen backlog or lower -c", total.Max, wallMs, total.Median, s.ConnectionTimes.Connect.Max))
	}
	if stalled && !connectStall {
		notes = append(notes, fmt.Sprintf("the longest request (%.0f ms) lasted most of the run (%.0f ms) while the median was %.0f ms: "+
			"the mark of a server that gives each kept connection a worker until it closes (php-fpm children, libfcgi processes, "+
			"Starman workers) while the connections above its worker count wait in the listen queue for most of the run; "+
			"with -k keep -c at or below the worker count, or compare without -k", total.Max, wallMs, total.Median))
	}
	return notes
}
