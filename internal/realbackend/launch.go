package realbackend

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// prepare makes a short temporary directory (removed when the test ends; not
// tb.TempDir, whose paths can pass the 108-byte limit of a Unix socket path)
// with the files in its subdirectory sub, the document root, and picks the
// backend's address: a free 127.0.0.1 port, or the socket sock in the
// directory.
func prepare(tb testing.TB, network, sub, sock string, files map[string]string, mode os.FileMode) (string, *Backend) {
	tb.Helper()
	dir, err := os.MkdirTemp("", "bb")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	b := &Backend{Network: network, DocRoot: filepath.Join(dir, sub)}
	if err := os.Mkdir(b.DocRoot, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(b.DocRoot, name), []byte(src), mode); err != nil {
			tb.Fatal(err)
		}
	}
	switch network {
	case "tcp":
		if b.Addr, err = freePort(); err != nil {
			tb.Fatal(err)
		}
	case "unix":
		b.Addr = filepath.Join(dir, sock)
	default:
		tb.Fatalf("realbackend: unknown network %q", network)
	}
	return dir, b
}

// launch starts cmd as the leader of its own process group, so that the
// children it forks stop with it, and returns once b accepts connections
// (within StartTimeout). When the test ends it sends SIGTERM to the group,
// SIGKILL after 5 s, and waits (up to 10 s) for the group to be gone: the
// children of a forking server outlive their parent for a moment. diag, if
// not nil, adds text (a log) to a failure at start.
func launch(tb testing.TB, name string, cmd *exec.Cmd, b *Backend, diag func() string) {
	tb.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("realbackend: start %s: %v", cmd.Path, err)
	}
	b.PID = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		syscall.Kill(-b.PID, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-b.PID, syscall.SIGKILL)
			<-exited
		}
		// An unreaped zombie stays in the group: give up after 10 s.
		start := time.Now()
		killed := false
		for syscall.Kill(-b.PID, 0) == nil && time.Since(start) < 10*time.Second {
			if !killed && time.Since(start) > 5*time.Second {
				syscall.Kill(-b.PID, syscall.SIGKILL)
				killed = true
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	more := func() string {
		if diag == nil {
			return ""
		}
		return "\n" + diag()
	}
	deadline := time.Now().Add(StartTimeout)
	for {
		c, err := net.DialTimeout(b.Network, b.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case werr := <-exited:
			exited <- werr // for the cleanup
			tb.Fatalf("realbackend: %s exited at start (%v):\n%s%s", name, werr, out.String(), more())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("realbackend: %s did not accept on %s %s within %v: %v\n%s%s", name, b.Network, b.Addr, StartTimeout, err, out.String(), more())
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
