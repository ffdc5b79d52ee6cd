// Package realbackend starts real backends for tests: php-fpm and fcgiwrap,
// each run as a child process of the test with its own configuration, scripts, port or Unix
// socket and temporary directory, and stopped by PID when the test ends. It
// never uses the system's php-fpm service.
//
// When the backend is not installed the test is skipped, except when the
// environment has CI=true, where a missing backend fails the test.
package realbackend

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Scripts written to every php-fpm document root, with what they answer.
const (
	// HelloScript answers 200, Content-Type text/plain and HelloBody.
	HelloScript = "/hello.php"
	// HelloBody is the body of HelloScript.
	HelloBody = "hello from php-fpm\n"
	// NotFoundScript answers 404 (via http_response_code) and NotFoundBody.
	NotFoundScript = "/notfound.php"
	// NotFoundBody is the body of NotFoundScript.
	NotFoundBody = "no such page\n"
	// ServerScript answers the string entries of $_SERVER, sorted, as
	// "NAME=VALUE\n" lines, then "STDIN=<bytes of php://input>\n".
	ServerScript = "/server.php"
)

var scripts = map[string]string{
	HelloScript:    "<?php\nheader('Content-Type: text/plain');\necho " + strconv.Quote(HelloBody) + ";\n",
	NotFoundScript: "<?php\nhttp_response_code(404);\nheader('Content-Type: text/plain');\necho " + strconv.Quote(NotFoundBody) + ";\n",
	ServerScript: "<?php\nheader('Content-Type: text/plain');\nksort($_SERVER);\n" +
		"foreach ($_SERVER as $k => $v) { if (is_string($v)) { echo $k, '=', $v, \"\\n\"; } }\n" +
		"echo 'STDIN=', strlen(file_get_contents('php://input')), \"\\n\";\n",
}

// StatusPath is the pool's pm.status_path: php-fpm answers its status page
// there.
const StatusPath = "/fpm-status"

// StartTimeout bounds how long PHPFPM waits for the pool to accept
// connections: 10 s.
const StartTimeout = 10 * time.Second

// Backend is a real backend started for a test.
type Backend struct {
	// Network is "tcp" or "unix".
	Network string
	// Addr is 127.0.0.1:PORT or the socket path.
	Addr string
	// DocRoot is the absolute directory holding the scripts; pass it as
	// the client's document root so that SCRIPT_FILENAME names them.
	DocRoot string
	// PID is the server's (master) process id.
	PID int
}

// FPM is a php-fpm pool started by PHPFPM.
type FPM = Backend

// URL returns the fcgi:// target of script (which starts with "/"):
// fcgi://127.0.0.1:PORT/script or fcgi://unix:/path.sock:/script.
func (f *Backend) URL(script string) string {
	if f.Network == "unix" {
		return "fcgi://unix:" + f.Addr + ":" + script
	}
	return "fcgi://" + f.Addr + script
}

// Binary returns the path of the php-fpm binary: php-fpm8.2 or php-fpm on
// $PATH, else the first /usr/sbin/php-fpm*.
func Binary() (string, error) {
	for _, name := range []string{"php-fpm8.2", "php-fpm"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	matches, _ := filepath.Glob("/usr/sbin/php-fpm*")
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return m, nil
		}
	}
	return "", errors.New("php-fpm is not installed (Debian: apt-get install php-fpm)")
}

// Missing skips the test with the reason, or fails it when CI=true.
func Missing(tb testing.TB, reason string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s (CI=true: real backends are required)", reason)
	}
	tb.Skip(reason)
}

// PHPFPM starts a php-fpm pool (pm = static, 4 children) listening on
// 127.0.0.1 with a free port (network "tcp") or on a Unix socket in a fresh
// short temporary directory (network "unix"), with the scripts above in its
// document root, and stops it when the test ends. It returns once the pool
// accepts connections.
func PHPFPM(tb testing.TB, network string) *FPM {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		Missing(tb, err.Error())
	}
	// Not tb.TempDir: a Unix socket path must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "bb")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	docroot := filepath.Join(dir, "www")
	if err := os.Mkdir(docroot, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, src := range scripts {
		if err := os.WriteFile(filepath.Join(docroot, name), []byte(src), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	f := &FPM{Network: network, DocRoot: docroot}
	switch network {
	case "tcp":
		f.Addr, err = freePort()
		if err != nil {
			tb.Fatal(err)
		}
	case "unix":
		f.Addr = filepath.Join(dir, "fpm.sock")
	default:
		tb.Fatalf("realbackend: unknown network %q", network)
	}
	conf := filepath.Join(dir, "fpm.conf")
	logPath := filepath.Join(dir, "fpm.log")
	cfg := fmt.Sprintf(`[global]
pid = %s
error_log = %s
daemonize = no

[backbench]
listen = %s
listen.mode = 0666
pm = static
pm.max_children = 4
pm.status_path = %s
clear_env = yes
`, filepath.Join(dir, "fpm.pid"), logPath, f.Addr, StatusPath)
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	// -F: foreground, -R: let workers run as root (tests often run as
	// root), -y: our configuration only, -n: no php.ini.
	cmd := exec.Command(bin, "-F", "-R", "-n", "-y", conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("realbackend: start %s: %v", bin, err)
	}
	f.PID = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(StartTimeout)
	for {
		c, err := net.DialTimeout(network, f.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return f
		}
		select {
		case werr := <-exited:
			exited <- werr // for the cleanup
			log, _ := os.ReadFile(logPath)
			tb.Fatalf("realbackend: php-fpm exited at start (%v):\n%s\n%s", werr, out.String(), log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			tb.Fatalf("realbackend: php-fpm did not accept on %s %s within %v: %v\n%s", network, f.Addr, StartTimeout, err, log)
		}
	}
}

// freePort returns 127.0.0.1:PORT with a port that was free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
