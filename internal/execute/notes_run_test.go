package execute_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// notesRun runs bench -n n (-c c, with set's other options) against url
// and returns the summary.
func notesRun(t *testing.T, url string, n int64, c int, set func(po *plan.Options)) stats.Summary {
	t.Helper()
	po := benchLoad{n: int(n), c: c, timeout: 30}.options(url)
	if set != nil {
		set(&po)
	}
	return runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true}).Summary
}

// reportText is the text report (ab's) of s.
func reportText(t *testing.T, s *stats.Summary) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Text(&b, s, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestKeepAliveLineSaysWhatIsSent: the report's Keep-alive line names the
// Connection header that went out (or that none did), as the request head
// printed with verbosity 2 (-v 2) shows it.
func TestKeepAliveLineSaysWhatIsSent(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	cases := []struct {
		name string
		set  func(po *plan.Options)
		line string // after "Keep-alive:" and the padding
		sent string // the Connection header line in the request head, "" for none
	}{
		{"", func(*plan.Options) {}, "off (Connection: close)", "Connection: close"},
		{"-k", func(po *plan.Options) { po.KeepAlive = true }, "on (HTTP/1.1, no Connection header sent)", ""},
		{"--http1.0", func(po *plan.Options) { po.HTTP10 = true }, "off (HTTP/1.0, no Connection header sent)", ""},
		{"--http1.0 -k", func(po *plan.Options) { po.HTTP10, po.KeepAlive = true, true }, "on (Connection: keep-alive)", "Connection: keep-alive"},
		{"-H Connection: Upgrade", func(po *plan.Options) { po.Headers = []string{"Connection: Upgrade"} }, "off (Connection: Upgrade)", "Connection: Upgrade"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			po := benchLoad{n: 2, c: 1, timeout: 30}.options(srv.URL("/"))
			c.set(&po)
			var errs bytes.Buffer
			run := runBenchPlan(t, context.Background(), po, execute.Options{Verbosity: 2, Stderr: &execute.LockedWriter{W: &errs}, Observe: true})
			out := reportText(t, &run.Summary)
			if want := "Keep-alive:             " + c.line + "\n"; !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
			head, _, _ := strings.Cut(errs.String(), "\r\n\r\n")
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
	s := notesRun(t, srv.URL("/"), 60, 2, func(po *plan.Options) { po.KeepAlive = true })
	if s.Complete != 60 || s.Failed != 0 || s.Reconnects < 50 {
		t.Fatalf("complete %d failed %d reconnects %d", s.Complete, s.Failed, s.Reconnects)
	}
	if s.KeepAliveRequests > 2 {
		t.Errorf("%d keep-alive requests with %d reconnects, want at most 2", s.KeepAliveRequests, s.Reconnects)
	}
}

// TestNoteEveryResponseNon2xx: when every response is a non-2xx the run
// says so in a note, with what to check: for FastCGI the SCRIPT_FILENAME
// sent, --document-root and --param SCRIPT_FILENAME=.
func TestNoteEveryResponseNon2xx(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		t.Run(proto, func(t *testing.T) {
			srv := fixtures.StartTB(t, proto, "unix", fixtures.Options{Status: 404})
			s := notesRun(t, srv.URL("/index.php"), 5, 1, func(po *plan.Options) {
				if proto == fixtures.ProtoFCGI {
					po.DocumentRoot = "/srv/www"
				}
			})
			want := map[string]string{
				fixtures.ProtoFCGI: "every response was non-2xx (5 of 5): the backend did not serve what you meant to measure; " +
					"SCRIPT_FILENAME was /srv/www/index.php: check the URL's path and --document-root (default: the current directory), " +
					"or set --param SCRIPT_FILENAME=/path/to/script",
				fixtures.ProtoHTTP: "every response was non-2xx (5 of 5)",
			}[proto]
			if !runNotesHave(s.Notes, want) {
				t.Errorf("notes %q lack %q", s.Notes, want)
			}
			// Some 2xx: no such note.
			ok := fixtures.StartTB(t, proto, "unix", fixtures.Options{})
			if s := notesRun(t, ok.URL("/"), 3, 1, nil); runNotesHave(s.Notes, "non-2xx") {
				t.Errorf("2xx responses got the note: %q", s.Notes)
			}
		})
	}
}

// TestNotePHPFPMPrimaryScriptUnknown: php-fpm with the default document
// root (the current directory, which has no such script) answers 404
// "File not found." and "Primary script unknown" on FastCGI stderr: the
// report's Note quotes it and says what to check; with the right document
// root a script that writes to stderr gets the stderr note instead.
func TestNotePHPFPMPrimaryScriptUnknown(t *testing.T) {
	f := realbackend.PHPFPM(t, "unix")
	s := notesRun(t, f.URL(realbackend.HelloScript), 4, 1, nil)
	out := reportText(t, &s)
	for _, want := range []string{"Non-2xx responses:      4\n", "Note:                   every response was non-2xx (4 of 4)",
		"--param SCRIPT_FILENAME=", `its FastCGI stderr said "Primary script unknown"`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	root := func(po *plan.Options) { po.DocumentRoot = f.DocRoot }
	s = notesRun(t, f.URL(realbackend.HelloScript), 4, 1, root)
	if s.Non2xx != 0 || runNotesHave(s.Notes, "non-2xx") || s.StderrFirstLine != "" || runNotesHave(s.Notes, "stderr") {
		t.Errorf("a good run: non-2xx %d, stderr %q, notes %q", s.Non2xx, s.StderrFirstLine, s.Notes)
	}
	s = notesRun(t, f.URL(realbackend.WarnScript), 4, 1, root)
	if s.Non2xx != 0 || s.StderrBytes == 0 || !strings.Contains(s.StderrFirstLine, realbackend.WarnMessage) ||
		!runNotesHave(s.Notes, "bytes to FastCGI stderr") || !runNotesHave(s.Notes, realbackend.WarnMessage) {
		t.Errorf("stderr: non-2xx %d, %d bytes, first line %q, notes %q", s.Non2xx, s.StderrBytes, s.StderrFirstLine, s.Notes)
	}
}

// TestReconnectNoteNamesFastCGI: a FastCGI backend that closes a kept
// connection after 3 requests (a worker recycled) gets the reconnect note
// with the FastCGI cause, end to end; the HTTP wording is checked on
// summaries made by hand (TestNotesAttribution), since the built-in HTTP
// backend says Connection: close before it closes.
func TestReconnectNoteNamesFastCGI(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 3}})
	s := notesRun(t, srv.URL("/x.php"), 30, 2, func(po *plan.Options) { po.KeepAlive = true })
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

// TestKeepAliveNotesLive checks the notes on what a server does with kept
// connections, end to end against built-in backends that behave like
// Unicorn (never keeps a connection) and like php-fpm (a worker pinned per
// kept connection), over TCP and Unix sockets. (A run with no pinning is
// checked on a hand-made summary, TestKeepAliveNotesWords: a live one
// could meet a scheduler stall as long as the run on a loaded machine.)
func TestKeepAliveNotesLive(t *testing.T) {
	const closes, pins = "-k was asked but the server closed", "lasted most of the run"
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			for _, tc := range []struct {
				name  string
				opts  fixtures.Options
				load  benchLoad
				notes map[string]bool // phrase: present
			}{
				{"keepalive off", fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}},
					benchLoad{n: 20, c: 2, timeout: 30, keepAlive: true}, map[string]bool{closes: true, pins: false}},
				{"keepalive off, no -k", fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}},
					benchLoad{n: 20, c: 2, timeout: 30}, map[string]bool{closes: false, pins: false}},
				{"prefork:2 pinned", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 2}, Delay: 5 * time.Millisecond},
					benchLoad{n: 60, c: 4, timeout: 30, keepAlive: true}, map[string]bool{closes: false, pins: true}},
			} {
				t.Run(fmt.Sprintf("%s/%s/%s", proto, network, tc.name), func(t *testing.T) {
					srv := fixtures.StartTB(t, proto, network, tc.opts)
					s := runBenchPlan(t, context.Background(), tc.load.options(srv.URL("/x.php")), execute.Options{Quiet: true, Observe: true}).Summary
					if s.Failed != 0 {
						t.Fatalf("failed %d: %v", s.Failed, s.ErrorSamples)
					}
					for phrase, want := range tc.notes {
						if got := runNotesHave(s.Notes, phrase); got != want {
							t.Errorf("note %q present %v, want %v; notes %q (max %v ms, median %v ms, run %v s)",
								phrase, got, want, s.Notes, s.ConnectionTimes.Total.Max, s.ConnectionTimes.Total.Median, s.TimeTaken)
						}
					}
				})
			}
		}
	}
}
