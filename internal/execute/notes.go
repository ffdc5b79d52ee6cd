package execute

import (
	"fmt"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// connectionNotes names the connection-level realities a run met, with
// their remedies, from its typed failure causes, its counts and the TIME_WAIT
// sockets it left: they are the client's or the kernel's limits, not the
// server's failures, and the user should know which is which. s is m's
// summary.
func connectionNotes(m *stats.Record, s *stats.Summary, t sockets.Target, timeWait int, noFile uint64) []string {
	var notes []string
	if n := m.CauseCount(load.KindRefused); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connections refused: the server stopped listening or its listen queue overflowed", n))
	}
	if n := m.CauseCount(load.KindBacklogFull); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connects failed at once with EAGAIN: the Unix socket's listen backlog was full "+
			"(TCP would have queued them); raise the server's backlog (php-fpm listen.backlog, net.core.somaxconn) or lower -c", n))
	}
	if n := m.CauseCount(load.KindNoFiles); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connects failed with too many open files (the soft limit is %d): raise ulimit -n or lower -c", n, noFile))
	}
	if n := m.CauseCount(load.KindNoPorts); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connects failed: the client ran out of ephemeral TCP ports; these are client-side "+
			"failures, not the server's: use -k, a Unix socket, widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1", n))
	}
	if n := reconnectNote(s); n != "" {
		notes = append(notes, n)
	}
	if t.Network == "tcp" && !s.KeepAlive {
		if lo, hi, err := sockets.LocalPortRange(); err == nil && hi > lo && timeWait > (hi-lo+1)/2 {
			notes = append(notes, fmt.Sprintf("%d sockets to %s are in TIME_WAIT, over half of the %d ephemeral ports (%d-%d): "+
				"new connections will soon fail; use -k, a Unix socket, or net.ipv4.tcp_tw_reuse=1", timeWait, t.Address, hi-lo+1, lo, hi))
		}
	}
	ka := *s
	if n := m.Counts.Unsolicited; n > 0 {
		after := notesOf(s).AfterResponse
		notes = append(notes, fmt.Sprintf("the server sent %d bytes nobody asked for %s, after %d of the %d complete responses: "+
			"the client closed those %d connections rather than read the bytes as the answer to a request never sent "+
			"(a server bug: a Content-Length shorter than the body, or output written after the response)",
			m.Counts.UnsolicitedBytes, after, n, s.Complete, n))
		// Those connections were closed by the client, not the server:
		// the keep-alive notes must not blame the server for them.
		ka.KeepAliveRequests += n
	}
	notes = append(notes, keepAliveNotes(&ka)...)
	return notes
}

// responseNotes say what the responses hint at when every one was a
// non-2xx (the wrong script or path: php-fpm's "Primary script unknown"
// 404s with the default --document-root), or when a FastCGI backend wrote
// to stderr. p is the plan run, whose protocol says what to check.
func responseNotes(s *stats.Summary, p *Plan) []string {
	var notes []string
	said := ""
	if s.StderrFirstLine != "" {
		said = fmt.Sprintf("its FastCGI stderr said %q", s.StderrFirstLine)
	}
	if s.Complete > 0 && s.Non2xx == s.Complete {
		n := fmt.Sprintf("every response was non-2xx (%d of %d): the backend did not serve what you meant to measure; ", s.Non2xx, s.Complete)
		if nt := notesOf(s); nt.AllNon2xx != nil {
			n += nt.AllNon2xx(s, p.request(), p.ProtoOptions, said)
		}
		return append(notes, n)
	}
	if s.StderrBytes > 0 {
		n := fmt.Sprintf("the backend wrote %d bytes to FastCGI stderr (warnings or errors of the application: not failures, but worth a look)", s.StderrBytes)
		if said != "" {
			n += "; " + said
		}
		notes = append(notes, n)
	}
	return notes
}

// notesOf returns the words of the summary's protocol (recorded by
// scheme); a protocol not registered gets neutral words.
func notesOf(s *stats.Summary) protocol.Notes {
	if pr, err := protocol.Lookup(s.Target.Protocol); err == nil {
		return pr.Notes()
	}
	return protocol.Notes{KeepAlive: "keep-alive", AfterResponse: "after the response",
		Reconnects: "servers do this past their limit of kept connections or their idle timeout"}
}

// reconnectNote says that the server closed kept connections, with the
// reason servers of the target's protocol have: a FastCGI server that
// recycles its workers, an HTTP server past its limit of kept connections
// or its idle timeout. "" when no kept connection was closed.
func reconnectNote(s *stats.Summary) string {
	if s.Reconnects == 0 {
		return ""
	}
	why := notesOf(s).Reconnects
	return fmt.Sprintf("the server closed %d kept connections before a request; each was redialed and the request counted once (%s)", s.Reconnects, why)
}

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
func keepAliveNotes(s *stats.Summary) []string {
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
