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
