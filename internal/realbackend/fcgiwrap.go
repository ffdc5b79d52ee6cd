package realbackend

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	dir, err := os.MkdirTemp("", "bb")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	docroot := filepath.Join(dir, "cgi")
	if err := os.Mkdir(docroot, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, src := range cgiScripts {
		if err := os.WriteFile(filepath.Join(docroot, name), []byte(src), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	f := &FCGIWrap{Network: network, DocRoot: docroot}
	var spec string
	switch network {
	case "tcp":
		if f.Addr, err = freePort(); err != nil {
			tb.Fatal(err)
		}
		spec = "tcp:" + f.Addr
	case "unix":
		f.Addr = filepath.Join(dir, "wrap.sock")
		spec = "unix:" + f.Addr
	default:
		tb.Fatalf("realbackend: unknown network %q", network)
	}
	cmd := exec.Command(bin, "-c", "2", "-s", spec)
	// Its own process group, so that the children it forks stop with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("realbackend: start %s: %v", bin, err)
	}
	f.PID = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		syscall.Kill(-f.PID, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-f.PID, syscall.SIGKILL)
			<-exited
		}
		// The children outlive the parent for a moment: wait for the
		// group to be gone, kill what is left after 5 s, and give up
		// after 10 s (an unreaped zombie stays in the group).
		start := time.Now()
		killed := false
		for syscall.Kill(-f.PID, 0) == nil && time.Since(start) < 10*time.Second {
			if !killed && time.Since(start) > 5*time.Second {
				syscall.Kill(-f.PID, syscall.SIGKILL)
				killed = true
			}
			time.Sleep(10 * time.Millisecond)
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
			exited <- werr
			tb.Fatalf("realbackend: fcgiwrap exited at start (%v):\n%s", werr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("realbackend: fcgiwrap did not accept on %s %s within %v: %v\n%s", network, f.Addr, StartTimeout, err, out.String())
		}
	}
}
