package sockets

import (
	"strings"
	"testing"
)

// TestRegisterScheme: a registered scheme parses, with its default port
// and TLS; the built-in ones may be registered again as they are, not
// otherwise; bad names are refused.
func TestRegisterScheme(t *testing.T) {
	if err := RegisterScheme("x-test", "7001", true); err != nil {
		t.Fatal(err)
	}
	tgt, err := ParseTarget("X-Test://h/p")
	if err != nil || tgt.Scheme != "x-test" || tgt.Port != "7001" || !tgt.UsesTLS() || tgt.HostHeader() != "h" {
		t.Errorf("x-test target %+v, %v", tgt, err)
	}
	if _, err := ParseTarget("nope://h/"); err == nil || !strings.HasSuffix(err.Error(), `unknown scheme "nope" (want http, https, fcgi or x-test)`) {
		t.Errorf("unknown scheme: %v", err)
	}
	if err := RegisterScheme(SchemeHTTPS, "443", true); err != nil {
		t.Errorf("https again as it is: %v", err)
	}
	for _, bad := range []struct{ name, port string }{{"x-test", "7002"}, {SchemeFCGI, "9001"}, {"", "1"}, {"Up", "1"}, {"a:b", "1"}} {
		if err := RegisterScheme(bad.name, bad.port, false); err == nil {
			t.Errorf("RegisterScheme(%q, %q) accepted", bad.name, bad.port)
		}
	}
	if (Target{Scheme: SchemeHTTP}).UsesTLS() || !(Target{Scheme: SchemeHTTPS}).UsesTLS() || DefaultPort(SchemeFCGI) != "9000" {
		t.Error("built-in schemes changed")
	}
}
