package main

import (
	"context"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

// TestKeepAliveLineSaysWhatIsSent: the report's Keep-alive line names the
// Connection header that went out (or that none did), as the request head
// printed by -v 2 shows it.
func TestKeepAliveLineSaysWhatIsSent(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	cases := []struct {
		args []string
		line string // after "Keep-alive:" and the padding
		sent string // the Connection header line in the request head, "" for none
	}{
		{nil, "off (Connection: close)", "Connection: close"},
		{[]string{"-k"}, "on (HTTP/1.1, no Connection header sent)", ""},
		{[]string{"--http1.0"}, "off (HTTP/1.0, no Connection header sent)", ""},
		{[]string{"--http1.0", "-k"}, "on (Connection: keep-alive)", "Connection: keep-alive"},
		{[]string{"-H", "Connection: Upgrade"}, "off (Connection: Upgrade)", "Connection: Upgrade"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append(append([]string{"bench", "-v", "2", "-n", "2"}, c.args...), srv.URL("/"))
			code, out, errs := runMain(t, context.Background(), args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if want := "Keep-alive:             " + c.line + "\n"; !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
			head, _, _ := strings.Cut(errs, "\r\n\r\n")
			got := ""
			for _, l := range strings.Split(head, "\r\n") {
				if strings.HasPrefix(strings.ToLower(l), "connection:") {
					got = l
				}
			}
			if got != c.sent {
				t.Errorf("sent %q, want %q; head:\n%s", got, c.sent, head)
			}
		})
	}
}

// TestFCGIKeepAliveCountsOpenConnections: a FastCGI server that closes
// after every response although FCGI_KEEP_CONN was set leaves no kept
// response but the last of each connection (which the run ends before the
// close is seen), whatever the redials.
func TestFCGIKeepAliveCountsOpenConnections(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: fixtures.KeepConnIgnore}})
	s := benchJSON(t, "-k", "-n", "60", "-c", "2", srv.URL("/"))
	if s.Complete != 60 || s.Failed != 0 || s.Reconnects < 50 {
		t.Fatalf("complete %d failed %d reconnects %d", s.Complete, s.Failed, s.Reconnects)
	}
	if s.KeepAliveRequests > 2 {
		t.Errorf("%d keep-alive requests with %d reconnects, want at most 2", s.KeepAliveRequests, s.Reconnects)
	}
}
