package execute

import (
	"fmt"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
	"github.com/backbench/backbench/sockets"
)

// connectionNotes names the connection-level realities a run met, with
// their remedies, from its typed failure causes, its counts and the TIME_WAIT
// sockets it left: they are the client's or the kernel's limits, not the
// server's failures, and the user should know which is which. s is m's
// summary.
func connectionNotes(m *stats.Record, s *summary.Summary, t sockets.Target, timeWait int, noFile uint64) []string {
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
func responseNotes(s *summary.Summary, p *Plan) []string {
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
func notesOf(s *summary.Summary) protocol.Notes {
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
func reconnectNote(s *summary.Summary) string {
	if s.Reconnects == 0 {
		return ""
	}
	why := notesOf(s).Reconnects
	return fmt.Sprintf("the server closed %d kept connections before a request; each was redialed and the request counted once (%s)", s.Reconnects, why)
}
