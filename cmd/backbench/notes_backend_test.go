package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
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
