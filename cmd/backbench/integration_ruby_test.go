package main

// Ruby's FastCGI servers, the most fragile ones here (fcgi.rb exits on a
// connection closed without a request, on FCGI_GET_VALUES asking for any
// name, on an unknown record type): run in `make test` and CI, like
// php-fpm, fcgiwrap and Thin.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// realRuby are ruby-fcgi (fcgi.rb under spawn-fcgi) and rack-fcgi (rackup
// -s fastcgi, on fcgi.rb too), as they behaved on Debian bookworm.
var realRuby = []realWant{
	{name: "ruby-fcgi", probe: rubyProbe, summary: rubySummary},
	{name: "rack-fcgi", probe: rubyProbe, summary: rubySummary},
}

var rubyProbe = map[string]string{"response": "answered", "keep_conn": "ignored", "params": "served",
	"max_requests_per_connection": "measured", "get_values_empty": "answered", "get_values": "closed",
	"unknown_type": "skipped", "unknown_role": "skipped", "roles": "skipped", "multiplexing": "skipped", "abort": "skipped"}

var rubySummary = []string{"-k changes nothing",
	"the server crashed on get_values: a frontend that sends FCGI_GET_VALUES would take it down"}

// TestRealRubyFCGI benches both Ruby servers over TCP and Unix, with and
// without -k (they ignore FCGI_KEEP_CONN: -k runs complete with redials),
// checks that every process is still alive, then probes each listener
// (which takes it down on get_values, and says so).
func TestRealRubyFCGI(t *testing.T) {
	onceAcrossEngines(t)
	for _, w := range realRuby {
		t.Run(w.name, func(t *testing.T) {
			b := startReal(t, w.name, true)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { rubyBench(t, b, kind) })
			}
			for _, pid := range b.pids {
				if !processAlive(pid) {
					t.Fatalf("process %d is gone after the bench runs", pid)
				}
			}
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realProbe(t, b, w, kind) })
			}
		})
	}
}

// rubyBench runs bench on both bodies with and without -k: every request
// completes, and with -k each connection after a worker's first was
// redialed (the server closed it after its answer), which a note says.
func rubyBench(t *testing.T, b *realBackend, kind string) {
	const n, c = 40, 3
	for _, endpoint := range []string{"small", "big"} {
		for _, ka := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keepalive=%v", endpoint, ka), func(t *testing.T) {
				url := b.url(kind, endpoint)
				args := []string{"-n", strconv.Itoa(n), "-c", strconv.Itoa(c), "-s", "10", "--document-root", b.docRoot, url}
				if ka {
					args = append(args, "-k")
				}
				s := benchJSON(t, args...)
				want := map[string]int64{"small": realSmallLen, "big": realBigLen}[endpoint]
				if s.Complete != n || s.Failed != 0 || s.DocumentLength != want || s.BackendLost != nil {
					t.Fatalf("complete %d failed %d length %d lost %v errors %v", s.Complete, s.Failed, s.DocumentLength, s.BackendLost, s.ErrorSamples)
				}
				if ka && (s.Reconnects < n-c || !notesHave(s.Notes, "-k was asked but the server closed")) {
					t.Errorf("-k: %d reconnects, notes %q", s.Reconnects, s.Notes)
				}
			})
		}
	}
}

// processAlive reports whether pid runs and is not a zombie.
func processAlive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i > 0 && i+2 < len(st) && st[i+2] != 'Z'
}
