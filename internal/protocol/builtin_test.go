package protocol_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// TestLookup: each built-in scheme finds its protocol; an unknown one
// gets the URL parser's words.
func TestLookup(t *testing.T) {
	for _, tc := range []struct{ scheme, name string }{
		{"http", "http"}, {"https", "http"}, {"fcgi", "fcgi"},
	} {
		p, err := protocol.Lookup(tc.scheme)
		if err != nil || p.Name() != tc.name {
			t.Errorf("Lookup(%q) = %v, %v; want %s", tc.scheme, p, err, tc.name)
		}
	}
	if _, err := protocol.Lookup("ftp"); err == nil || err.Error() != `unknown scheme "ftp" (want http, https or fcgi)` {
		t.Errorf("Lookup(ftp): %v", err)
	}
	// The URL parser says the same of it, after the target.
	if _, err := sockets.ParseTarget("ftp://h/"); err == nil || err.Error() != `target "ftp://h/": unknown scheme "ftp" (want http, https or fcgi)` {
		t.Errorf("ParseTarget(ftp): %v", err)
	}
	tgt, err := sockets.ParseTarget("HTTPS://example.org/")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := protocol.Of(tgt); err != nil || p.Name() != "http" || !tgt.UsesTLS() || tgt.Port != "443" {
		t.Errorf("https target: %v, %v, TLS %v, port %s", p, err, tgt.UsesTLS(), tgt.Port)
	}
	var names []string
	for _, p := range protocol.Registered() {
		names = append(names, p.Name())
	}
	if strings.Join(names, " ") != "http fcgi" {
		t.Errorf("registered %v", names)
	}
}

// TestRegisterTaken: a scheme is one protocol's.
func TestRegisterTaken(t *testing.T) {
	err := protocol.Register(protocol.FCGI{})
	if err == nil || !strings.Contains(err.Error(), `scheme "fcgi" is already registered`) {
		t.Errorf("registering fcgi twice: %v", err)
	}
}

// TestChecks: each protocol refuses the other's request options, in the
// command line's words, and takes its own.
func TestChecks(t *testing.T) {
	params := [][2]string{{"A", "1"}}
	for _, tc := range []struct {
		name string
		p    protocol.Protocol
		f    protocol.Flags
		want string
	}{
		{"fcgi --http1.0", protocol.FCGI{}, protocol.Flags{HTTP10: true}, "--http1.0 applies to http:// targets only"},
		{"fcgi own", protocol.FCGI{}, protocol.Flags{Params: params, DocumentRoot: "/srv", FPMStatus: "/status"}, ""},
		{"http --param", protocol.HTTP{}, protocol.Flags{Params: params}, "--document-root and --param apply to fcgi:// targets only"},
		{"http --document-root", protocol.HTTP{}, protocol.Flags{DocumentRoot: "/srv"}, "--document-root and --param apply to fcgi:// targets only"},
		{"http --fpm-status", protocol.HTTP{}, protocol.Flags{FPMStatus: "/status"}, "--fpm-status applies to fcgi:// targets only"},
		{"http --http1.0", protocol.HTTP{}, protocol.Flags{HTTP10: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Check(tc.f)
			_, oerr := tc.p.Options(tc.f)
			switch {
			case tc.want == "" && (err != nil || oerr != nil):
				t.Errorf("refused: %v, %v", err, oerr)
			case tc.want != "" && (err == nil || err.Error() != tc.want || oerr == nil || oerr.Error() != tc.want):
				t.Errorf("got %v / %v, want %q", err, oerr, tc.want)
			}
		})
	}
}

// TestFCGIOptions: the document root is made absolute, the current
// directory by default; the params are kept.
func TestFCGIOptions(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	o, err := protocol.FCGI{}.Options(protocol.Flags{})
	if err != nil || o.(protocol.FCGIOptions).DocumentRoot != wd {
		t.Errorf("default root %+v, %v; want %s", o, err, wd)
	}
	o, err = protocol.FCGI{}.Options(protocol.Flags{DocumentRoot: "www/../site", Params: [][2]string{{"A", "1"}}})
	fo := o.(protocol.FCGIOptions)
	if err != nil || fo.DocumentRoot != filepath.Join(wd, "site") || len(fo.Params) != 1 || fo.Params[0] != [2]string{"A", "1"} {
		t.Errorf("options %+v, %v", fo, err)
	}
	r := protocol.Request{Target: target(t, "fcgi://127.0.0.1/app/index.php?x=1")}
	if got := protocol.ScriptFilename(r, fo); got != filepath.Join(wd, "site", "app", "index.php") {
		t.Errorf("SCRIPT_FILENAME %s", got)
	}
	fo.Params = append(fo.Params, [2]string{"SCRIPT_FILENAME", "/other.php"})
	if got := protocol.ScriptFilename(r, fo); got != "/other.php" {
		t.Errorf("SCRIPT_FILENAME with --param %s", got)
	}
}

// TestRecordWords: what each protocol adds to the record.
func TestRecordWords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       protocol.Protocol
		url     string
		opts    any
		headers [][2]string
		keep    bool
		version string
		conn    string
		wire    stats.Wire
	}{
		{"fcgi", protocol.FCGI{}, "fcgi://127.0.0.1/", nil, nil, false, "", "",
			stats.Wire{Protocol: "FastCGI (RESPONDER)", KeepAlive: "FCGI_KEEP_CONN clear", Stderr: "FastCGI stderr"}},
		{"fcgi -k", protocol.FCGI{}, "fcgi://127.0.0.1/", nil, nil, true, "", "",
			stats.Wire{Protocol: "FastCGI (RESPONDER)", KeepAlive: "FCGI_KEEP_CONN set", Stderr: "FastCGI stderr"}},
		{"http", protocol.HTTP{}, "http://127.0.0.1/", nil, nil, false, "1.1", "close",
			stats.Wire{Protocol: "HTTP/1.1", KeepAlive: "Connection: close"}},
		{"http -k", protocol.HTTP{}, "http://127.0.0.1/", nil, nil, true, "1.1", "",
			stats.Wire{Protocol: "HTTP/1.1", KeepAlive: "HTTP/1.1, no Connection header sent"}},
		{"http/1.0", protocol.HTTP{}, "http://127.0.0.1/", protocol.HTTPOptions{HTTP10: true}, nil, false, "1.0", "",
			stats.Wire{Protocol: "HTTP/1.0", KeepAlive: "HTTP/1.0, no Connection header sent"}},
		{"http/1.0 -k", protocol.HTTP{}, "https://127.0.0.1/", protocol.HTTPOptions{HTTP10: true}, nil, true, "1.0", "keep-alive",
			stats.Wire{Protocol: "HTTP/1.0", KeepAlive: "Connection: keep-alive"}},
		{"-H Connection", protocol.HTTP{}, "http://127.0.0.1/", nil, [][2]string{{"Connection", "upgrade"}}, false, "1.1", "upgrade",
			stats.Wire{Protocol: "HTTP/1.1", KeepAlive: "Connection: upgrade"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rp stats.Plan
			tc.p.Record(protocol.Request{Target: target(t, tc.url), Headers: tc.headers, KeepAlive: tc.keep}, tc.opts, &rp)
			if rp.HTTPVersion != tc.version || rp.ConnectionHeader != tc.conn || rp.Wire == nil || *rp.Wire != tc.wire {
				t.Errorf("version %q connection %q wire %+v; want %q %q %+v", rp.HTTPVersion, rp.ConnectionHeader, rp.Wire, tc.version, tc.conn, tc.wire)
			}
		})
	}
}

// TestEnginePreference: only HTTP without keep-alive prefers the ring.
func TestEnginePreference(t *testing.T) {
	if !(protocol.HTTP{}).RingByDefault(false) || (protocol.HTTP{}).RingByDefault(true) ||
		(protocol.FCGI{}).RingByDefault(false) || (protocol.FCGI{}).RingByDefault(true) {
		t.Error("engine preference changed")
	}
}

// TestProbeSelection: each protocol checks --only against its own checks,
// and only HTTP dials before them.
func TestProbeSelection(t *testing.T) {
	var f, h protocol.Prober = protocol.FCGI{}, protocol.HTTP{}
	if err := f.SelectChecks([]string{"keep_conn"}, nil); err != nil {
		t.Errorf("fcgi keep_conn: %v", err)
	}
	if err := h.SelectChecks([]string{"keep_conn"}, nil); err == nil || !strings.Contains(err.Error(), `unknown check "keep_conn"`) {
		t.Errorf("http keep_conn: %v", err)
	}
	if f.DialFirst() || !h.DialFirst() {
		t.Error("DialFirst changed")
	}
	if _, ok := protocol.Protocol(protocol.FCGI{}).(protocol.StatusReader); !ok {
		t.Error("FastCGI reads php-fpm's status page")
	}
	if _, ok := protocol.Protocol(protocol.HTTP{}).(protocol.StatusReader); ok {
		t.Error("HTTP has no status page reader")
	}
}

func target(t *testing.T, url string) sockets.Target {
	t.Helper()
	tgt, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}
