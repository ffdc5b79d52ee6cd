// Package realbackend starts real backends for tests: php-fpm and fcgiwrap,
// each run as a child process of the test with its own configuration, scripts, port or Unix
// socket and temporary directory, and stopped by PID when the test ends. It
// never uses the system's php-fpm service. StartScripted starts the others
// (Thin, Ruby's fcgi.rb, Puma, gunicorn, nginx ...) with
// scripts/backends.sh, each serving the same three endpoints.
//
// When the backend is not installed the test is skipped, except when the
// environment has CI=true, where a missing backend fails the test.
package realbackend

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	// WarnScript answers 200 and HelloBody, and logs WarnMessage with
	// error_log, which php-fpm sends on FastCGI STDERR.
	WarnScript = "/warn.php"
	// WarnMessage is what WarnScript logs.
	WarnMessage = "backbench warning"
)

var scripts = map[string]string{
	HelloScript:    "<?php\nheader('Content-Type: text/plain');\necho " + strconv.Quote(HelloBody) + ";\n",
	WarnScript:     "<?php\nerror_log(" + strconv.Quote(WarnMessage) + ");\nheader('Content-Type: text/plain');\necho " + strconv.Quote(HelloBody) + ";\n",
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

// Missing skips the test with the reason (see Skip), or fails it when
// CI=true.
func Missing(tb testing.TB, reason string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s (CI=true: real backends are required)", reason)
	}
	Skip(tb, reason)
}

// SkipLogEnv names the file (make test sets it) to which Skip appends one
// line per skipped real-backend test, "TestName: reason", so that make
// test can list them at its end: go test shows no skip without -v.
const SkipLogEnv = "BACKBENCH_SKIPLOG"

// Skip skips the test with the reason, after noting it in the file named
// by $BACKBENCH_SKIPLOG when set.
func Skip(tb testing.TB, reason string) {
	tb.Helper()
	if name := os.Getenv(SkipLogEnv); name != "" {
		// One write of one line with O_APPEND: the lines of test
		// processes running at once do not interleave.
		if f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			f.WriteString(tb.Name() + ": " + strings.ReplaceAll(reason, "\n", " ") + "\n")
			f.Close()
		}
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
	dir, f := prepare(tb, network, "www", "fpm.sock", scripts, 0o644)
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
	launch(tb, "php-fpm", exec.Command(bin, "-F", "-R", "-n", "-y", conf), f, func() string {
		log, _ := os.ReadFile(logPath)
		return string(log)
	})
	return f
}
