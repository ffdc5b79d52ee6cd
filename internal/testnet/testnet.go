// Package testnet gives tests network addresses they can rely on. Only
// tests import it.
//
// DeadTCP is an address that refuses connections for the whole test and
// that nobody else can take: a TCP socket bound to a port the kernel
// chose, which never listens, kept open until the test ends. The usual
// trick of listening on port 0 and closing the listener leaves a port that
// the kernel may hand to the next server started on port 0, by this test
// or by another package's tests running at the same time; then the "dead"
// address answers.
package testnet

import (
	"net/netip"
	"syscall"
	"testing"
)

// DeadTCP returns "IP:PORT", an IPv4 address that refuses TCP connections
// (connection refused) until tb ends. ip is an IPv4 address of this
// machine, usually "127.0.0.1".
func DeadTCP(tb testing.TB, ip string) string {
	tb.Helper()
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		tb.Fatalf("testnet: want an IPv4 address, got %q", ip)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: a.As4()}); err != nil {
		tb.Skipf("testnet: cannot bind %s: %v", ip, err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	return netip.AddrPortFrom(a, uint16(sa.(*syscall.SockaddrInet4).Port)).String()
}
