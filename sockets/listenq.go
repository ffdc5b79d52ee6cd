package sockets

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ListenCounters are the kernel's machine-wide TcpExt counters of a full
// listen queue (/proc/net/netstat): ListenOverflows counts connections that
// found the accept queue full, ListenDrops every SYN or handshake dropped at
// a listening socket (overflows included).
type ListenCounters struct {
	Overflows, Drops int64
}

// ReadListenCounters reads ListenCounters from /proc/net/netstat.
func ReadListenCounters() (ListenCounters, error) {
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		return ListenCounters{}, fmt.Errorf("sockets: %w", err)
	}
	defer f.Close()
	return parseNetstat(f)
}

// parseNetstat finds ListenOverflows and ListenDrops in the TcpExt lines of
// a /proc/net/netstat text: a line of names followed by a line of values.
func parseNetstat(r io.Reader) (ListenCounters, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var names []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "TcpExt:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		var c ListenCounters
		found := 0
		for i := 1; i < len(f) && i < len(names); i++ {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				continue
			}
			switch names[i] {
			case "ListenOverflows":
				c.Overflows, found = v, found+1
			case "ListenDrops":
				c.Drops, found = v, found+1
			}
		}
		if found < 2 {
			return c, errors.New("sockets: no ListenOverflows or ListenDrops in /proc/net/netstat")
		}
		return c, nil
	}
	return ListenCounters{}, errors.New("sockets: no TcpExt lines in /proc/net/netstat")
}

// IsLocalTCP reports whether addr (host:port) is an IP address of this
// machine: loopback, or one of its interfaces' addresses.
func IsLocalTCP(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// TCP listen state and the netlink sock_diag request (linux/inet_diag.h).
const (
	tcpListen       = 10
	tcpTimeWait     = 6
	inetDiagReqSize = 56 // struct inet_diag_req_v2
	inetDiagMsgSize = 72 // struct inet_diag_msg
)

// ListenBacklog returns the listen backlog of the TCP socket listening on
// addr (host:port) on this machine, and how many connections wait in its
// accept queue now: the Send-Q and Recv-Q that ss -ltn shows, read through
// netlink sock_diag. A socket bound to the wildcard address of the family
// counts as listening on addr.
func ListenBacklog(addr string) (backlog, queued int, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, 0, fmt.Errorf("sockets: %w", err)
	}
	ip := net.ParseIP(host)
	p, perr := strconv.ParseUint(port, 10, 16)
	if ip == nil || perr != nil {
		return 0, 0, fmt.Errorf("sockets: %q is not an IP address and port", addr)
	}
	// An IPv4 address may be served by a dual-stack socket on [::].
	families := []uint8{unix.AF_INET6}
	if ip.To4() != nil {
		families = []uint8{unix.AF_INET, unix.AF_INET6}
	}
	for _, family := range families {
		msgs, err := dumpListeners(family)
		if err != nil {
			return 0, 0, err
		}
		for _, m := range msgs {
			if len(m) < inetDiagMsgSize || m[1] != tcpListen || binary.BigEndian.Uint16(m[4:6]) != uint16(p) {
				continue
			}
			src := net.IP(m[8:24])
			if family == unix.AF_INET {
				src = net.IP(m[8:12])
			}
			if src.Equal(ip) || src.IsUnspecified() {
				return int(binary.NativeEndian.Uint32(m[60:64])), int(binary.NativeEndian.Uint32(m[56:60])), nil
			}
		}
	}
	return 0, 0, fmt.Errorf("sockets: no TCP socket listening on %s", addr)
}

// dumpListeners asks the kernel for every listening TCP socket of family
// and returns the inet_diag_msg bodies.
func dumpListeners(family uint8) ([][]byte, error) {
	var out [][]byte
	err := dumpTCP(family, 1<<tcpListen, nil, func(m []byte) { out = append(out, append([]byte(nil), m...)) })
	return out, err
}

// dumpTCP asks the kernel, through netlink sock_diag, for the TCP sockets
// of family in the states of the bit mask states that pass the filter
// bytecode bc (nil: all), and calls each with every inet_diag_msg body (valid
// during the call only).
func dumpTCP(family uint8, states uint32, bc []byte, each func(msg []byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("sockets: sock_diag: %w", err)
	}
	defer unix.Close(fd)
	size := unix.NLMSG_HDRLEN + inetDiagReqSize
	if bc != nil {
		size += unix.SizeofNlAttr + len(bc)
	}
	req := make([]byte, size)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:4], uint32(len(req)))
	ne.PutUint16(req[4:6], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:8], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:12], 1)
	body := req[unix.NLMSG_HDRLEN:]
	body[0] = family
	body[1] = unix.IPPROTO_TCP
	ne.PutUint32(body[4:8], states)
	if bc != nil {
		attr := body[inetDiagReqSize:]
		ne.PutUint16(attr[0:2], uint16(unix.SizeofNlAttr+len(bc)))
		ne.PutUint16(attr[2:4], inetDiagReqBytecode)
		copy(attr[unix.SizeofNlAttr:], bc)
	}
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sockets: sock_diag: %w", err)
	}
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return fmt.Errorf("sockets: sock_diag: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("sockets: sock_diag: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				return errors.New("sockets: sock_diag: the kernel refused the request")
			}
			each(m.Data)
		}
	}
}

// SetBacklog sets the listen backlog of a listening socket to n (calling
// listen(2) again, which Linux allows on a listening socket); the kernel
// caps it at net.core.somaxconn.
func SetBacklog(ln net.Listener, n int) error {
	sc, ok := ln.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return fmt.Errorf("sockets: cannot set the backlog of a %T", ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("sockets: %w", err)
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = unix.Listen(int(fd), n) }); err != nil {
		return fmt.Errorf("sockets: %w", err)
	}
	if lerr != nil {
		return fmt.Errorf("sockets: listen backlog %d: %w", n, lerr)
	}
	return nil
}
