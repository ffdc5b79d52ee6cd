package main

import (
	"fmt"
	"syscall"
	"testing"
)

// deadTCPAddr returns a 127.0.0.1 address that refuses connections and that
// no one else can take for the test's life: a TCP socket bound to a port
// the kernel chose, that never listens, kept open until the test ends.
// (Closing a listener and reusing its address would let the kernel hand
// the port to the next server started on port 0.)
func deadTCPAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
