package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// builtin is one built-in backend (`backbench serve` of this tree) that a
// baseline run measures, listening on TCP and on a Unix socket.
type builtin struct {
	protocol string // "http" or "fcgi"
	tcp      string // 127.0.0.1:PORT
	sock     string // the Unix socket's path
	pid      int    // the serve process, for the server's CPU
}

// urls are the backend's URL over TCP and over its Unix socket, named.
func (b builtin) urls() [][2]string {
	return [][2]string{{"TCP", b.protocol + "://" + b.tcp + "/"}, {"Unix", b.protocol + "://unix:" + b.sock + ":/"}}
}

// baselinePairs are the pairs of a baseline run: this tree's backbench
// (bb, "backbench") against the older binary (old, "baseline") with the
// same arguments, on the built-in HTTP backend with and without keep-alive
// and on the built-in FastCGI backend with and without FCGI_KEEP_CONN,
// each over TCP and over a Unix socket, c connections, secs seconds a run;
// then this tree against itself on the Unix sockets with keep-alive, the
// noise of the machine. Every ratio is new / old: req/s above 1 and CPU
// below 1 favour this tree.
func baselinePairs(bb, old, c, secs string, http, fcgi builtin) []pair {
	var pairs []pair
	for _, m := range []struct {
		be   builtin
		what string // the pair's name
		keep bool
	}{
		{http, "HTTP keep-alive", true},
		{http, "HTTP without keep-alive", false},
		{fcgi, "FastCGI keep-conn", true},
		{fcgi, "FastCGI without KEEP_CONN", false},
	} {
		for _, u := range m.be.urls() {
			args := []string{"bench", "-q", "-c", c, "-t", secs, u[1]}
			if m.keep {
				args = []string{"bench", "-q", "-k", "-c", c, "-t", secs, u[1]}
			}
			name := "built-in " + m.what + ", " + u[0] + ", c=" + c
			pairs = append(pairs, pair{
				title:  name + " (this tree vs " + old + ")",
				path:   name,
				server: []int{m.be.pid},
				a:      tool{"backbench", append([]string{bb}, args...)},
				b:      tool{"baseline", append([]string{old}, args...)},
			})
		}
	}
	for _, n := range []struct {
		be   builtin
		what string
	}{{http, "HTTP keep-alive"}, {fcgi, "FastCGI keep-conn"}} {
		be := n.be
		u := be.urls()[1][1]
		args := []string{"bench", "-q", "-k", "-c", c, "-t", secs, u}
		name := "built-in " + n.what + ", Unix, c=" + c + " (noise)"
		pairs = append(pairs, pair{
			title:  name + " (this tree, run 1 vs run 2)",
			path:   name,
			server: []int{be.pid},
			a:      tool{"backbench", append([]string{bb}, args...)},
			b:      tool{"backbench", append([]string{bb}, args...)},
		})
	}
	return pairs
}

// baselineRun is the harness with -baseline: this tree's backbench (bb,
// built in dir) against the older binary named by -baseline on the
// built-in backends only (no peers, nginx or php-fpm, no 10,000
// connections or pacing part), then the summary table.
func baselineRun(bb, dir string) error {
	old := *baseline
	if strings.Contains(old, "/") {
		abs, err := filepath.Abs(old)
		if err != nil {
			return err
		}
		old = abs
	}
	out, err := exec.Command(old, "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("-baseline %s: `version` fails (not a backbench binary?): %v\n%s", old, err, out)
	}
	fmt.Printf("baseline: %s, %s", old, out)
	if rev, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		fmt.Printf("this tree: %s", rev)
	}

	var servers []*exec.Cmd
	defer func() { stopAll(servers) }()
	// One serve process per protocol (this tree's, for both clients),
	// listening on TCP and on a Unix socket.
	var backends []builtin
	for _, proto := range []string{"http", "fcgi"} {
		port, err := freePort()
		if err != nil {
			return err
		}
		be := builtin{protocol: proto, tcp: "127.0.0.1:" + strconv.Itoa(port), sock: filepath.Join(dir, "bb-"+proto+".sock")}
		cmd := exec.Command(bb, "serve", "--protocol", proto, "--body", "512", "--listen", "unix:"+be.sock, "--listen", "tcp:"+be.tcp)
		if err := cmd.Start(); err != nil {
			return err
		}
		servers = append(servers, cmd)
		be.pid = cmd.Process.Pid
		if err := waitListen("unix", be.sock); err != nil {
			return fmt.Errorf("backbench serve: %v", err)
		}
		if err := waitListen("tcp", be.tcp); err != nil {
			return fmt.Errorf("backbench serve: %v", err)
		}
		backends = append(backends, be)
	}

	// Both binaries must read every target and flag the pairs use: three
	// requests each, with and without keep-alive, all answered 200.
	for _, be := range backends {
		for _, u := range be.urls() {
			for _, bin := range []string{bb, old} {
				for _, keep := range []bool{true, false} {
					args := []string{"bench", "-q", "-n", "3", u[1]}
					if keep {
						args = append(args, "-k")
					}
					out, err := exec.Command(bin, args...).CombinedOutput()
					if err != nil || !strings.Contains(string(out), "Complete requests:      3\n") || strings.Contains(string(out), "Non-2xx") || strings.Contains(string(out), "Failed requests:        3") {
						return fmt.Errorf("%s %s: not 3 requests answered 200 (%v):\n%s", bin, strings.Join(args, " "), err, out)
					}
				}
			}
		}
	}

	secs := strconv.FormatFloat(runTime.Seconds(), 'f', -1, 64)
	pairs := baselinePairs(bb, old, strconv.Itoa(*conns), secs, backends[0], backends[1])
	fmt.Printf("\nthis tree (backbench) against %s (baseline), %d rounds per pair, the order alternating; medians over the rounds; ratios new / old\n", old, *rounds)
	var rows []row
	for _, p := range pairs {
		r, err := runPair(p)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	printSummary(rows)
	return nil
}

// buildBackbench builds this tree's backbench into dir.
func buildBackbench(dir string) (string, error) {
	bb := filepath.Join(dir, "backbench")
	if out, err := exec.Command("go", "build", "-o", bb, "./cmd/backbench").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bb, nil
}
