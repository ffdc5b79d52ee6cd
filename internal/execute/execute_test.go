package execute

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

func notesHave(notes []string, phrase string) bool {
	for _, n := range notes {
		if strings.Contains(n, phrase) {
			return true
		}
	}
	return false
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
		{"queue stall", stats.Summary{Target: stats.TargetInfo{Protocol: "http"}, HTTPVersion: "1.1", KeepAlive: true, Complete: 1000, KeepAliveRequests: 1000,
			Concurrency: 150, TimeTaken: 1.1, ConnectsOver1s: 3,
			ConnectionTimes: stats.ConnectionTimes{Connect: stats.PhaseStats{Max: 1030}, Total: stats.PhaseStats{Median: 21, Max: 1092}}},
			"its connect took 1030 ms: SYNs dropped by the server's full listen queue"},
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

// TestNotesAttribution: each note names only the cause of its own
// protocol: a full-queue stall is not called a worker held per kept
// connection, and HTTP closes are not blamed on FastCGI workers.
func TestNotesAttribution(t *testing.T) {
	stall := stats.Summary{Target: stats.TargetInfo{Protocol: "http"}, HTTPVersion: "1.1", KeepAlive: true, Complete: 1000, KeepAliveRequests: 1000,
		Concurrency: 150, TimeTaken: 1.1, ConnectsOver1s: 3,
		ConnectionTimes: stats.ConnectionTimes{Connect: stats.PhaseStats{Max: 1030}, Total: stats.PhaseStats{Median: 21, Max: 1092}}}
	if n := keepAliveNotes(&stall); notesHave(n, "kept connection a worker") {
		t.Errorf("a full-queue stall named as a worker per kept connection: %q", n)
	}
	for _, tc := range []struct{ proto, want, not string }{
		{"fcgi", "FastCGI servers that recycle workers", "Thin"},
		{"http", "Thin keeps at most 100", "FastCGI"},
	} {
		s := stats.Summary{Target: stats.TargetInfo{Protocol: tc.proto}, Reconnects: 7}
		n := reconnectNote(&s)
		if !strings.Contains(n, "closed 7 kept connections") || !strings.Contains(n, tc.want) || strings.Contains(n, tc.not) {
			t.Errorf("%s: reconnect note %q, want %q and not %q", tc.proto, n, tc.want, tc.not)
		}
	}
	if n := reconnectNote(&stats.Summary{Target: stats.TargetInfo{Protocol: "http"}}); n != "" {
		t.Errorf("a note without reconnects: %q", n)
	}
}
