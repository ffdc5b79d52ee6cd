package sockets

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
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

// ListenerStat is what the kernel keeps of one listening socket, read
// through netlink sock_diag.
type ListenerStat struct {
	// Backlog is the socket's listen backlog (ss -l's Send-Q; the kernel
	// caps it at net.core.somaxconn), and Queued how many connections wait
	// in its accept queue now (Recv-Q).
	Backlog, Queued int
	// Drops counts the connection attempts this socket dropped since it
	// was made: for TCP, SYNs and handshakes dropped because its accept
	// queue was full (each also counts in the machine-wide
	// ListenOverflows and ListenDrops) or for want of memory; the kernel
	// keeps it per socket (sk_drops, INET_DIAG_SKMEMINFO). HasDrops is
	// false where there is no such counter: a Unix socket refuses a
	// connect to a full queue at once (EAGAIN) instead of dropping it.
	Drops    int64
	HasDrops bool
}

// ListenBacklog returns the listen backlog of the TCP socket listening on
// addr (host:port) on this machine, and how many connections wait in its
// accept queue now: the Send-Q and Recv-Q that ss -ltn shows, read through
// netlink sock_diag. A socket bound to the wildcard address of the family
// counts as listening on addr.
func ListenBacklog(addr string) (backlog, queued int, err error) {
	st, err := TCPListener(addr)
	return st.Backlog, st.Queued, err
}

// TCPListener returns the ListenerStat of the TCP socket listening on addr
// (host:port) on this machine, drops included. A socket bound to the
// wildcard address of the family counts as listening on addr; the sockets
// of one port shared with SO_REUSEPORT count as one (queues and drops
// summed, the largest backlog).
func TCPListener(addr string) (ListenerStat, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ListenerStat{}, fmt.Errorf("sockets: %w", err)
	}
	ip := net.ParseIP(host)
	p, perr := strconv.ParseUint(port, 10, 16)
	if ip == nil || perr != nil {
		return ListenerStat{}, fmt.Errorf("sockets: %q is not an IP address and port", addr)
	}
	// An IPv4 address may be served by a dual-stack socket on [::].
	families := []uint8{unix.AF_INET6}
	if ip.To4() != nil {
		families = []uint8{unix.AF_INET, unix.AF_INET6}
	}
	for _, family := range families {
		var st ListenerStat
		found := false
		err := dumpTCPExt(family, 1<<(inetDiagSKMemInfo-1), 1<<tcpListen, nil, func(m []byte) {
			if len(m) < inetDiagMsgSize || m[1] != tcpListen || binary.BigEndian.Uint16(m[4:6]) != uint16(p) {
				return
			}
			src := net.IP(m[8:24])
			if family == unix.AF_INET {
				src = net.IP(m[8:12])
			}
			if !src.Equal(ip) && !src.IsUnspecified() {
				return
			}
			// Several sockets listen on one port with SO_REUSEPORT (one
			// per worker): their queues and drops add up, each has the
			// backlog.
			found = true
			ne := binary.NativeEndian
			st.Queued += int(ne.Uint32(m[56:60]))
			st.Backlog = max(st.Backlog, int(ne.Uint32(m[60:64])))
			eachAttr(m[inetDiagMsgSize:], func(typ uint16, data []byte) {
				if typ == inetDiagSKMemInfo && len(data) >= 4*(skMemInfoDrops+1) {
					st.Drops += int64(ne.Uint32(data[4*skMemInfoDrops:]))
					st.HasDrops = true
				}
			})
		})
		if err != nil {
			return ListenerStat{}, err
		}
		if found {
			return st, nil
		}
	}
	return ListenerStat{}, fmt.Errorf("sockets: no TCP socket listening on %s", addr)
}

// The inet_diag extension of a socket's memory counters and the index of
// the drop counter in it (linux/inet_diag.h, linux/sock_diag.h).
const (
	inetDiagSKMemInfo = 7 // INET_DIAG_SKMEMINFO: u32 array of SK_MEMINFO_*
	skMemInfoDrops    = 8 // SK_MEMINFO_DROPS
)

// eachAttr calls each with the type and payload of every netlink attribute
// (struct nlattr, 4-byte aligned) in b.
func eachAttr(b []byte, each func(typ uint16, data []byte)) {
	for len(b) >= unix.SizeofNlAttr {
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		if n < unix.SizeofNlAttr || n > len(b) {
			return
		}
		each(binary.NativeEndian.Uint16(b[2:4])&^unix.NLA_F_NESTED, b[unix.SizeofNlAttr:n])
		b = b[min((n+3)&^3, len(b)):]
	}
}

// Unix socket diagnostics (linux/unix_diag.h).
const (
	unixDiagReqSize = 24   // struct unix_diag_req
	unixDiagMsgSize = 16   // struct unix_diag_msg
	udiagShowName   = 0x01 // UDIAG_SHOW_NAME
	udiagShowRQLen  = 0x10 // UDIAG_SHOW_RQLEN
	unixDiagName    = 0    // UNIX_DIAG_NAME: the bound path
	unixDiagRQLen   = 4    // UNIX_DIAG_RQLEN: struct unix_diag_rqlen
)

// UnixListener returns the ListenerStat of the Unix stream socket listening
// on path on this machine (in this network namespace): its backlog and the
// connections waiting in its queue (UNIX_DIAG_RQLEN). There is no drop
// counter (HasDrops is false): a connect to a full queue fails at once
// with EAGAIN. The path is matched as bound, and made absolute.
func UnixListener(path string) (ListenerStat, error) {
	want := map[string]bool{path: true}
	if abs, err := filepath.Abs(path); err == nil {
		want[abs] = true
	}
	req := make([]byte, unix.NLMSG_HDRLEN+unixDiagReqSize)
	ne := binary.NativeEndian
	body := req[unix.NLMSG_HDRLEN:]
	body[0] = unix.AF_UNIX
	ne.PutUint32(body[4:8], 1<<tcpListen)
	ne.PutUint32(body[12:16], udiagShowName|udiagShowRQLen)
	var st ListenerStat
	found := false
	err := sockDiagDump(req, func(m []byte) {
		if found || len(m) < unixDiagMsgSize || m[2] != tcpListen {
			return
		}
		var name string
		var rq ListenerStat
		eachAttr(m[unixDiagMsgSize:], func(typ uint16, data []byte) {
			switch typ {
			case unixDiagName:
				// A path's bound name ends in its NUL (an abstract
				// name starts with one).
				name = strings.TrimRight(string(data), "\x00")
			case unixDiagRQLen:
				if len(data) >= 8 {
					rq.Queued, rq.Backlog = int(ne.Uint32(data[0:4])), int(ne.Uint32(data[4:8]))
				}
			}
		})
		if name != "" && want[name] {
			st, found = rq, true
		}
	})
	if err != nil {
		return ListenerStat{}, err
	}
	if !found {
		return ListenerStat{}, fmt.Errorf("sockets: no Unix socket listening on %s", path)
	}
	return st, nil
}

// dumpTCP asks the kernel, through netlink sock_diag, for the TCP sockets
// of family in the states of the bit mask states that pass the filter
// bytecode bc (nil: all), and calls each with every inet_diag_msg body (valid
// during the call only).
func dumpTCP(family uint8, states uint32, bc []byte, each func(msg []byte)) error {
	return dumpTCPExt(family, 0, states, bc, each)
}

// dumpTCPExt is dumpTCP asking also for the extensions of the bit mask ext
// (1 << (INET_DIAG_x - 1)), which follow each inet_diag_msg as attributes.
func dumpTCPExt(family, ext uint8, states uint32, bc []byte, each func(msg []byte)) error {
	size := unix.NLMSG_HDRLEN + inetDiagReqSize
	if bc != nil {
		size += unix.SizeofNlAttr + len(bc)
	}
	req := make([]byte, size)
	ne := binary.NativeEndian
	body := req[unix.NLMSG_HDRLEN:]
	body[0] = family
	body[1] = unix.IPPROTO_TCP
	body[2] = ext
	ne.PutUint32(body[4:8], states)
	if bc != nil {
		attr := body[inetDiagReqSize:]
		ne.PutUint16(attr[0:2], uint16(unix.SizeofNlAttr+len(bc)))
		ne.PutUint16(attr[2:4], inetDiagReqBytecode)
		copy(attr[unix.SizeofNlAttr:], bc)
	}
	return sockDiagDump(req, each)
}

// sockDiagDump sends req (a netlink header's room, then a sock_diag request
// body) as a SOCK_DIAG_BY_FAMILY dump and calls each with every answer's
// body (valid during the call only).
func sockDiagDump(req []byte, each func(msg []byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("sockets: sock_diag: %w", err)
	}
	defer unix.Close(fd)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:4], uint32(len(req)))
	ne.PutUint16(req[4:6], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:8], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:12], 1)
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
