package realbackend

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// CGI scripts written to every fcgiwrap document root, with what they
// answer.
const (
	// CGIHelloScript answers 200, Content-Type text/plain and CGIHelloBody.
	CGIHelloScript = "/hello.cgi"
	// CGIHelloBody is the body of CGIHelloScript.
	CGIHelloBody = "hello from fcgiwrap\n"
)

var cgiScripts = map[string]string{
	CGIHelloScript: "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\nprintf '" + "hello from fcgiwrap\\n" + "'\n",
}

// FCGIWrapBinary is where Debian's fcgiwrap package installs the program.
const FCGIWrapBinary = "/usr/sbin/fcgiwrap"

// FCGIWrap is an fcgiwrap server started by StartFCGIWrap; its PID is also
// its process group id.
type FCGIWrap = Backend

// FCGIWrapPath returns the path of the fcgiwrap binary: fcgiwrap on $PATH,
// else FCGIWrapBinary.
func FCGIWrapPath() (string, error) {
	if p, err := exec.LookPath("fcgiwrap"); err == nil {
		return p, nil
	}
	if fi, err := os.Stat(FCGIWrapBinary); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return FCGIWrapBinary, nil
	}
	return "", errors.New("fcgiwrap is not installed (Debian: apt-get install fcgiwrap)")
}

// StartFCGIWrap starts fcgiwrap with 2 children (-c 2) listening on
// 127.0.0.1 with a free port (network "tcp") or on a Unix socket in a fresh
// short temporary directory (network "unix"), with the CGI scripts above in
// its document root, and stops it (its whole process group, which it leads)
// when the test ends. It returns once the server accepts connections. A
// missing fcgiwrap skips the test, or fails it when CI=true.
func StartFCGIWrap(tb testing.TB, network string) *FCGIWrap {
	tb.Helper()
	bin, err := FCGIWrapPath()
	if err != nil {
		Missing(tb, err.Error())
	}
	_, f := prepare(tb, network, "cgi", "wrap.sock", cgiScripts, 0o755)
	launch(tb, "fcgiwrap", exec.Command(bin, "-c", "2", "-s", network+":"+f.Addr), f, nil)
	return f
}
