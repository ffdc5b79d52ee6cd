package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
)

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

// TestKeepAliveNotesWords checks the wording per protocol and version on
// summaries made by hand.
func TestKeepAliveNotesWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    stats.Summary
		want string
	}{
		{"fcgi", stats.Summary{Target: stats.TargetInfo{Protocol: "fcgi"}, KeepAlive: true, Complete: 5}, "ignores FCGI_KEEP_CONN"},
		{"http/1.1", stats.Summary{Target: stats.TargetInfo{Protocol: "http"}, HTTPVersion: "1.1", KeepAlive: true, Complete: 5}, "Unicorn"},
		{"http/1.0", stats.Summary{Target: stats.TargetInfo{Protocol: "http"}, HTTPVersion: "1.0", KeepAlive: true, Complete: 5}, "without --http1.0"},
		{"pinned", stats.Summary{Target: stats.TargetInfo{Protocol: "fcgi"}, KeepAlive: true, Complete: 100, KeepAliveRequests: 100,
			Concurrency: 8, TimeTaken: 1.1, ConnectionTimes: stats.ConnectionTimes{Total: stats.PhaseStats{Median: 21, Max: 1092}}},
			"the longest request (1092 ms) lasted most of the run (1100 ms) while the median was 21 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := keepAliveNotes(&tc.s); !notesHave(n, tc.want) || len(n) != 1 {
				t.Errorf("notes %q, want one with %q", n, tc.want)
			}
		})
	}
	even := stats.Summary{Target: stats.TargetInfo{Protocol: "fcgi"}, KeepAlive: true, Complete: 100, KeepAliveRequests: 100,
		Concurrency: 4, TimeTaken: 1.1, ConnectionTimes: stats.ConnectionTimes{Total: stats.PhaseStats{Median: 21, Max: 60}}}
	if n := keepAliveNotes(&even); len(n) != 0 {
		t.Errorf("notes of an even kept run: %q", n)
	}
	if n := keepAliveNotes(&stats.Summary{KeepAlive: false, Complete: 5}); len(n) != 0 {
		t.Errorf("notes without -k: %q", n)
	}
}
