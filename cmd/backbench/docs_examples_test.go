package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/realbackend"
)

// TestDocExamples runs every example of README.md and docs/*.md: in every
// ```sh block (```text blocks are output, synopses and file contents, never
// run), each command line that invokes backbench runs as written, in a
// directory of its block (so that a file one line writes is there for the
// next), against the built-in backends: every documented address is
// replaced by a `backbench serve` of the same protocol and network (see
// exampleRewriter for the rules, which also bound the run). A line must
// exit 0 (or 3, an objective failed, for a line with --slo; 4 or 5, the
// gate tripped or cannot judge, for a line with --fail-on). Lines of other programs (make, bash scripts/..., docker) are not
// run; a block that needs a Kubernetes cluster (kubectl) is skipped as a
// whole: deploy/kubernetes tests its manifest.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented example (-short)")
	}
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		// make test runs this package a second time with the engine forced;
		// the examples are about the documentation, once is enough.
		t.Skip("the documented examples run once, with the default engine")
	}
	bin := buildBinary(t)
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Unix socket paths are short: t.TempDir's can pass the 108-byte limit.
	sockDir, err := os.MkdirTemp("", "bbdoc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })

	rw := &exampleRewriter{dir: sockDir}
	rw.fcgi = startDocServe(t, bin, sockDir, "fcgi", "--protocol", "fcgi")
	rw.http = startDocServe(t, bin, sockDir, "http", "--protocol", "http")
	rw.https = startDocServe(t, bin, sockDir, "https", "--protocol", "http", "--tls")
	rw.pidfile = filepath.Join(sockDir, "backend.pid")
	if err := os.WriteFile(rw.pidfile, []byte(strconv.Itoa(rw.fcgi.pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ran := 0
	for _, file := range docFiles(t) {
		rel := strings.TrimPrefix(filepath.ToSlash(file), docsRoot+"/")
		for _, blk := range shellBlocks(readDocFile(t, file)) {
			if strings.Contains(blk.text, "kubectl ") {
				continue
			}
			cmds, prelude := exampleCommands(blk.text)
			if len(cmds) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s:%d", rel, blk.line), func(t *testing.T) {
				if strings.Contains(blk.text, "php-fpm.yaml") {
					// A study that starts php-fpm itself.
					if _, err := realbackend.Binary(); err != nil {
						realbackend.Missing(t, err.Error())
					}
				}
				work := t.TempDir()
				for _, c := range cmds {
					line := rw.rewrite(c)
					if strings.HasPrefix(line, "backbench serve ") {
						runServeExample(t, env, work, line)
						ran++
						continue
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", strings.Join(append(rw.rewriteAll(prelude), line), "\n"))
					cmd.Dir, cmd.Env = work, env
					out, err := cmd.CombinedOutput()
					cancel()
					ran++
					// With --slo, exit status 3 (an objective failed) is an
					// outcome, not a broken example: on a busy machine the
					// client's own lateness can fail a latency objective.
					var ee *exec.ExitError
					if err != nil && errors.As(err, &ee) && ee.ExitCode() == 3 && strings.Contains(line, "--slo") && strings.Contains(string(out), "objective") {
						err = nil
					}
					// With --fail-on, 4 (the gate tripped) and 5 (it cannot
					// judge: the rewriter cuts --repeat to 3, too few for a
					// verdict) are outcomes too.
					if err != nil && errors.As(err, &ee) && (ee.ExitCode() == 4 || ee.ExitCode() == 5) && strings.Contains(line, "--fail-on") && strings.Contains(string(out), "the gate") {
						err = nil
					}
					if err != nil {
						t.Errorf("documented: %s\nran:        %s\n%v\n%s", c, line, err, docTail(out, 3000))
					}
				}
			})
		}
	}
	t.Logf("%d documented commands ran", ran)
	if ran < 40 {
		t.Errorf("only %d documented commands ran: the example parser is broken", ran)
	}
}

// shellBlock is a fenced ```sh block of a Markdown file.
type shellBlock struct {
	line int // of the opening fence, from 1
	text string
}

// shellBlocks returns the ```sh (or ```bash, ```shell) blocks of a text.
func shellBlocks(text string) []shellBlock {
	var out []shellBlock
	var cur *shellBlock
	var b strings.Builder
	for i, l := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(l)
		if cur == nil {
			if strings.HasPrefix(trim, "```") {
				info := strings.TrimSpace(strings.TrimPrefix(trim, "```"))
				cur = &shellBlock{line: i + 1}
				if info != "sh" && info != "bash" && info != "shell" {
					cur.line = -cur.line // another language: skipped
				}
				b.Reset()
			}
			continue
		}
		if trim == "```" {
			if cur.line > 0 {
				cur.text = b.String()
				out = append(out, *cur)
			}
			cur = nil
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return out
}

var (
	assignRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	invokesRe = regexp.MustCompile(`(?:^|[\s(])(backbench (?:bench|sweep|probe|serve|compare|report|capacity|merge|study|version|help|completion)\b.*)$`)
)

// exampleCommands returns the backbench command lines of a shell block
// (continuation lines joined) and the variable assignments and the files
// written with printf (`printf ... > access.log`) before them. A
// line that starts with another program running backbench (GNU parallel's
// `parallel ... backbench bench ...`) runs its backbench part; in
// `source <(backbench completion bash)` the part inside the parentheses.
func exampleCommands(block string) (cmds, prelude []string) {
	var lines []string
	cur := ""
	for _, l := range strings.Split(block, "\n") {
		if s, ok := strings.CutSuffix(strings.TrimRight(l, " "), "\\"); ok {
			cur += s
			continue
		}
		lines = append(lines, strings.TrimSpace(cur+l))
		cur = ""
	}
	for _, l := range lines {
		l = strings.TrimPrefix(l, "$ ")
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case assignRe.MatchString(l), strings.HasPrefix(l, "printf ") && strings.Contains(l, " > "):
			prelude = append(prelude, l)
		default:
			m := invokesRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			c := m[1]
			if i := strings.Index(l, "<(backbench"); i >= 0 {
				c, _, _ = strings.Cut(l[i+2:], ")")
			}
			cmds = append(cmds, c)
		}
	}
	return cmds, prelude
}

// serveAddrs are the addresses of one `backbench serve` of the test.
type serveAddrs struct {
	tcp, unix string // 127.0.0.1:PORT, /path.sock
	pid       int
}

// startServe starts `backbench serve` on a kernel-chosen TCP port and a Unix
// socket, and returns its addresses once it listens on both; it is stopped
// when the test ends.
func startDocServe(t *testing.T, bin, dir, name string, args ...string) serveAddrs {
	t.Helper()
	sock := filepath.Join(dir, name+".sock")
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "tcp:127.0.0.1:0", "--listen", "unix:" + sock}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	a := serveAddrs{unix: sock, pid: cmd.Process.Pid}
	sc := bufio.NewScanner(stdout)
	for n := 0; n < 2 && sc.Scan(); {
		f := strings.Fields(sc.Text()) // listening PROTOCOL NETWORK ADDRESS
		if len(f) == 4 && f[0] == "listening" {
			if f[2] == "tcp" {
				a.tcp = f[3]
			}
			n++
		}
	}
	if a.tcp == "" {
		t.Fatalf("serve %s: no tcp address on its stdout", name)
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()
	return a
}

// runServeExample starts a documented `backbench serve` line, waits until
// it listens on every --listen, and stops it with SIGTERM: it must exit 0.
func runServeExample(t *testing.T, env []string, dir, line string) {
	t.Helper()
	if strings.HasSuffix(strings.TrimSpace(line), "&") {
		// bash would leave the server running in the background, holding
		// the pipes this test waits on: such a line belongs in prose or
		// a text block.
		t.Fatalf("a documented serve command run in the background (%s): write it in a ```text block or in the prose", line)
	}
	want := strings.Count(line, "--listen")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	// Whatever the line started, the wait ends: the pipes are closed
	// 10 s after the server exits or is killed.
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	n := 0
	for n < want && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "listening ") {
			n++
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		for sc.Scan() {
		}
	}()
	err = cmd.Wait()
	if n < want || err != nil {
		t.Errorf("ran: %s\nlistening on %d of %d addresses, exit %v\n%s", line, n, want, err, stderr.String())
	}
}

// exampleRewriter turns a documented command into one that runs here,
// quickly, against the built-in backends. The rules:
//
//   - every URL's address becomes a test backend's of the same protocol
//     (fcgi, http, https) and network (tcp, unix); a port range {A..B}
//     becomes a range of the one test port; --unix-socket PATH names the
//     test backend's socket of the URL's protocol; serve's --listen
//     addresses become a kernel-chosen port and a socket of the test;
//   - --backend-pid names the FastCGI test backend, --backend-pidfile a
//     file holding its PID; DIR (the recipes' directory) a test directory;
//     studies/FILE the repository's file;
//   - the run is bounded: -n at most 100, -t 1 s, --repeat at most 3, a
//     sweep's -c at most its first 3 levels (a range A:B:S becomes A:A+S:S),
//     a capacity search at most 20 req/s (or -c 20) without warm-up and
//     with a 2 s confirmation, probe's idle-timeout check at most 1 s, and
//     a --start-at time computed as "now + N" starts in 3 s.
type exampleRewriter struct {
	dir               string
	fcgi, http, https serveAddrs
	pidfile           string
}

var (
	urlRe        = regexp.MustCompile(`\b(fcgi|https?)://(unix:[^\s:'"]+:|\[[^\]]*\](?::\d+)?|[A-Za-z0-9.\-]+(?::(?:\d+|PORT|\{\d+\.\.\d+\}))?)`)
	unixSockRe   = regexp.MustCompile(`--unix-socket[ =]\S+`)
	listenRe     = regexp.MustCompile(`--listen[ =](tcp|unix):\S+`)
	pidRe        = regexp.MustCompile(`--backend-pid[ =]\d+`)
	pidfileRe    = regexp.MustCompile(`--backend-pidfile[ =]\S+`)
	requestsRe   = regexp.MustCompile(`(^|\s)(-n|--requests)[ =](\d+)`)
	timeRe       = regexp.MustCompile(`(^|\s)(-t|--timelimit)[ =](\S+)`)
	repeatRe     = regexp.MustCompile(`(^|\s)--repeat[ =](\d+)`)
	levelsRe     = regexp.MustCompile(`(^|\s)(-c|--concurrency)[ =](\S+)`)
	startAtRe    = regexp.MustCompile(`\$\(date \+%s\)\s*\+\s*\d+`)
	dirRe        = regexp.MustCompile(`\bDIR/`)
	capacityMaxR = regexp.MustCompile(`(^|\s)--max[ =]`)
	// capacityStartR is capacity's --start (not --start-at).
	capacityStartR = regexp.MustCompile(`(^|\s)--start[ =]\S+`)
)

func (rw *exampleRewriter) addrs(scheme string) serveAddrs {
	switch scheme {
	case "fcgi":
		return rw.fcgi
	case "https":
		return rw.https
	}
	return rw.http
}

// rewriteAll rewrites the lines of a block's prelude (its assignments).
func (rw *exampleRewriter) rewriteAll(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, rw.rewrite(l))
	}
	return out
}

func (rw *exampleRewriter) rewrite(line string) string {
	scheme := ""
	line = urlRe.ReplaceAllStringFunc(line, func(u string) string {
		m := urlRe.FindStringSubmatch(u)
		a := rw.addrs(m[1])
		if scheme == "" {
			scheme = m[1]
		}
		if strings.HasPrefix(m[2], "unix:") {
			return m[1] + "://unix:" + a.unix + ":"
		}
		if strings.Contains(m[2], "{") {
			host, port, _ := strings.Cut(a.tcp, ":")
			return m[1] + "://" + host + ":{" + port + ".." + port + "}"
		}
		return m[1] + "://" + a.tcp
	})
	line = unixSockRe.ReplaceAllString(line, "--unix-socket "+rw.addrs(scheme).unix)
	n := 0
	line = listenRe.ReplaceAllStringFunc(line, func(l string) string {
		n++
		if strings.Contains(l, "unix:") {
			return fmt.Sprintf("--listen unix:%s/serve-example-%d.sock", rw.dir, n)
		}
		return "--listen tcp:127.0.0.1:0"
	})
	line = pidRe.ReplaceAllString(line, "--backend-pid "+strconv.Itoa(rw.fcgi.pid))
	line = pidfileRe.ReplaceAllString(line, "--backend-pidfile "+rw.pidfile)
	line = dirRe.ReplaceAllString(line, rw.dir+"/")
	line = startAtRe.ReplaceAllString(line, "$(date +%s) + 3")
	line = requestsRe.ReplaceAllStringFunc(line, func(s string) string {
		m := requestsRe.FindStringSubmatch(s)
		if v, _ := strconv.Atoi(m[3]); v > 100 {
			return m[1] + m[2] + " 100"
		}
		return s
	})
	line = timeRe.ReplaceAllString(line, "$1$2 1")
	line = repeatRe.ReplaceAllStringFunc(line, func(s string) string {
		m := repeatRe.FindStringSubmatch(s)
		if v, _ := strconv.Atoi(m[2]); v > 3 {
			return m[1] + "--repeat 3"
		}
		return s
	})
	// A file of the repository's studies/ (a study file, an access log),
	// from the block's own directory.
	if root, err := filepath.Abs(docsRoot); err == nil {
		line = strings.ReplaceAll(line, " studies/", " "+root+"/studies/")
	}
	switch {
	case strings.HasPrefix(line, "backbench sweep "):
		line = levelsRe.ReplaceAllStringFunc(line, func(s string) string {
			m := levelsRe.FindStringSubmatch(s)
			return m[1] + m[2] + " " + shortLevels(m[3])
		})
	case strings.HasPrefix(line, "backbench study "):
		// A short try unless the line bounds it itself.
		if !strings.Contains(line, "--quick") && !strings.Contains(line, "--repeat") {
			line = strings.Replace(line, "backbench study ", "backbench study --quick ", 1)
		}
	case strings.HasPrefix(line, "backbench probe "):
		if !strings.Contains(line, "--idle-max") {
			line = strings.Replace(line, "backbench probe ", "backbench probe --idle-max 1 ", 1)
		}
	case strings.HasPrefix(line, "backbench capacity "):
		if !capacityMaxR.MatchString(line) {
			line = strings.Replace(line, "backbench capacity ", "backbench capacity --max 20 --warmup 0 ", 1)
			// A documented --start above the added --max would be refused
			// (--start is above --max): the bounded search starts low.
			line = capacityStartR.ReplaceAllString(line, "${1}--start 10")
		}
		if !timeRe.MatchString(line) {
			line = strings.Replace(line, "backbench capacity ", "backbench capacity -t 1 ", 1)
		}
		if !strings.Contains(line, "--confirm") {
			line = strings.Replace(line, "backbench capacity ", "backbench capacity --confirm 2 ", 1)
		}
	}
	return line
}

// shortLevels keeps the first 3 levels of a sweep's -c SPEC, each range
// A:B:S cut to A:A+S:S.
func shortLevels(spec string) string {
	parts := strings.Split(spec, ",")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	for i, p := range parts {
		f := strings.Split(p, ":")
		if len(f) != 3 {
			continue
		}
		a, err1 := strconv.Atoi(f[0])
		s, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil {
			parts[i] = fmt.Sprintf("%d:%d:%d", a, a+s, s)
		}
	}
	return strings.Join(parts, ",")
}

func docTail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func TestExampleRewriter(t *testing.T) {
	rw := &exampleRewriter{dir: "/d", pidfile: "/d/p.pid",
		fcgi:  serveAddrs{tcp: "127.0.0.1:1001", unix: "/d/f.sock", pid: 7},
		http:  serveAddrs{tcp: "127.0.0.1:1002", unix: "/d/h.sock"},
		https: serveAddrs{tcp: "127.0.0.1:1003", unix: "/d/s.sock"}}
	for _, c := range []struct{ in, want string }{
		{"backbench bench -n 10000 -c 50 -k fcgi://127.0.0.1:9000/index.php",
			"backbench bench -n 100 -c 50 -k fcgi://127.0.0.1:1001/index.php"},
		{"backbench bench -k -c 8 -t 10 --backend-pidfile /run/php/php8.2-fpm.pid fcgi://unix:/run/php/php8.2-fpm.sock:/index.php",
			"backbench bench -k -c 8 -t 1 --backend-pidfile /d/p.pid fcgi://unix:/d/f.sock:/index.php"},
		{"backbench bench -n 100 --unix-socket /run/app.sock http://app.local/health",
			"backbench bench -n 100 --unix-socket /d/h.sock http://127.0.0.1:1002/health"},
		{"backbench bench -k -c 10 -n 5000 'fcgi://127.0.0.1:{3000..3004}/app'",
			"backbench bench -k -c 10 -n 100 'fcgi://127.0.0.1:{1001..1001}/app'"},
		{"backbench probe --insecure https://[::1]:8443/", "backbench probe --idle-max 1 --insecure https://127.0.0.1:1003/"},
		{"backbench sweep -n 1000 -c 1:500:10 'a=http://unix:/run/thin.sock:/' --document-root DIR/www",
			"backbench sweep -n 100 -c 1:11:10 'a=http://unix:/d/h.sock:/' --document-root /d/www"},
		{"backbench sweep -q -c 1,2,4,8,16 --repeat 5 x=fcgi://127.0.0.1:PORT/",
			"backbench sweep -q -c 1,2,4 --repeat 3 x=fcgi://127.0.0.1:1001/"},
		{"backbench capacity --slo 'p99<=50ms' http://127.0.0.1:8080/",
			"backbench capacity --confirm 2 -t 1 --max 20 --warmup 0 --slo 'p99<=50ms' http://127.0.0.1:1002/"},
		{"backbench capacity --slo 'p99<=150ms' -t 10 --start 100 --max-time 10m http://127.0.0.1:8080/",
			"backbench capacity --confirm 2 --max 20 --warmup 0 --slo 'p99<=150ms' -t 1 --start 10 --max-time 10m http://127.0.0.1:1002/"},
		{"backbench serve --protocol fcgi --listen tcp:127.0.0.1:9001 --listen unix:/tmp/bb.sock",
			"backbench serve --protocol fcgi --listen tcp:127.0.0.1:0 --listen unix:/d/serve-example-2.sock"},
		{"T=$(( $(date +%s) + 30 ))", "T=$(( $(date +%s) + 3 ))"},
		{"backbench probe http://127.0.0.1:3000/", "backbench probe --idle-max 1 http://127.0.0.1:1002/"},
	} {
		if got := rw.rewrite(c.in); got != c.want {
			t.Errorf("rewrite(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	cmds, prelude := exampleCommands("T=1\n# a comment\nmake demo\nparallel -j0 \\\n  backbench bench -q x > runs.json\nsource <(backbench completion bash)    # or\nkubectl delete job backbench\n")
	if want := []string{"backbench bench -q x > runs.json", "backbench completion bash"}; strings.Join(cmds, "|") != strings.Join(want, "|") {
		t.Errorf("exampleCommands: %q, want %q", cmds, want)
	}
	if len(prelude) != 1 || prelude[0] != "T=1" {
		t.Errorf("prelude %q", prelude)
	}
}
