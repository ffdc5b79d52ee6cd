package main

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

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
