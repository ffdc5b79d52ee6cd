package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/realbackend"
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

// TestNoteEveryResponseNon2xx: when every response is a non-2xx the report
// says so in a Note, with what to check: for FastCGI the SCRIPT_FILENAME
// sent, --document-root and --param SCRIPT_FILENAME=.
func TestNoteEveryResponseNon2xx(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		t.Run(proto, func(t *testing.T) {
			srv := fixtures.StartTB(t, proto, "unix", fixtures.Options{Status: 404})
			args := []string{"-n", "5", srv.URL("/index.php")}
			if proto == fixtures.ProtoFCGI {
				args = append([]string{"--document-root", "/srv/www"}, args...)
			}
			s := benchJSON(t, args...)
			want := map[string]string{
				fixtures.ProtoFCGI: "every response was non-2xx (5 of 5): the backend did not serve what you meant to measure; " +
					"SCRIPT_FILENAME was /srv/www/index.php: check the URL's path and --document-root (default: the current directory), " +
					"or set --param SCRIPT_FILENAME=/path/to/script",
				fixtures.ProtoHTTP: "every response was non-2xx (5 of 5)",
			}[proto]
			if !notesHave(s.Notes, want) {
				t.Errorf("notes %q lack %q", s.Notes, want)
			}
			// Some 2xx: no such note.
			ok := fixtures.StartTB(t, proto, "unix", fixtures.Options{})
			if s := benchJSON(t, "-n", "3", ok.URL("/")); notesHave(s.Notes, "non-2xx") {
				t.Errorf("2xx responses got the note: %q", s.Notes)
			}
		})
	}
}

// TestNotePHPFPMPrimaryScriptUnknown: php-fpm with the default
// --document-root (this directory, which has no such script) answers 404
// "File not found." and "Primary script unknown" on FastCGI stderr: the
// report's Note quotes it and says what to check; with the right document
// root a script that writes to stderr gets the stderr note instead.
func TestNotePHPFPMPrimaryScriptUnknown(t *testing.T) {
	f := realbackend.PHPFPM(t, "unix")
	code, out, errs := runMain(t, context.Background(), "bench", "-n", "4", f.URL(realbackend.HelloScript))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Non-2xx responses:      4\n", "Note:                   every response was non-2xx (4 of 4)",
		"--param SCRIPT_FILENAME=", `its FastCGI stderr said "Primary script unknown"`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	s := benchJSON(t, "-n", "4", "--document-root", f.DocRoot, f.URL(realbackend.HelloScript))
	if s.Non2xx != 0 || notesHave(s.Notes, "non-2xx") || s.StderrFirstLine != "" || notesHave(s.Notes, "stderr") {
		t.Errorf("a good run: non-2xx %d, stderr %q, notes %q", s.Non2xx, s.StderrFirstLine, s.Notes)
	}
	s = benchJSON(t, "-n", "4", "--document-root", f.DocRoot, f.URL(realbackend.WarnScript))
	if s.Non2xx != 0 || s.StderrBytes == 0 || !strings.Contains(s.StderrFirstLine, realbackend.WarnMessage) ||
		!notesHave(s.Notes, "bytes to FastCGI stderr") || !notesHave(s.Notes, realbackend.WarnMessage) {
		t.Errorf("stderr: non-2xx %d, %d bytes, first line %q, notes %q", s.Non2xx, s.StderrBytes, s.StderrFirstLine, s.Notes)
	}
}

// TestReconnectNoteNamesFastCGI: a FastCGI backend that closes a kept
// connection after 3 requests (a worker recycled) gets the reconnect note
// with the FastCGI cause, end to end; the HTTP wording is checked on
// summaries made by hand (internal/execute), since the built-in HTTP
// backend says Connection: close before it closes.
func TestReconnectNoteNamesFastCGI(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 3}})
	s := benchJSON(t, "-n", "30", "-c", "2", "-k", srv.URL("/x.php"))
	if s.Failed != 0 || s.Reconnects == 0 {
		t.Fatalf("failed %d, reconnects %d: want none failed and some redialed", s.Failed, s.Reconnects)
	}
	found := false
	for _, n := range s.Notes {
		if strings.Contains(n, "kept connections before a request") {
			found = true
			if !strings.Contains(n, "FastCGI servers that recycle workers") || strings.Contains(n, "Thin") {
				t.Errorf("the reconnect note of a FastCGI target: %q", n)
			}
		}
	}
	if !found {
		t.Errorf("no reconnect note in %q", s.Notes)
	}
}

// TestKeepAliveNotes checks the notes on what a server does with kept
// connections, end to end against built-in backends that behave like
// Unicorn (never keeps a connection) and like php-fpm (a worker pinned per
// kept connection), over TCP and Unix sockets. (A run with no pinning is
// checked on a hand-made summary below: a live one could meet a scheduler
// stall as long as the run on a loaded machine.)
func TestKeepAliveNotes(t *testing.T) {
	const closes, pins = "-k was asked but the server closed", "lasted most of the run"
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			for _, tc := range []struct {
				name  string
				opts  fixtures.Options
				args  []string
				notes map[string]bool // phrase: present
			}{
				{"keepalive off", fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}},
					[]string{"-n", "20", "-c", "2", "-k"}, map[string]bool{closes: true, pins: false}},
				{"keepalive off, no -k", fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}},
					[]string{"-n", "20", "-c", "2"}, map[string]bool{closes: false, pins: false}},
				{"prefork:2 pinned", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 2}, Delay: 5 * time.Millisecond},
					[]string{"-n", "60", "-c", "4", "-k"}, map[string]bool{closes: false, pins: true}},
			} {
				t.Run(fmt.Sprintf("%s/%s/%s", proto, network, tc.name), func(t *testing.T) {
					srv := fixtures.StartTB(t, proto, network, tc.opts)
					s := benchJSON(t, append(tc.args, srv.URL("/x.php"))...)
					if s.Failed != 0 {
						t.Fatalf("failed %d: %v", s.Failed, s.ErrorSamples)
					}
					for phrase, want := range tc.notes {
						if got := notesHave(s.Notes, phrase); got != want {
							t.Errorf("note %q present %v, want %v; notes %q (max %v ms, median %v ms, run %v s)",
								phrase, got, want, s.Notes, s.ConnectionTimes.Total.Max, s.ConnectionTimes.Total.Median, s.TimeTaken)
						}
					}
				})
			}
		}
	}
}
