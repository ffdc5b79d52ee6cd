package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// runMain runs the command line and returns its exit status, stdout and
// stderr.
func runMain(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, nil, args, &out, &errb)
	return code, out.String(), errb.String()
}

func benchJSON(t *testing.T, args ...string) stats.Summary {
	t.Helper()
	code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s stats.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return s
}

// TestBenchBuiltinBackends runs bench end to end against the built-in
// backends over TCP and Unix sockets, with and without keep-alive, with a
// request count that does not divide by the concurrency.
func TestBenchBuiltinBackends(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 321})
			for _, ka := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/keepalive=%v", proto, network, ka), func(t *testing.T) {
					before := srv.Accepted()
					args := []string{"-n", "203", "-c", "7", srv.URL("/x.php?a=1")}
					if ka {
						args = append(args, "-k")
					}
					s := benchJSON(t, args...)
					if s.Complete != 203 || s.Failed != 0 {
						t.Fatalf("complete %d failed %d errors %v", s.Complete, s.Failed, s.ErrorSamples)
					}
					if s.DocumentLength != 321 || s.HTMLTransferred != 203*321 || s.TotalTransferred <= s.HTMLTransferred {
						t.Errorf("doclen %d html %d total %d", s.DocumentLength, s.HTMLTransferred, s.TotalTransferred)
					}
					conns := srv.Accepted() - before // no connection without a request
					if ka {
						if s.KeepAliveRequests != 203 || conns > 7 {
							t.Errorf("keep-alive: %d keep-alive requests over %d connections", s.KeepAliveRequests, conns)
						}
					} else if s.KeepAliveRequests != 0 || conns != 203 {
						t.Errorf("no keep-alive: %d keep-alive requests over %d connections", s.KeepAliveRequests, conns)
					}
					if s.Target.Network != network || s.Target.Protocol != proto || s.DocumentPath != "/x.php?a=1" {
						t.Errorf("target %+v path %q", s.Target, s.DocumentPath)
					}
					if s.RequestsPerSecond <= 0 || s.ConnectionTimes.Total.Max <= 0 || s.Percentiles["100"] != s.ConnectionTimes.Total.Max {
						t.Errorf("rps %v times %+v p100 %v", s.RequestsPerSecond, s.ConnectionTimes.Total, s.Percentiles["100"])
					}
				})
			}
		}
	}
}

func TestBenchTextReportAndFiles(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 10, Status: 404})
	dir := t.TempDir()
	g, e := filepath.Join(dir, "g.tsv"), filepath.Join(dir, "e.csv")
	code, out, errs := runMain(t, context.Background(), "bench", srv.URL("/"), "-n", "300", "-c", "3", "-k", "-g", g, "-e", e)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Server Software:        backbench-fixture\n",
		"Server Hostname:        127.0.0.1\n",
		"Document Length:        10 bytes\n",
		"Concurrency Level:      3\n",
		"Complete requests:      300\n",
		"Failed requests:        0\n",
		"Non-2xx responses:      300\n",
		"Keep-Alive requests:    300\n",
		"HTML transferred:       3000 bytes\n",
		"Connection Times (ms)\n",
		" 100%  ",
		"Protocol:               HTTP/1.1 GET\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// ab's heartbeat: every tenth of -n, but every 100 requests at least.
	if !strings.HasSuffix(errs, "\nCompleted 100 requests\nCompleted 200 requests\nFinished 300 requests\n") {
		t.Errorf("no progress on stderr: %q", errs)
	}
	gb, _ := os.ReadFile(g)
	if lines := strings.Split(strings.TrimSpace(string(gb)), "\n"); len(lines) != 301 || !strings.HasPrefix(lines[0], "starttime\tseconds") {
		t.Errorf("gnuplot file has %d lines", len(lines))
	}
	ef, _ := os.Open(e)
	defer ef.Close()
	rows, err := csv.NewReader(ef).ReadAll()
	if err != nil || len(rows) != 102 || rows[0][0] != "Percentage served" || rows[101][0] != "100" {
		t.Errorf("percentile CSV: %v %d rows", err, len(rows))
	}
}

// TestBenchRequestSent checks what the clients put on the wire: method,
// body, headers with commas in their value, FastCGI params.
func TestBenchRequestSent(t *testing.T) {
	dir := t.TempDir()
	body := filepath.Join(dir, "body")
	os.WriteFile(body, []byte("hello=world"), 0o644)
	for _, network := range []string{"tcp", "unix"} {
		t.Run("http/"+network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{})
			code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "1", "-v", "2",
				"-H", "X-List: a, b, c", "-p", body, "-T", "application/x-www-form-urlencoded", srv.URL("/headers"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, want := range []string{"POST /headers HTTP/1.1", "X-List: a, b, c", "Content-Length: 11", "Content-Type: application/x-www-form-urlencoded"} {
				if !strings.Contains(errs, want) {
					t.Errorf("-v 2 output lacks %q:\n%s", want, errs)
				}
			}
		})
		t.Run("fcgi/"+network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{})
			code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "1", "-v", "2", "-m", "PUT",
				"-H", "X-List: a, b", "--document-root", "/srv/www", "--param", "APP_ENV=test", srv.URL("/params?q=1"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, want := range []string{"REQUEST_METHOD=PUT", "HTTP_X_LIST=a, b", "SCRIPT_FILENAME=/srv/www/params", "QUERY_STRING=q=1", "APP_ENV=test"} {
				if !strings.Contains(errs, want) {
					t.Errorf("-v 2 output lacks %q:\n%s", want, errs)
				}
			}
		})
	}
}

// TestBenchRedialsClosedKeptConnections: a server that closes kept
// connections after 3 requests costs reconnects, not failures.
func TestBenchRedialsClosedKeptConnections(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		t.Run(proto, func(t *testing.T) {
			srv := fixtures.StartTB(t, proto, "unix", fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 3}})
			s := benchJSON(t, "-k", "-n", "100", "-c", "2", srv.URL("/"))
			if s.Complete != 100 || s.Failed != 0 {
				t.Errorf("complete %d failed %d %v", s.Complete, s.Failed, s.ErrorSamples)
			}
			// FastCGI cannot announce the close: the client finds the
			// connection dead and redials. HTTP says "Connection: close".
			if proto == fixtures.ProtoFCGI && s.Reconnects == 0 {
				t.Error("no reconnects counted")
			}
			// Either way every third response was the last of its
			// connection: it does not count as kept.
			if s.KeepAliveRequests > 70 || s.KeepAliveRequests < 60 {
				t.Errorf("%d keep-alive responses of 100 (reconnects %d), want about 2/3", s.KeepAliveRequests, s.Reconnects)
			}
		})
	}
}

func TestBenchTimeLimit(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 5 * time.Millisecond})
	start := time.Now()
	s := benchJSON(t, "-t", "0.5", "-c", "2", "-k", srv.URL("/"))
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("a 0.5 s run took %v", el)
	}
	if s.Complete < 10 || s.Failed != 0 || s.TimeTaken < 0.4 {
		t.Errorf("complete %d failed %d time %v", s.Complete, s.Failed, s.TimeTaken)
	}
}

func TestBenchInterrupted(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	sig := func() os.Signal { return syscall.SIGTERM }
	code := Main(ctx, sig, []string{"bench", "-q", "-n", "100000", "-c", "4", "-k", srv.URL("/")}, &out, &errb)
	if code != exitSIGTERM {
		t.Errorf("exit %d, want %d; %s", code, exitSIGTERM, errb.String())
	}
	if !strings.Contains(out.String(), "Interrupted:") || !strings.Contains(out.String(), "Complete requests:") {
		t.Errorf("no interrupted report:\n%s", out.String())
	}
}

func TestBenchExitStatus(t *testing.T) {
	dir := t.TempDir()
	notSock := filepath.Join(dir, "file")
	os.WriteFile(notSock, nil, 0o644)
	refused := deadTCPAddr(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	ok := srv.URL("/")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no args", []string{"bench"}, 2, "want exactly one URL"},
		{"two urls", []string{"bench", ok, ok}, 2, "want exactly one URL"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"unknown scheme", []string{"bench", "ftp://127.0.0.1/"}, 2, "unknown scheme"},
		{"no scheme", []string{"bench", "127.0.0.1:80/"}, 2, "want SCHEME://"},
		{"bad port", []string{"bench", "http://127.0.0.1:99999/"}, 2, "bad port"},
		{"empty unix path", []string{"bench", "fcgi://unix::/x"}, 2, "empty Unix socket path"},
		{"relative unix path", []string{"bench", "fcgi://unix:run/x.sock:/x"}, 2, "must be absolute"},
		{"space in query", []string{"bench", "http://127.0.0.1:9/x?a b"}, 2, "the query has a space"},
		{"n zero", []string{"bench", "-n", "0", ok}, 2, "at least 1"},
		{"n not a number", []string{"bench", "-n", "ten", ok}, 2, "invalid argument"},
		{"c over n", []string{"bench", "-n", "5", "-c", "10", ok}, 2, "greater than -n"},
		{"c zero", []string{"bench", "-c", "0", ok}, 2, "at least 1"},
		{"negative threads", []string{"bench", "--threads", "-1", ok}, 2, "--threads -1"},
		{"bad client-sched", []string{"bench", "--client-sched", "idle", ok}, 2, "want one of"},
		{"bad header", []string{"bench", "-H", "NoColon", ok}, 2, "bad header"},
		{"bad header name", []string{"bench", "-H", "Bad Name: x", ok}, 2, "bad header"},
		{"unreadable -p", []string{"bench", "-p", filepath.Join(dir, "missing"), ok}, 2, "cannot read -p file"},
		{"-T without -p", []string{"bench", "-T", "text/plain", ok}, 2, "-T needs a body"},
		{"bad timeout", []string{"bench", "-s", "0", ok}, 2, "-s must be"},
		{"bad timelimit", []string{"bench", "-t", "soon", ok}, 2, "want seconds"},
		{"bad format", []string{"bench", "--format", "xml", ok}, 2, "want one of"},
		{"param on http", []string{"bench", "--param", "A=1", ok}, 2, "fcgi:// targets only"},
		{"bad param", []string{"bench", "--param", "NOEQUALS", "fcgi://127.0.0.1:9/x"}, 2, "bad --param"},
		{"unknown flag", []string{"bench", "--frob", ok}, 2, "unknown flag"},
		{"bad -g path", []string{"bench", "-g", filepath.Join(dir, "no", "such", "g.tsv"), ok}, 2, "cannot create -g file"},
		{"refused", []string{"bench", "http://" + refused + "/"}, 1, "connection refused"},
		{"missing socket", []string{"bench", "fcgi://unix:" + filepath.Join(dir, "none.sock") + ":/x"}, 1, "no such Unix socket"},
		{"not a socket", []string{"bench", "http://unix:" + notSock + ":/"}, 1, "not a Unix socket"},
		{"missing --unix-socket", []string{"bench", "--unix-socket", filepath.Join(dir, "none.sock"), "http://localhost/"}, 1, "no such Unix socket"},
		{"help", []string{"bench", "--help"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runMain(t, context.Background(), c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			if c.msg != "" {
				if !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
					t.Errorf("stderr %q, want one line with %q", errs, c.msg)
				}
				if out != "" {
					t.Errorf("stdout not empty: %q", out)
				}
			}
			if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") {
				t.Errorf("stack trace: %s", errs)
			}
		})
	}
	// Every bad line naming the backend was caught before connecting.
	if n := srv.Accepted(); n != 0 {
		t.Errorf("bad command lines made %d connections", n)
	}
}

func TestHelpListsEveryFlag(t *testing.T) {
	var o benchOptions
	fs := newBenchFlags(&o)
	code, out, _ := runMain(t, context.Background(), "bench", "--help")
	if code != 0 {
		t.Fatal(code)
	}
	for _, name := range []string{"requests", "concurrency", "timelimit", "timeout", "keepalive", "header", "method", "postfile",
		"content-type", "variable-length", "quiet", "verbosity", "http1.0", "document-root", "param", "unix-socket", "gnuplot", "csv", "format"} {
		if fs.Lookup(name) == nil || !strings.Contains(out, "--"+name) {
			t.Errorf("help lacks --%s", name)
		}
	}
}

// TestClientSched checks --client-sched: SCHED_BATCH or SCHED_OTHER when
// asked (in the open model too), set on every thread of the process, and
// without the flag the policy the process already has; the JSON and the text
// report name it.
func TestClientSched(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	t.Cleanup(func() { _, _ = sockets.SetSchedPolicy(sockets.SchedNormal) })
	for _, c := range []struct {
		args []string
		want sockets.SchedPolicy
	}{
		{[]string{"--client-sched", "batch"}, sockets.SchedBatch},
		{nil, sockets.SchedBatch}, // kept, as if started under chrt --batch
		{[]string{"--client-sched", "batch", "--rate", "200"}, sockets.SchedBatch},
		{[]string{"--client-sched", "normal"}, sockets.SchedNormal},
		{nil, sockets.SchedNormal},
	} {
		s := benchJSON(t, append(c.args, "-n", "20", "-c", "2", "-k", srv.URL("/"))...)
		if s.Complete != 20 || s.Client.Scheduling != c.want.String() {
			t.Errorf("%v: complete %d, scheduling %q, want %v", c.args, s.Complete, s.Client.Scheduling, c.want)
		}
		tids, err := sockets.Threads()
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range tids {
			if p, err := sockets.SchedPolicyOf(tid); err == nil && p != c.want {
				t.Errorf("%v: thread %d runs under %v, want %v", c.args, tid, p, c.want)
			}
		}
	}
	_, out, _ := runMain(t, context.Background(), "bench", "-q", "-n", "5", "--client-sched", "batch", srv.URL("/"))
	if !regexp.MustCompile(`Client CPU: .* cores, SCHED_BATCH, (poller|uring) engine\n`).MatchString(out) {
		t.Errorf("the text report does not name the policy:\n%s", out)
	}
}

// TestThreads: --threads caps the client's GOMAXPROCS for the run (the
// report's cores say so) and restores it afterwards; without it, a run on
// kept connections to this machine takes half the CPUs, another all.
func TestThreads(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	before := runtime.GOMAXPROCS(0)
	s := benchJSON(t, "--threads", "1", "-k", "-n", "50", "-c", "4", srv.URL("/"))
	if s.Complete != 50 || s.Client.Cores != 1 {
		t.Errorf("complete %d, cores %d, want 50 and 1", s.Complete, s.Client.Cores)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after the run, was %d", after, before)
	}
	if s := benchJSON(t, "-n", "5", srv.URL("/")); s.Client.Cores != before {
		t.Errorf("without --threads: cores %d, want %d", s.Client.Cores, before)
	}
	// Kept connections to this machine: half the CPUs by default.
	t.Setenv("GOMAXPROCS", "")
	half := max(1, runtime.NumCPU()/2)
	if half >= before {
		half = before
	}
	if s := benchJSON(t, "-k", "-n", "50", "-c", "4", srv.URL("/")); s.Complete != 50 || s.Client.Cores != half {
		t.Errorf("-k to a local backend: complete %d, cores %d, want 50 and %d", s.Complete, s.Client.Cores, half)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after the -k run, was %d", after, before)
	}
}

// TestBenchJSONRecord: bench's JSON carries the run record beside the
// report's keys, and the record gives the report's figures again.
func TestBenchJSONRecord(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 7})
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-n", "40", "-c", "3", srv.URL("/x.php"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		stats.Summary
		Record *stats.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	r := doc.Record
	if r == nil || r.Schema != 1 {
		t.Fatalf("no record of schema 1 in %s", out)
	}
	for _, key := range []string{`"hostname"`, `"kernel"`, `"cpu_model"`, `"cpus"`, `"version"`, `"go_version"`, `"command"`} {
		if !strings.Contains(out, key) {
			t.Errorf("environment lacks %s", key)
		}
	}
	if r.Counts.Complete != 40 || r.Plan.Concurrency != 3 || r.Phases[stats.PhaseTotal].N != 40 ||
		!r.EndedAt.After(r.StartedAt.Time) || len(r.Environment.Command) == 0 {
		t.Errorf("record %+v", r)
	}
	again := stats.SummaryOf(r)
	if again.Complete != doc.Complete || !reflect.DeepEqual(again.Percentiles, doc.Percentiles) ||
		again.ConnectionTimes != doc.ConnectionTimes || again.DocumentLength != doc.DocumentLength {
		t.Errorf("the record's summary differs from the report:\n%+v\n%+v", again, doc.Summary)
	}
}

// TestExactPercentileLine: against a fast backend, when ab's table reads
// 0 ms at the median, a line under it gives backbench's exact figures (and
// it agrees with the JSON's); ab's lines keep their form.
func TestExactPercentileLine(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-k", "-n", "300", srv.URL("/"))
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	table := regexp.MustCompile(`\n  50%  +(\d+)\n(?:  \d\d%  +\d+\n)+ 100%  +\d+ \(longest request\)\n(.*\n)`).FindStringSubmatch(out)
	if table == nil {
		t.Fatalf("no ab table:\n%s", out)
	}
	exact := regexp.MustCompile(`^  \(exact: 50% (\d+\.\d{3}) ms, 99% (\d+\.\d{3}) ms; --percentiles for the full spectrum\)\n$`).FindStringSubmatch(table[2])
	switch {
	case table[1] == "0" && exact == nil:
		t.Errorf("median 0 ms and no exact line:\n%s", out)
	case table[1] != "0" && exact != nil:
		t.Errorf("median %s ms and an exact line:\n%s", table[1], out)
	case exact != nil:
		p50, _ := strconv.ParseFloat(exact[1], 64)
		p99, _ := strconv.ParseFloat(exact[2], 64)
		if p50 <= 0 || p50 >= 0.5 || p99 < p50 {
			t.Errorf("exact 50%% %v 99%% %v", p50, p99)
		}
	}
	_, out, _ = runMain(t, context.Background(), "bench", "-q", "-k", "-n", "300", "--percentiles", srv.URL("/"))
	if strings.Contains(out, "(exact:") {
		t.Errorf("exact line with --percentiles:\n%s", out)
	}
}
