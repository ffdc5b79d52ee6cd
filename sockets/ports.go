package sockets

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
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
// host:port address (an IP address, not a name), from /proc/net/tcp and
// /proc/net/tcp6. Each holds one ephemeral port for about a minute after a
// client closes a connection first.
func CountTimeWait(remote string) (int, error) {
	host, port, err := net.SplitHostPort(remote)
	if err != nil {
		return 0, fmt.Errorf("sockets: %w", err)
	}
	ip := net.ParseIP(host)
	p, err := strconv.ParseUint(port, 10, 16)
	if ip == nil || err != nil {
		return 0, fmt.Errorf("sockets: %q is not an IP address and port", remote)
	}
	n := 0
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		n += countTimeWait(f, ip, uint16(p))
		f.Close()
	}
	return n, nil
}

// countTimeWait counts the lines of a /proc/net/tcp table that are in
// TIME_WAIT towards ip:port.
func countTimeWait(r io.Reader, ip net.IP, port uint16) int {
	n := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "06" { // 06 is TIME_WAIT
			continue
		}
		rip, rport, ok := parseProcAddr(fields[2])
		if ok && rport == port && rip.Equal(ip) {
			n++
		}
	}
	return n
}

// parseProcAddr reads an address of /proc/net/tcp{,6}: the IP as hex words
// in host byte order (little-endian here), a colon, the port in hex.
func parseProcAddr(s string) (net.IP, uint16, bool) {
	h, ps, ok := strings.Cut(s, ":")
	if !ok || (len(h) != 8 && len(h) != 32) {
		return nil, 0, false
	}
	port, err := strconv.ParseUint(ps, 16, 16)
	if err != nil {
		return nil, 0, false
	}
	ip := make(net.IP, len(h)/2)
	for w := 0; w < len(h)/8; w++ {
		v, err := strconv.ParseUint(h[w*8:w*8+8], 16, 32)
		if err != nil {
			return nil, 0, false
		}
		// Each 32-bit word is in host (little-endian) order.
		ip[w*4], ip[w*4+1], ip[w*4+2], ip[w*4+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return ip, uint16(port), true
}
