// Command harness is make bench: it runs backbench and its peers side by
// side in one run, alternating their order over rounds (5 by default,
// -rounds), and prints for each pair every run's requests per second, the
// client's and the servers' CPU microseconds per request and the cores
// kept busy, then the medians over the rounds and the median ratios
// (backbench / peer) with a PASS or MISS against the performance targets where
// one applies, and last a summary table of every pair.
//
// It installs nothing: it uses nginx, wrk, ab and php-fpm when they are on
// the machine and says which are missing (the pairs that need them are
// skipped). Backends run on 127.0.0.1 and on Unix sockets in a temporary
// directory, and are stopped by PID at the end. Prototype client loops
// under bench/ (protoLoops) are built and run as reference lines of the
// HTTP pairs when present. Last, 10,000 kept connections and the open
// model's pacing error at 100, 1,000 and 10,000 requests a second
// (-pacing-only runs that part alone). The request mix's pair, 1,000
// targets against the URL alone (mixPair), runs after the regression
// baselines (-mix-only runs it alone). The whole run takes about eight
// minutes.
//
// With -baseline BIN (an older backbench binary) it runs, instead of all
// that, this tree's backbench against BIN with the same arguments on the
// built-in backends (HTTP with and without keep-alive, FastCGI with and
// without FCGI_KEEP_CONN, each over TCP and a Unix socket), then this
// tree against itself for the noise, in the same tables, the ratios new /
// old: about five minutes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/stats"
)

var (
	runTime = flag.Duration("d", 3*time.Second, "duration of each timed run")
	rounds  = flag.Int("rounds", 5, "rounds of each pair (alternating the order)")
	conns   = flag.Int("c", 10, "connections")
	pacing  = flag.Bool("pacing-only", false, "run only the open model's pacing error report")
	mix     = flag.Bool("mix-only", false, "run only the request mix's pair: 1,000 targets against the URL alone")
	// baseline is an older backbench binary: with it the harness runs
	// this tree's backbench against it on the built-in backends instead
	// of the peers (baselineRun).
	baseline = flag.String("baseline", "", "path of an older backbench binary: run this tree's backbench against it on the built-in backends, instead of the peers")
)

// tool is one client command and how to read its output.
type tool struct {
	name string
	argv []string
}

// measure is one run's result.
type measure struct {
	requests int64
	rps      float64
	cpu      float64 // client user+sys seconds
	server   float64 // the servers' user+sys seconds (process trees)
	wall     float64 // seconds the client ran
}

// ref is a reference line of a pair, compared with backbench (a).
type ref struct {
	tool
	what   string // what backbench / this line shows
	engine bool   // a prototype client loop: also compared with the peer, against the pair's target, and listed in the summary
}

// pair compares backbench (a) with a peer (b).
type pair struct {
	title  string
	path   string // the summary's name of the pair
	a, b   tool
	refs   []ref   // reference lines (the bare loop, SCHED_BATCH, prototypes), run in the rounds too
	server []int   // root PIDs of the servers measured
	need   float64 // the req/s ratio a/b the target asks (0: none)
	maxCPU float64 // the client CPU per request ratio a/b it allows (0: any)
}

// protoLoops are standalone client loops under bench/, prototypes of
// other engines: each whose directory exists is built and runs as a
// reference line of the HTTP pairs, with `-c C -d DUR [-k] URL`, printing
// "requests N" and "Requests/sec X" as the bare loop does. A new one is
// added here.
// (bench/uringloop, the io_uring prototype, was removed once the io_uring
// engine covered it: backbench's default line and its --engine poller line
// are that comparison.)
var protoLoops = []string{"epolloop"}

// protoLoop is a built prototype loop.
type protoLoop struct{ name, dir, bin string }

var loops []protoLoop

func main() {
	flag.Parse()
	start := time.Now()
	defer func() { fmt.Printf("\nharness: %.0f s\n", time.Since(start).Seconds()) }()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "bbbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// nginx's workers run as an unprivileged user: they must be able to
	// read the files and reach the sockets.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	var procs []*exec.Cmd
	defer func() { stopAll(procs) }()

	if *pacing || *mix || *baseline != "" {
		bb, err := buildBackbench(dir)
		if err != nil {
			return err
		}
		if *pacing {
			return pacingError(bb)
		}
		if *mix {
			return mixOnly(bb, dir)
		}
		return baselineRun(bb, dir)
	}
	fmt.Println("building backbench, the gofast loop and the bare loop ...")
	bb, gfl, bare := filepath.Join(dir, "backbench"), filepath.Join(dir, "gofastloop"), filepath.Join(dir, "bareloop")
	builds := [][2]string{{bb, "./cmd/backbench"}, {gfl, "./bench/gofastloop"}, {bare, "./bench/bareloop"}}
	for _, name := range protoLoops {
		if src := "./bench/" + name; fileExists(src) {
			l := protoLoop{name, src, filepath.Join(dir, name)}
			loops = append(loops, l)
			builds = append(builds, [2]string{l.bin, l.dir})
			fmt.Println("and the prototype loop", src)
		}
	}
	for _, b := range builds {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	www := filepath.Join(dir, "www")
	os.MkdirAll(www, 0o755)
	os.WriteFile(filepath.Join(www, "index.html"), []byte(strings.Repeat("backbench static file\n", 28)), 0o644)
	os.WriteFile(filepath.Join(www, "index.php"), []byte("<?php echo \"hello from php-fpm\\n\";\n"), 0o644)

	have := map[string]string{}
	var missing []string
	for _, name := range []string{"nginx", "wrk", "ab", "php-fpm"} {
		if p := lookup(name); p != "" {
			have[name] = p
		} else {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		fmt.Printf("missing (their pairs are skipped): %s  (Debian: nginx-light wrk apache2-utils php-fpm)\n", strings.Join(missing, " "))
	}

	var fpmPID, nginxPID int // process tree roots, for the servers' CPU
	fpmTCP, fpmSock := "", filepath.Join(dir, "fpm.sock")
	if p := have["php-fpm"]; p != "" {
		port, _ := freePort()
		fpmTCP = "127.0.0.1:" + strconv.Itoa(port)
		conf := filepath.Join(dir, "fpm.conf")
		pool := func(name, listen string) string {
			return fmt.Sprintf("[%s]\nlisten = %s\nlisten.mode = 0666\npm = static\npm.max_children = 4\n", name, listen)
		}
		os.WriteFile(conf, []byte(fmt.Sprintf("[global]\npid = %s/fpm.pid\nerror_log = %s/fpm.log\ndaemonize = no\n", dir, dir)+
			pool("tcp", fpmTCP)+pool("unix", fpmSock)), 0o644)
		// -n keeps the machine's php.ini out of the run; OPcache is then
		// loaded by hand, as Debian's php-fpm loads it from conf.d, so
		// that the pool costs what a default install costs per request.
		args := []string{"-F", "-R", "-n", "-y", conf}
		if out, err := exec.Command(p, "-n", "-d", "zend_extension=opcache.so", "-m").Output(); err == nil && strings.Contains(string(out), "Zend OPcache") {
			args = append(args, "-d", "zend_extension=opcache.so")
		} else {
			fmt.Println("php-fpm: OPcache not found; the pool compiles index.php on every request")
		}
		cmd := exec.Command(p, args...)
		if err := cmd.Start(); err != nil {
			return err
		}
		procs = append(procs, cmd)
		fpmPID = cmd.Process.Pid
		if err := waitListen("unix", fpmSock); err != nil {
			return fmt.Errorf("php-fpm: %v", err)
		}
		if err := waitListen("tcp", fpmTCP); err != nil {
			return fmt.Errorf("php-fpm: %v", err)
		}
	}
	// Two nginx instances serve the same files, with 1 and with 2 workers
	// (the HTTP pairs' targets ask for both); the first also has the
	// FastCGI location in front of the php-fpm pool.
	nginxAddr, nginx2Addr := "", ""
	var nginx2PID int
	if p := have["nginx"]; p != "" {
		for _, workers := range []int{1, 2} {
			addr, cmd, err := startNginx(p, dir, www, workers, fpmTCP != "", fpmSock)
			if cmd != nil {
				procs = append(procs, cmd)
			}
			if err != nil {
				return err
			}
			if workers == 1 {
				nginxAddr, nginxPID = addr, cmd.Process.Pid
			} else {
				nginx2Addr, nginx2PID = addr, cmd.Process.Pid
			}
		}
	}
	bbSock, bbFCGI := filepath.Join(dir, "bb-http.sock"), filepath.Join(dir, "bb-fcgi.sock")
	bbPID := map[string]int{}
	for _, l := range [][2]string{{"http", bbSock}, {"fcgi", bbFCGI}} {
		cmd := exec.Command(bb, "serve", "--protocol", l[0], "--body", "512", "--listen", "unix:"+l[1])
		if err := cmd.Start(); err != nil {
			return err
		}
		procs = append(procs, cmd)
		bbPID[l[0]] = cmd.Process.Pid
		if err := waitListen("unix", l[1]); err != nil {
			return fmt.Errorf("backbench serve: %v", err)
		}
	}

	// Every target must answer 200 before it is measured: a peer that
	// counts error pages as responses would otherwise look fast.
	var targets []string
	if nginxAddr != "" {
		targets = append(targets, "http://"+nginxAddr+"/index.html", "http://"+nginx2Addr+"/index.html")
		if fpmTCP != "" {
			targets = append(targets, "http://"+nginxAddr+"/index.php")
		}
	}
	if fpmTCP != "" {
		targets = append(targets, "fcgi://"+fpmTCP+"/index.php", "fcgi://unix:"+fpmSock+":/index.php")
	}
	for _, u := range targets {
		args := []string{"bench", "-q", "-n", "3", u}
		if strings.HasPrefix(u, "fcgi:") {
			args = append(args, "--document-root", www)
		}
		out, err := exec.Command(bb, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Complete requests:      3\n") || strings.Contains(string(out), "Non-2xx") || strings.Contains(string(out), "Failed requests:        3") {
			return fmt.Errorf("%s does not answer 200:\n%s", u, out)
		}
	}

	secs := strconv.FormatFloat(runTime.Seconds(), 'f', -1, 64)
	c := strconv.Itoa(*conns)
	bench := func(extra ...string) tool {
		return tool{"backbench", append([]string{bb, "bench", "-q"}, extra...)}
	}
	// batch is backbench with its threads under SCHED_BATCH (the default,
	// like every peer, is SCHED_OTHER): what batch scheduling buys on cores
	// shared with the server.
	batch := func(extra ...string) ref {
		return ref{tool{"SCHED_BATCH", append([]string{bb, "bench", "-q", "--client-sched", "batch"}, extra...)}, "below 1: --client-sched batch is faster", false}
	}
	// allCPUs is backbench on every CPU: with kept connections to a
	// backend on this machine it takes half of them by default
	// (execute.AutoThreads), and this line shows what that buys.
	allCPUs := func(extra ...string) ref {
		n := strconv.Itoa(runtime.NumCPU())
		return ref{tool{"--threads " + n, append([]string{bb, "bench", "-q", "--threads", n}, extra...)}, "below 1: every CPU is cheaper than the default", false}
	}
	// poller is backbench on the poller engine, where auto picks io_uring
	// (no keep-alive): what the ring engine buys.
	poller := func(extra ...string) ref {
		return ref{tool{"--engine poller", append([]string{bb, "bench", "-q", "--engine", "poller"}, extra...)}, "CPU below 1: the default engine (io_uring here) costs less than the poller", false}
	}
	// loopRefs are the prototype client loops built above, as reference
	// lines of an HTTP pair: `-c C -d DUR [-k] URL`.
	loopRefs := func(keep bool, url string) []ref {
		var out []ref
		for _, l := range loops {
			argv := []string{l.bin, "-c", c, "-d", secs + "s"}
			if keep {
				argv = append(argv, "-k")
			}
			out = append(out, ref{tool{l.name, append(argv, url)}, "a prototype loop (" + l.dir + ")", true})
		}
		return out
	}
	var pairs []pair
	if nginxAddr != "" && have["ab"] != "" {
		// ab counts requests, not time: 20,000 as the targets ask.
		const n = "20000"
		for _, ng := range []struct {
			workers string
			addr    string
			pid     int
		}{{"1 worker", nginxAddr, nginxPID}, {"2 workers", nginx2Addr, nginx2PID}} {
			url := "http://" + ng.addr + "/index.html"
			pairs = append(pairs, pair{
				title:  "HTTP without keep-alive, nginx static file (" + ng.workers + "), c=" + c + ", n=" + n,
				path:   "HTTP, new connection per request, nginx " + ng.workers,
				server: []int{ng.pid},
				a:      bench("-c", c, "-n", n, url),
				b:      tool{"ab", []string{have["ab"], "-q", "-c", c, "-n", n, url}},
				refs:   append([]ref{poller("-c", c, "-n", n, url), batch("-c", c, "-n", n, url)}, loopRefs(false, url)...),
				need:   1.1,
				maxCPU: 0.9,
			})
		}
	}
	if nginxAddr != "" && have["wrk"] != "" {
		url := "http://" + nginxAddr + "/index.html"
		pairs = append(pairs, pair{
			title:  "HTTP keep-alive, nginx static file (1 worker), c=" + c,
			path:   "HTTP keep-alive, c=" + c,
			server: []int{nginxPID},
			a:      bench("-k", "-c", c, "-t", secs, url),
			b:      tool{"wrk -t2", []string{have["wrk"], "-t2", "-c" + c, "-d" + secs + "s", url}},
			refs:   append([]ref{allCPUs("-k", "-c", c, "-t", secs, url), batch("-k", "-c", c, "-t", secs, url)}, loopRefs(true, url)...),
			need:   1.0,
			maxCPU: 0.8,
		})
	}
	if fpmTCP != "" {
		script := filepath.Join(www, "index.php")
		// Without FCGI_KEEP_CONN php-fpm closes after each response: a
		// connection per request, against the bare loop doing the same.
		pairs = append(pairs, pair{
			title:  "FastCGI without KEEP_CONN, php-fpm over TCP, c=4 (4 children)",
			path:   "FastCGI without KEEP_CONN, php-fpm TCP, c=4",
			server: []int{fpmPID},
			a:      bench("-c", "4", "-t", secs, "--document-root", www, "fcgi://"+fpmTCP+"/index.php"),
			b:      tool{"bare loop", []string{bare, "-nokeep", "-network", "tcp", "-addr", fpmTCP, "-root", www, "-path", "/index.php", "-c", "4", "-d", secs + "s"}},
			maxCPU: 1.1,
		})
		for _, n := range [][3]string{{"TCP", "tcp", fpmTCP}, {"Unix", "unix", fpmSock}} {
			url := "fcgi://" + n[2] + "/index.php"
			if n[1] == "unix" {
				url = "fcgi://unix:" + n[2] + ":/index.php"
			}
			// One kept connection pins one php-fpm child: as many
			// connections as children (4), or the rest wait all run long.
			pairs = append(pairs, pair{
				title:  "FastCGI keep-conn, php-fpm over " + n[0] + ", c=4 (4 children)",
				path:   "FastCGI keep-conn, php-fpm " + n[0] + ", c=4",
				server: []int{fpmPID},
				a:      bench("-k", "-c", "4", "-t", secs, "--document-root", www, url),
				b:      tool{"gofast", []string{gfl, "-network", n[1], "-addr", n[2], "-script", script, "-c", "4", "-d", secs + "s"}},
				refs: []ref{
					{tool{"bare loop", []string{bare, "-network", n[1], "-addr", n[2], "-root", www, "-path", "/index.php", "-c", "4", "-d", secs + "s"}}, "what the measuring costs", false},
					allCPUs("-k", "-c", "4", "-t", secs, "--document-root", www, url),
					batch("-k", "-c", "4", "-t", secs, "--document-root", www, url),
				},
				need: 4,
			})
		}
		if nginxAddr != "" && have["wrk"] != "" {
			pairs = append(pairs, pair{
				title:  "php-fpm direct (backbench, Unix, keep-conn, c=4) vs through nginx (wrk, c=8)",
				path:   "php-fpm direct vs through nginx",
				server: []int{fpmPID, nginxPID},
				a:      bench("-k", "-c", "4", "-t", secs, "--document-root", www, "fcgi://unix:"+fpmSock+":/index.php"),
				b:      tool{"wrk+nginx", []string{have["wrk"], "-t2", "-c8", "-d" + secs + "s", "http://" + nginxAddr + "/index.php"}},
				need:   1.5,
			})
		}
	}
	pairs = append(pairs,
		pair{
			title:  "regression baseline: built-in HTTP backend, Unix, keep-alive, c=" + c + " (run 1 vs run 2)",
			path:   "built-in HTTP, Unix, keep-alive (noise)",
			server: []int{bbPID["http"]},
			a:      bench("-k", "-c", c, "-t", secs, "http://unix:"+bbSock+":/"),
			b:      tool{"backbench", []string{bb, "bench", "-q", "-k", "-c", c, "-t", secs, "http://unix:" + bbSock + ":/"}},
		},
		pair{
			title:  "regression baseline: built-in FastCGI backend, Unix, keep-conn, c=" + c + " (run 1 vs run 2)",
			path:   "built-in FastCGI, Unix, keep-conn (noise)",
			server: []int{bbPID["fcgi"]},
			a:      bench("-k", "-c", c, "-t", secs, "fcgi://unix:"+bbFCGI+":/"),
			b:      tool{"backbench", []string{bb, "bench", "-q", "-k", "-c", c, "-t", secs, "fcgi://unix:" + bbFCGI + ":/"}},
		},
	)
	mp, err := mixPair(bb, dir, c, secs, "http://unix:"+bbSock+":/", bbPID["http"])
	if err != nil {
		return err
	}
	pairs = append(pairs, mp)

	fmt.Printf("\n%d rounds per pair, the order of the clients alternating; medians over the rounds\n", *rounds)
	var rows []row
	for _, p := range pairs {
		r, err := runPair(p)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if err := manyConnections(bb, dir, secs); err != nil {
		return err
	}
	if err := pacingError(bb); err != nil {
		return err
	}
	printSummary(rows)
	return nil
}

// pacingError runs the open model (--rate) against a built-in threaded
// backend at 100, 1,000 and 10,000 requests a second and prints the
// client's own pacing error: its lateness when a worker was free, and the
// corrected minus the uncorrected p50 and p99, against the targets (50 µs
// at p50, 300 µs at p99), and the worst wait of the client's goroutines for
// a CPU (over a few ms, other programs held the machine and the p99 says
// more about them than about the pacing). Beside each rate, an open-model
// peer runs against the same backend in the same run when one is installed
// (vegeta, see vegetaRun), the two in alternating order: vegeta reports no
// lateness of its own, so the lines compare what both report, the achieved
// rate and the latency percentiles (backbench's corrected ones, which
// include its lateness, and its uncorrected ones, from the actual send,
// which is what vegeta measures).
func pacingError(bb string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	srv := exec.Command(bb, "serve", "--listen", "tcp:"+addr)
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	if err := waitListen("tcp", addr); err != nil {
		return err
	}
	vegeta := vegetaPath()
	secs := strconv.FormatFloat(min(runTime.Seconds(), 3), 'f', -1, 64)
	fmt.Printf("\nopen model pacing error, built-in threaded HTTP backend, -k -c 8, %s s per rate (target: lateness and corrected - uncorrected <= 0.050 ms at p50, 0.300 ms at p99)\n", secs)
	if vegeta == "" {
		fmt.Println("open-model peer: vegeta not found (GOFLAGS=-mod=mod go install github.com/tsenart/vegeta/v12@latest); backbench alone")
	} else {
		fmt.Printf("open-model peer: %s attack -rate R -workers 8 -max-workers 8 (keep-alive), same backend, alternating order\n", vegeta)
	}
	fmt.Printf("%-9s %8s %10s %28s %22s %22s %8s %14s %s\n", "client", "rate", "achieved", "client lateness p50/p99/max", "corr-uncorr p50 ms", "corr-uncorr p99 ms", "CPU %", "CPU wait ms", "verdict")
	for i, rate := range []int{100, 1000, 10000} {
		var lines [2]string
		runBB := func() error {
			out, err := exec.Command(bb, "bench", "-q", "-k", "-c", "8", "-t", secs, "--rate", strconv.Itoa(rate),
				"--format", "json", "http://"+addr+"/").Output()
			if err != nil {
				return fmt.Errorf("--rate %d: %v", rate, err)
			}
			var s stats.Summary
			if err := json.Unmarshal(out, &s); err != nil || s.Open == nil || s.Open.ClientLatenessMs == nil {
				return fmt.Errorf("--rate %d: no open model figures (%v)", rate, err)
			}
			l := s.Open.ClientLatenessMs
			d50 := s.Percentiles["50"] - s.UncorrectedPercentiles["50"]
			d99 := s.Percentiles["99"] - s.UncorrectedPercentiles["99"]
			verdict := "met"
			if l.P50 > 0.05 || l.P99 > 0.3 || d50 > 0.05 || d99 > 0.3 {
				verdict = "MISSED"
			}
			lines[0] = fmt.Sprintf("%-9s %8d %10.1f %10.3f/%.3f/%.3f ms %22.3f %22.3f %8.0f %14.1f %s\n", "backbench", rate, s.Open.RateAchieved,
				l.P50, l.P99, l.Max, d50, d99, s.Client.CPUPercent, s.Client.SchedulerLateMaxMs, verdict)
			lines[0] += fmt.Sprintf("%-9s %8d %10.1f   latency p50 %.3f ms, p99 %.3f ms corrected; p50 %.3f ms, p99 %.3f ms from the send\n",
				"", rate, s.Open.RateAchieved, s.Percentiles["50"], s.Percentiles["99"], s.UncorrectedPercentiles["50"], s.UncorrectedPercentiles["99"])
			return nil
		}
		runPeer := func() error {
			if vegeta == "" {
				return nil
			}
			v, err := vegetaRun(vegeta, "http://"+addr+"/", rate, secs)
			if err != nil {
				lines[1] = fmt.Sprintf("%-9s %8d vegeta failed: %v\n", "vegeta", rate, err)
				return nil
			}
			lines[1] = fmt.Sprintf("%-9s %8d %10.1f   latency p50 %.3f ms, p99 %.3f ms (from the send), success %.1f%%\n",
				"vegeta", rate, v.Throughput, float64(v.Latencies.P50)/1e6, float64(v.Latencies.P99)/1e6, v.Success*100)
			return nil
		}
		first, second := runBB, runPeer
		if i%2 == 1 {
			first, second = runPeer, runBB
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
		fmt.Print(lines[0], lines[1])
	}
	return nil
}

// vegetaReport is the part of `vegeta report -type=json` the pacing lines
// read: latencies in ns, throughput (successful responses per second) and
// the share of successes.
type vegetaReport struct {
	Latencies struct {
		P50 int64 `json:"50th"`
		P99 int64 `json:"99th"`
		Max int64 `json:"max"`
	} `json:"latencies"`
	Rate       float64 `json:"rate"`
	Throughput float64 `json:"throughput"`
	Success    float64 `json:"success"`
}

// vegetaPath finds vegeta on PATH or where go install puts it.
func vegetaPath() string {
	if p, err := exec.LookPath("vegeta"); err == nil {
		return p
	}
	for _, dir := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("GOPATH"), "bin"), filepath.Join(os.Getenv("HOME"), "go", "bin")} {
		if p := filepath.Join(dir, "vegeta"); dir != "" && fileExists(p) {
			return p
		}
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(out)), "bin", "vegeta"); fileExists(p) {
			return p
		}
	}
	return ""
}

// vegetaRun runs vegeta's constant-rate attack on url at rate for secs
// seconds with 8 workers at most (backbench's -c 8) and reads its report.
func vegetaRun(vegeta, url string, rate int, secs string) (vegetaReport, error) {
	var v vegetaReport
	attack := exec.Command(vegeta, "attack", "-rate", strconv.Itoa(rate), "-duration", secs+"s",
		"-workers", "8", "-max-workers", "8", "-keepalive=true")
	attack.Stdin = strings.NewReader("GET " + url + "\n")
	results, err := attack.Output()
	if err != nil {
		return v, fmt.Errorf("attack: %v", err)
	}
	rep := exec.Command(vegeta, "report", "-type=json")
	rep.Stdin = strings.NewReader(string(results))
	out, err := rep.Output()
	if err != nil {
		return v, fmt.Errorf("report: %v", err)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("report: %v", err)
	}
	return v, nil
}

// manyConnections holds 10,000 kept connections against a built-in evented
// backend for one timed run and prints the failures and the client's memory
// per connection (peak RSS / connections).
func manyConnections(bb, dir, secs string) error {
	const conns = 10000
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	srv := exec.Command(bb, "serve", "--model", "evented", "--listen", "tcp:"+addr)
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	if err := waitListen("tcp", addr); err != nil {
		return err
	}
	cmd := exec.Command(bb, "bench", "-q", "-k", "-c", strconv.Itoa(conns), "-t", secs, "http://"+addr+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%d connections: %v\n%s", conns, err, out)
	}
	field := func(label string) string {
		if m := regexp.MustCompile(`(?m)^` + label + `:\s+(\S+)`).FindSubmatch(out); m != nil {
			return string(m[1])
		}
		return "?"
	}
	var rssKiB int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssKiB = ru.Maxrss
	}
	fmt.Printf("%d kept connections, evented built-in backend, %s s: %s requests, %s failed, %s req/s; client peak RSS %.0f MiB, %.1f KiB per connection\n",
		conns, secs, field("Complete requests"), field("Failed requests"), field("Requests per second"),
		float64(rssKiB)/1024, float64(rssKiB)/conns)
	return nil
}

var (
	reqPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Complete requests:\s+(\d+)`),
		regexp.MustCompile(`(?m)^\s*(\d+) requests in `),
		regexp.MustCompile(`(?m)^requests (\d+)`),
	}
	rpsPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Requests per second:\s+([\d.]+)`),
		regexp.MustCompile(`(?m)^Requests/sec:?\s+([\d.]+)`),
	}
)

// runTool runs one client to completion and reads its requests, its rate
// and its CPU time (from the child's rusage), and the CPU time of the server
// process trees meanwhile (from /proc).
func runTool(t tool, server []int) (measure, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *runTime+60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.argv[0], t.argv[1:]...)
	sampler := procstat.Start(server, time.Hour) // first and last samples only
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start).Seconds()
	su := sampler.Stop()
	if err != nil {
		return measure{}, fmt.Errorf("%v\n%s", err, out)
	}
	var m measure
	for _, re := range reqPatterns {
		if s := re.FindSubmatch(out); s != nil {
			m.requests, _ = strconv.ParseInt(string(s[1]), 10, 64)
			break
		}
	}
	for _, re := range rpsPatterns {
		if s := re.FindSubmatch(out); s != nil {
			m.rps, _ = strconv.ParseFloat(string(s[1]), 64)
			break
		}
	}
	if m.requests == 0 || m.rps == 0 {
		return m, errors.New("cannot read requests and rate from:\n" + string(out))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	}
	m.server, m.wall = su.UserSeconds+su.SysSeconds, wall
	return m, nil
}

func lookup(name string) string {
	if name == "php-fpm" {
		for _, n := range []string{"php-fpm8.2", "php-fpm"} {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		m, _ := filepath.Glob("/usr/sbin/php-fpm*")
		if len(m) > 0 {
			return m[0]
		}
		return ""
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/sbin/" + name; fileExists(p) {
		return p
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListen(network, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout(network, addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s %s after 10 s", network, addr)
}

// startNginx starts an nginx with the given number of workers serving www
// on a free 127.0.0.1 port, with a location passing .php to the php-fpm
// socket when fcgi is set, in a directory of its own under dir.
func startNginx(bin, dir, www string, workers int, fcgi bool, fpmSock string) (string, *exec.Cmd, error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dir = filepath.Join(dir, "nginx"+strconv.Itoa(workers))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	loc := ""
	if fcgi {
		loc = fmt.Sprintf(`location ~ \.php$ {
      fastcgi_pass unix:%s;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_param SCRIPT_NAME $fastcgi_script_name;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param REQUEST_URI $request_uri;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
      fastcgi_param GATEWAY_INTERFACE CGI/1.1;
    }`, fpmSock)
	}
	conf := filepath.Join(dir, "nginx.conf")
	err = os.WriteFile(conf, []byte(fmt.Sprintf(`worker_processes %[5]d;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  keepalive_requests 1000000;
  server {
    listen %[2]s;
    root %[3]s;
    %[4]s
  }
}
`, dir, addr, www, loc, workers)), 0o644)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "-c", conf, "-g", "daemon off;")
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	if err := waitListen("tcp", addr); err != nil {
		return "", cmd, fmt.Errorf("nginx: %v", err)
	}
	return addr, cmd, nil
}

// stopAll stops the processes the harness started, by PID: SIGTERM, then
// SIGKILL after 5 s.
func stopAll(procs []*exec.Cmd) {
	for _, p := range procs {
		p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.Process.Kill()
		}
	}
}
