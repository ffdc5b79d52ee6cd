// Command harness is make bench: it runs backbench and its peers side by
// side in one run, alternating them, and prints for each pair the requests
// per second, the client's and the servers' CPU seconds per 1000 requests,
// the cores kept busy, and the ratios.
//
// It installs nothing: it uses nginx, wrk, ab and php-fpm when they are on
// the machine and says which are missing (the pairs that need them are
// skipped). Backends run on 127.0.0.1 and on Unix sockets in a temporary
// directory, and are stopped by PID at the end. Last, the open model's
// pacing error at 100, 1,000 and 10,000 requests a second (-pacing-only
// runs that part alone). The whole run takes about three minutes.
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/stats"
)

var (
	runTime = flag.Duration("d", 4*time.Second, "duration of each timed run")
	rounds  = flag.Int("rounds", 2, "rounds of each pair (alternating the order)")
	conns   = flag.Int("c", 10, "connections")
	pacing  = flag.Bool("pacing-only", false, "run only the open model's pacing error report")
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
	what string // what backbench / this line shows
}

// pair compares backbench (a) with a peer (b).
type pair struct {
	title  string
	a, b   tool
	refs   []ref   // reference lines (the bare loop, SCHED_BATCH), run in the rounds too
	server []int   // root PIDs of the servers measured
	target string  // what the issue asks, in words
	need   float64 // the req/s ratio a/b the target asks (0: no target)
	maxCPU float64 // the client CPU per request ratio a/b it allows (0: any)
}

func main() {
	flag.Parse()
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
	defer func() {
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
	}()

	if *pacing {
		bb := filepath.Join(dir, "backbench")
		if out, err := exec.Command("go", "build", "-o", bb, "./cmd/backbench").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
		return pacingError(bb)
	}
	fmt.Println("building backbench, the gofast loop and the bare loop ...")
	bb, gfl, bare := filepath.Join(dir, "backbench"), filepath.Join(dir, "gofastloop"), filepath.Join(dir, "bareloop")
	for _, b := range [][2]string{{bb, "./cmd/backbench"}, {gfl, "./bench/gofastloop"}, {bare, "./bench/bareloop"}} {
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
	nginxAddr := ""
	if p := have["nginx"]; p != "" {
		port, _ := freePort()
		nginxAddr = "127.0.0.1:" + strconv.Itoa(port)
		conf := filepath.Join(dir, "nginx.conf")
		fcgi := ""
		if fpmTCP != "" {
			fcgi = fmt.Sprintf(`location ~ \.php$ {
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
		os.WriteFile(conf, []byte(fmt.Sprintf(`worker_processes 1;
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
`, dir, nginxAddr, www, fcgi)), 0o644)
		cmd := exec.Command(p, "-c", conf, "-g", "daemon off;")
		if err := cmd.Start(); err != nil {
			return err
		}
		procs = append(procs, cmd)
		nginxPID = cmd.Process.Pid
		if err := waitListen("tcp", nginxAddr); err != nil {
			return fmt.Errorf("nginx: %v", err)
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
		targets = append(targets, "http://"+nginxAddr+"/index.html")
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
		return ref{tool{"SCHED_BATCH", append([]string{bb, "bench", "-q", "--client-sched", "batch"}, extra...)}, "below 1: --client-sched batch is faster"}
	}
	var pairs []pair
	if nginxAddr != "" && have["wrk"] != "" {
		pairs = append(pairs, pair{
			title:  "HTTP keep-alive, nginx static file, c=" + c,
			server: []int{nginxPID},
			a:      bench("-k", "-c", c, "-t", secs, "http://"+nginxAddr+"/index.html"),
			b:      tool{"wrk", []string{have["wrk"], "-t2", "-c" + c, "-d" + secs + "s", "http://" + nginxAddr + "/index.html"}},
			refs:   []ref{batch("-k", "-c", c, "-t", secs, "http://"+nginxAddr+"/index.html")},
			target: "req/s >= 0.9x wrk, CPU/req <= 1.2x wrk",
			need:   0.9,
			maxCPU: 1.2,
		})
	}
	if nginxAddr != "" && have["ab"] != "" {
		pairs = append(pairs, pair{
			title:  "HTTP without keep-alive, nginx static file, c=" + c + ", n=10000",
			server: []int{nginxPID},
			a:      bench("-c", c, "-n", "10000", "http://"+nginxAddr+"/index.html"),
			b:      tool{"ab", []string{have["ab"], "-q", "-c", c, "-n", "10000", "http://" + nginxAddr + "/index.html"}},
			refs:   []ref{batch("-c", c, "-n", "10000", "http://"+nginxAddr+"/index.html")},
			target: "req/s >= 2x ab",
			need:   2,
		})
	}
	if fpmTCP != "" {
		script := filepath.Join(www, "index.php")
		for _, n := range [][3]string{{"TCP", "tcp", fpmTCP}, {"Unix", "unix", fpmSock}} {
			url := "fcgi://" + n[2] + "/index.php"
			if n[1] == "unix" {
				url = "fcgi://unix:" + n[2] + ":/index.php"
			}
			// One kept connection pins one php-fpm child: as many
			// connections as children (4), or the rest wait all run long.
			pairs = append(pairs, pair{
				title:  "FastCGI keep-conn, php-fpm over " + n[0] + ", c=4 (4 children)",
				server: []int{fpmPID},
				a:      bench("-k", "-c", "4", "-t", secs, "--document-root", www, url),
				b:      tool{"gofast", []string{gfl, "-network", n[1], "-addr", n[2], "-script", script, "-c", "4", "-d", secs + "s"}},
				refs: []ref{
					{tool{"bare loop", []string{bare, "-network", n[1], "-addr", n[2], "-root", www, "-path", "/index.php", "-c", "4", "-d", secs + "s"}}, "what the measuring costs"},
					batch("-k", "-c", "4", "-t", secs, "--document-root", www, url),
				},
				target: "req/s >= 4x the gofast loop",
				need:   4,
			})
		}
		if nginxAddr != "" && have["wrk"] != "" {
			pairs = append(pairs, pair{
				title:  "php-fpm direct (backbench, Unix, keep-conn, c=4) vs through nginx (wrk, c=8)",
				server: []int{fpmPID, nginxPID},
				a:      bench("-k", "-c", "4", "-t", secs, "--document-root", www, "fcgi://unix:"+fpmSock+":/index.php"),
				b:      tool{"wrk+nginx", []string{have["wrk"], "-t2", "-c8", "-d" + secs + "s", "http://" + nginxAddr + "/index.php"}},
				target: "req/s >= 1.5x the nginx path",
				need:   1.5,
			})
		}
	}
	pairs = append(pairs,
		pair{
			title:  "regression baseline: built-in HTTP backend, Unix, keep-alive, c=" + c + " (run 1 vs run 2)",
			server: []int{bbPID["http"]},
			a:      bench("-k", "-c", c, "-t", secs, "http://unix:"+bbSock+":/"),
			b:      tool{"backbench", []string{bb, "bench", "-q", "-k", "-c", c, "-t", secs, "http://unix:" + bbSock + ":/"}},
			target: "about 1x (the noise of this machine)",
		},
		pair{
			title:  "regression baseline: built-in FastCGI backend, Unix, keep-conn, c=" + c + " (run 1 vs run 2)",
			server: []int{bbPID["fcgi"]},
			a:      bench("-k", "-c", c, "-t", secs, "fcgi://unix:"+bbFCGI+":/"),
			b:      tool{"backbench", []string{bb, "bench", "-q", "-k", "-c", c, "-t", secs, "fcgi://unix:" + bbFCGI + ":/"}},
			target: "about 1x (the noise of this machine)",
		},
	)

	fmt.Printf("\n%-72s %-10s %12s %14s %14s %8s\n", "pair", "client", "req/s", "CPU s/1k req", "server s/1k", "busy")
	for _, p := range pairs {
		// ms[0] is backbench, ms[1] the peer, ms[2:] the reference lines.
		tools := []*tool{&p.a, &p.b}
		for i := range p.refs {
			tools = append(tools, &p.refs[i].tool)
		}
		ms := make([][]measure, len(tools))
		for r := 0; r < *rounds; r++ {
			order := make([]int, len(tools))
			for i := range order {
				order[i] = i
			}
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, i := range order {
				m, err := runTool(*tools[i], p.server)
				if err != nil {
					return fmt.Errorf("%s: %s: %v", p.title, tools[i].name, err)
				}
				ms[i] = append(ms[i], m)
			}
		}
		a, b := mean(ms[0]), mean(ms[1])
		rr, cr := a.rps/b.rps, cpuPer1k(a)/cpuPer1k(b)
		line := func(title, name string, m measure) {
			fmt.Printf("%-72s %-10s %12.0f %14.4f %14.4f %8.2f\n", title, name, m.rps, cpuPer1k(m), serverPer1k(m), busy(m))
		}
		line(p.title, p.a.name, a)
		line("", p.b.name, b)
		verdict := ""
		if p.need > 0 {
			verdict = "  MISSED"
			if rr >= p.need && (p.maxCPU == 0 || cr <= p.maxCPU) {
				verdict = "  met"
			}
		}
		fmt.Printf("%-72s %-10s %11.2fx %13.2fx   target: %s%s\n", "", "ratio", rr, cr, p.target, verdict)
		if p.need > 0 {
			// What the machine allows at backbench's own cost and the
			// servers' cost per request, if every core were busy.
			srv, cli := serverPer1k(a), cpuPer1k(a)
			fmt.Printf("%-72s %-10s %d cores / (server %.1f + backbench %.1f µs/req) = %.0f req/s at most; the target needs %.0f\n",
				"", "ceiling", runtime.NumCPU(), srv*1000, cli*1000, float64(runtime.NumCPU())/(srv+cli)*1000, p.need*b.rps)
		}
		for i, rf := range p.refs {
			m := mean(ms[2+i])
			line("", rf.name, m)
			fmt.Printf("%-72s %-10s %11.2fx %13.2fx   backbench / %s: %s\n", "", "ratio", a.rps/m.rps, cpuPer1k(a)/cpuPer1k(m), rf.name, rf.what)
		}
		fmt.Println()
	}
	if err := manyConnections(bb, dir, secs); err != nil {
		return err
	}
	return pacingError(bb)
}

// pacingError runs the open model (--rate) against a built-in threaded
// backend at 100, 1,000 and 10,000 requests a second and prints the
// client's own pacing error: its lateness when a worker was free, and the
// corrected minus the uncorrected p50 and p99, against the targets (50 µs
// at p50, 300 µs at p99), and the worst wait of the client's goroutines for
// a CPU (over a few ms, other programs held the machine and the p99 says
// more about them than about the pacing).
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
	secs := strconv.FormatFloat(min(runTime.Seconds(), 3), 'f', -1, 64)
	fmt.Printf("\nopen model pacing error, built-in threaded HTTP backend, -k -c 8, %s s per rate (target: lateness and corrected - uncorrected <= 0.050 ms at p50, 0.300 ms at p99)\n", secs)
	fmt.Printf("%8s %10s %28s %22s %22s %8s %14s %s\n", "rate", "achieved", "client lateness p50/p99/max", "corr-uncorr p50 ms", "corr-uncorr p99 ms", "CPU %", "CPU wait ms", "verdict")
	for _, rate := range []int{100, 1000, 10000} {
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
		fmt.Printf("%8d %10.1f %10.3f/%.3f/%.3f ms %22.3f %22.3f %8.0f %14.1f %s\n", rate, s.Open.RateAchieved,
			l.P50, l.P99, l.Max, d50, d99, s.Client.CPUPercent, s.Client.SchedulerLateMaxMs, verdict)
	}
	return nil
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

func cpuPer1k(m measure) float64 {
	if m.requests == 0 {
		return 0
	}
	return m.cpu / float64(m.requests) * 1000
}

// serverPer1k is the servers' CPU seconds per 1000 requests.
func serverPer1k(m measure) float64 {
	if m.requests == 0 {
		return 0
	}
	return m.server / float64(m.requests) * 1000
}

// busy is the cores that the client and the servers kept busy together:
// near the machine's core count, the pair is bound by the machine, not by
// either program alone.
func busy(m measure) float64 {
	if m.wall == 0 {
		return 0
	}
	return (m.cpu + m.server) / m.wall
}

func mean(ms []measure) measure {
	var out measure
	for _, m := range ms {
		out.requests += m.requests
		out.rps += m.rps / float64(len(ms))
		out.cpu += m.cpu
		out.server += m.server
		out.wall += m.wall
	}
	return out
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
