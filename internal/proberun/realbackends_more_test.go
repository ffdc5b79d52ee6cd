//go:build integration

package proberun_test

// The real backends that CI does not install, probed by `make
// integration` (go test -tags integration); each is skipped when it is
// not installed.

import (
	"testing"

	"github.com/backbench/backbench/internal/realbackend"
)

// realProbeMore are Perl FCGI, Puma, Unicorn, Starman and gunicorn, as
// they behaved on Debian bookworm.
var realProbeMore = []realProbeWant{
	{name: "perl-fcgi",
		verdicts: map[string]string{"get_values": "answered", "keep_conn": "honored",
			"max_requests_per_connection": "not reached", "multiplexing": "lost", "unknown_role": "closed",
			"roles": "served", "unknown_type": "UNKNOWN_TYPE", "abort": "END_REQUEST", "params": "served", "response": "answered"},
		summary: []string{"-k is meaningful", "libfcgi answers FCGI_MAX_CONNS=1 in every worker", "lost silently"}},
	{name: "puma",
		verdicts: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "honored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "not reached",
			"pipelining": "supported", "framing": "content-length", "server": "absent"},
		summary: []string{"-k is meaningful over HTTP/1.1", "ab -k works"}},
	{name: "unicorn",
		verdicts: map[string]string{"http11_persistent": "ignored", "http10_keep_alive": "ignored",
			"max_requests_per_connection": "measured", "idle_timeout_seconds": "ignored",
			"pipelining": "first only", "framing": "content-length", "server": "absent"},
		summary: []string{"-k changes nothing", "ab -k gains nothing"}},
	{name: "starman",
		verdicts: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "honored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "measured",
			"pipelining": "supported", "framing": "content-length", "server": "absent"},
		summary: []string{"-k is meaningful over HTTP/1.1", "ab -k works", "idle kept connections are closed after 1.0 s"}},
	{name: "gunicorn",
		verdicts: map[string]string{"http11_persistent": "ignored", "http10_keep_alive": "ignored",
			"max_requests_per_connection": "measured", "idle_timeout_seconds": "ignored",
			"pipelining": "first only", "framing": "content-length", "server": "present"},
		summary: []string{"-k changes nothing", "ab -k gains nothing"}},
}

// TestRealBackendsMoreProbe probes the backends of realProbeMore.
func TestRealBackendsMoreProbe(t *testing.T) {
	realProbeOnce(t)
	for _, w := range realProbeMore {
		t.Run(w.name, func(t *testing.T) {
			b := realbackend.StartScripted(t, w.name, false)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realProbe(t, b, w, kind) })
			}
		})
	}
}

// TestRealNginxProbe probes nginx (HTTP, TCP and Unix, in front of
// php-fpm): keep-alive towards the client, chunked bodies, and HTTP/1.0
// keep-alive lost for want of a length.
func TestRealNginxProbe(t *testing.T) {
	realProbeOnce(t)
	b := realbackend.StartScripted(t, "nginx", false)
	w := realProbeWant{name: "nginx",
		verdicts: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "ignored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "not reached",
			"pipelining": "supported", "framing": "chunked", "server": "present"},
		summary: []string{"-k is meaningful over HTTP/1.1", "HTTP/1.0 keep-alive is lost because the body has no length", "bodies are chunked"}}
	for _, kind := range []string{"tcp", "unix"} {
		t.Run(kind, func(t *testing.T) { realProbe(t, b, w, kind) })
	}
}
