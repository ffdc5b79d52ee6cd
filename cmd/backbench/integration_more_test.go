//go:build integration

package main

// The real backends that CI does not install, run by `make integration`
// (go test -tags integration); each is skipped when it is not installed.

import (
	"testing"
)

// realMore are Perl FCGI, Puma, Unicorn, Starman and gunicorn, as they
// behaved on Debian bookworm.
var realMore = []realWant{
	{name: "perl-fcgi", keepAlive: true,
		probe: map[string]string{"get_values": "answered", "keep_conn": "honored",
			"max_requests_per_connection": "not reached", "multiplexing": "lost", "unknown_role": "closed",
			"roles": "served", "unknown_type": "UNKNOWN_TYPE", "abort": "END_REQUEST", "params": "served", "response": "answered"},
		summary: []string{"-k is meaningful", "libfcgi answers FCGI_MAX_CONNS=1 in every worker", "lost silently"}},
	{name: "puma", keepAlive: true, http10KeepAlive: true,
		probe: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "honored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "not reached",
			"pipelining": "supported", "framing": "content-length", "server": "absent"},
		summary: []string{"-k is meaningful over HTTP/1.1", "ab -k works"}},
	{name: "unicorn",
		probe: map[string]string{"http11_persistent": "ignored", "http10_keep_alive": "ignored",
			"max_requests_per_connection": "measured", "idle_timeout_seconds": "ignored",
			"pipelining": "first only", "framing": "content-length", "server": "absent"},
		summary: []string{"-k changes nothing", "ab -k gains nothing"}},
	{name: "starman", keepAlive: true, http10KeepAlive: true,
		probe: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "honored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "measured",
			"pipelining": "supported", "framing": "content-length", "server": "absent"},
		summary: []string{"-k is meaningful over HTTP/1.1", "ab -k works", "idle kept connections are closed after 1.0 s"}},
	{name: "gunicorn",
		probe: map[string]string{"http11_persistent": "ignored", "http10_keep_alive": "ignored",
			"max_requests_per_connection": "measured", "idle_timeout_seconds": "ignored",
			"pipelining": "first only", "framing": "content-length", "server": "present"},
		summary: []string{"-k changes nothing", "ab -k gains nothing"}},
}

// TestRealBackendsMore runs bench and probe against the backends of
// realMore.
func TestRealBackendsMore(t *testing.T) {
	for _, w := range realMore {
		t.Run(w.name, func(t *testing.T) {
			testRealBackend(t, w, false)
		})
	}
}

// TestRealNginx runs bench through nginx (HTTP, TCP and Unix) and straight
// to the php-fpm pool behind it, and probes nginx: keep-alive towards the
// client, chunked bodies, and HTTP/1.0 keep-alive lost for want of a length.
func TestRealNginx(t *testing.T) {
	b := startReal(t, "nginx", false)
	if b.urls["fcgi-unix"] == "" {
		t.Fatalf("no fcgi-unix url: %v", b.urls)
	}
	w := realWant{name: "nginx", keepAlive: true,
		probe: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "ignored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "not reached",
			"pipelining": "supported", "framing": "chunked", "server": "present"},
		summary: []string{"-k is meaningful over HTTP/1.1", "HTTP/1.0 keep-alive is lost because the body has no length", "bodies are chunked"}}
	for _, kind := range []string{"tcp", "unix"} {
		t.Run(kind, func(t *testing.T) {
			realBench(t, b, w, kind)
			realProbe(t, b, w, kind)
		})
	}
	t.Run("direct", func(t *testing.T) {
		for _, ka := range []bool{false, true} {
			args := []string{"-n", "30", "-c", "3", "-s", "10", "--document-root", b.docRoot}
			if ka {
				args = append(args, "-k")
			}
			s := benchJSON(t, append(args, b.url("fcgi-unix", "big"))...)
			if s.Complete != 30 || s.Failed != 0 || s.DocumentLength != realBigLen {
				t.Errorf("keep-alive %v: complete %d failed %d length %d errors %v", ka, s.Complete, s.Failed, s.DocumentLength, s.ErrorSamples)
			}
		}
	})
}
