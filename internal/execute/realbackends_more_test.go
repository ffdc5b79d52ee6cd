//go:build integration

package execute_test

// The real backends that CI does not install, run by `make integration`
// (go test -tags integration); each is skipped when it is not installed.

import (
	"testing"

	"github.com/backbench/backbench/internal/realbackend"
)

// realBenchMore are Perl FCGI, Puma, Unicorn, Starman and gunicorn, as
// they behaved on Debian bookworm.
var realBenchMore = []realBenchWant{
	{name: "perl-fcgi", keepAlive: true},
	{name: "puma", keepAlive: true, http10KeepAlive: true},
	{name: "unicorn"},
	{name: "starman", keepAlive: true, http10KeepAlive: true},
	{name: "gunicorn"},
}

// TestRealBackendsMoreBench runs the loads of realBenchBackend against
// the backends of realBenchMore.
func TestRealBackendsMoreBench(t *testing.T) {
	for _, w := range realBenchMore {
		t.Run(w.name, func(t *testing.T) {
			b := realbackend.StartScripted(t, w.name, false)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realBenchBackend(t, b, w, kind) })
			}
		})
	}
}

// TestRealNginxBench runs through nginx (HTTP, TCP and Unix; it keeps
// connections towards the client, but not HTTP/1.0 ones, for want of a
// length) and straight to the php-fpm pool behind it.
func TestRealNginxBench(t *testing.T) {
	b := realbackend.StartScripted(t, "nginx", false)
	if b.URLs["fcgi-unix"] == "" {
		t.Fatalf("no fcgi-unix url: %v", b.URLs)
	}
	w := realBenchWant{name: "nginx", keepAlive: true}
	for _, kind := range []string{"tcp", "unix"} {
		t.Run(kind, func(t *testing.T) { realBenchBackend(t, b, w, kind) })
	}
	t.Run("direct", func(t *testing.T) {
		for _, ka := range []bool{false, true} {
			s := realBenchRun(t, b, b.URL("fcgi-unix", "big"), realBenchLoad{n: 30, c: 3, keepAlive: ka})
			if s.Complete != 30 || s.Failed != 0 || s.DocumentLength != realbackend.ScriptedBigLen {
				t.Errorf("keep-alive %v: complete %d failed %d length %d errors %v", ka, s.Complete, s.Failed, s.DocumentLength, s.ErrorSamples)
			}
		}
	})
}
