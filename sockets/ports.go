package sockets

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LocalPortRange returns the kernel's ephemeral port range
// (net.ipv4.ip_local_port_range): the ports a TCP client connection can use.
func LocalPortRange() (lo, hi int, err error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, fmt.Errorf("sockets: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("sockets: bad ip_local_port_range %q", b)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("sockets: bad ip_local_port_range %q", b)
	}
	return lo, hi, nil
}

// CountTimeWait counts the TCP sockets in TIME_WAIT whose remote end is the
// host:port address (an IP address, not a name). Each holds one ephemeral
// port for about a minute after a client closes a connection first.
//
// The kernel does the counting's filtering (netlink sock_diag, with a
// bytecode condition on the remote address and port), so the cost does not
// grow with the other TIME_WAIT sockets of the machine: reading
// /proc/net/tcp instead formats every socket of the machine as text, which
// after a run without keep-alive (tens of thousands of them) cost more client
// CPU than the run's last thousands of requests.
func CountTimeWait(remote string) (int, error) {
	host, port, err := net.SplitHostPort(remote)
	if err != nil {
		return 0, fmt.Errorf("sockets: %w", err)
	}
	ip, err := netip.ParseAddr(host)
	p, perr := strconv.ParseUint(port, 10, 16)
	if err != nil || perr != nil {
		return 0, fmt.Errorf("sockets: %q is not an IP address and port", remote)
	}
	ip = ip.Unmap()
	n := 0
	count := func([]byte) { n++ }
	// An IPv4 peer may also be reached from a dual-stack IPv6 socket (as
	// ::ffff:a.b.c.d); the kernel's condition matches those too.
	families := []uint8{unix.AF_INET6}
	if ip.Is4() {
		families = []uint8{unix.AF_INET, unix.AF_INET6}
	}
	for _, family := range families {
		if err := dumpTCP(family, 1<<tcpTimeWait, remoteCond(ip, int(p)), count); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// inet_diag filter bytecode (linux/inet_diag.h).
const (
	inetDiagReqBytecode = 1 // INET_DIAG_REQ_BYTECODE, the request's attribute
	inetDiagBCDCond     = 8 // INET_DIAG_BC_D_COND: remote address and port
)

// remoteCond returns filter bytecode that accepts exactly the sockets whose
// remote end is ip:port: one D_COND operation (struct inet_diag_bc_op: code,
// yes, no) and its host condition (struct inet_diag_hostcond: family,
// prefix length, port, address). A match jumps to the end (accept); no
// match jumps 4 bytes past it (reject).
func remoteCond(ip netip.Addr, port int) []byte {
	addr := ip.AsSlice()
	family := byte(unix.AF_INET6)
	if ip.Is4() {
		family = unix.AF_INET
	}
	n := 4 + 8 + len(addr)
	bc := make([]byte, n)
	bc[0] = inetDiagBCDCond
	bc[1] = byte(n)
	binary.NativeEndian.PutUint16(bc[2:4], uint16(n+4))
	bc[4] = family
	bc[5] = byte(8 * len(addr))
	binary.NativeEndian.PutUint32(bc[8:12], uint32(port))
	copy(bc[12:], addr)
	return bc
}
