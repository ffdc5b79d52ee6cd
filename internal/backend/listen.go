package backend

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// maxSocketPath is the longest path a Unix socket address takes on Linux
// (sun_path is 108 bytes, with its terminating NUL).
const maxSocketPath = 107

// Listening reports whether a socket in LISTEN state at network ("tcp",
// "tcp4", "tcp6" or "unix") and addr exists, from the kernel's tables
// (/proc/net/tcp, tcp6 and unix), and returns the inodes of those sockets
// (none: nothing listens there). It never connects to addr. A TCP listener
// on the wildcard address (0.0.0.0 or ::) of addr's port counts, as it
// accepts connections to addr; a host name is resolved. A Unix socket's
// path is compared as the kernel shows it, as it was given to bind.
func Listening(network, addr string) (inodes []uint64, err error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
		return listeningTCP(addr)
	case "unix":
		return listeningUnix(addr)
	}
	return nil, fmt.Errorf("backend: unknown network %q (tcp or unix)", network)
}

// listeningTCP reads /proc/net/tcp and tcp6 for LISTEN sockets at addr.
func listeningTCP(addr string) ([]uint64, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("backend: bad port in %q", addr)
	}
	var ips []net.IP
	switch ip := net.ParseIP(host); {
	case host == "":
		ips = []net.IP{net.IPv4zero}
	case ip != nil:
		ips = []net.IP{ip}
	default:
		if ips, err = net.LookupIP(host); err != nil {
			return nil, fmt.Errorf("backend: %w", err)
		}
	}
	var out []uint64
	found := false
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) { // no IPv6
				continue
			}
			return nil, err
		}
		found = true
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(fs) < 10 || fs[3] != "0A" { // TCP_LISTEN
				continue
			}
			ip, p, ok := parseHexAddr(fs[1])
			if !ok || p != uint16(port) || !coversAny(ip, ips) {
				continue
			}
			if ino, err := strconv.ParseUint(fs[9], 10, 64); err == nil {
				out = append(out, ino)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, errors.New("backend: no /proc/net/tcp to read")
	}
	return out, nil
}

// coversAny reports whether a listener on ip accepts connections to one of
// targets: the same address, or a wildcard of a family that takes it.
func coversAny(ip net.IP, targets []net.IP) bool {
	for _, t := range targets {
		switch {
		case ip.Equal(t):
			return true
		case ip.Equal(net.IPv4zero) && t.To4() != nil:
			return true
		case ip.Equal(net.IPv6unspecified): // a dual-stack listener takes both
			return true
		}
	}
	return false
}

// parseHexAddr parses a /proc/net/tcp address, "0100007F:1F90": the
// address as 32-bit words in the machine's byte order, the port in hex.
func parseHexAddr(s string) (net.IP, uint16, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok || (len(h) != 8 && len(h) != 32) {
		return nil, 0, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, 0, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, 0, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return ip, uint16(port), true
}

// listeningUnix reads /proc/net/unix for listening sockets bound to path.
func listeningUnix(path string) ([]uint64, error) {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := path
	if !strings.HasPrefix(path, "@") {
		want = filepath.Clean(path)
	}
	var out []uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		// Num RefCount Protocol Flags Type St Inode Path
		fs := strings.Fields(line)
		if len(fs) < 8 {
			continue
		}
		flags, err := strconv.ParseUint(fs[3], 16, 32)
		if err != nil || flags&0x10000 == 0 || fs[5] != "01" { // __SO_ACCEPTCON, SS_UNCONNECTED
			continue
		}
		// The path is the rest of the line after the inode: it may hold spaces.
		rest := line
		for range 7 {
			rest = strings.TrimLeft(rest, " ")
			if i := strings.IndexByte(rest, ' '); i >= 0 {
				rest = rest[i:]
			}
		}
		p := strings.TrimLeft(rest, " ")
		if p != want && (strings.HasPrefix(p, "@") || filepath.Clean(p) != want) {
			continue
		}
		if ino, err := strconv.ParseUint(fs[6], 10, 64); err == nil {
			out = append(out, ino)
		}
	}
	return out, sc.Err()
}

// picked holds the addresses PickAddr returned, so that it never returns
// one twice in a process.
var picked struct {
	sync.Mutex
	addrs map[string]bool
}

// lowestPort is the lowest port PickAddr picks from, when the ephemeral
// range leaves room below it.
const lowestPort = 20000

// PickAddr returns an address for a backend of the configuration name.
// For "tcp": 127.0.0.1:PORT, with a port chosen at random below the
// kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), from
// 20000 up when the range leaves room, so that the kernel does not hand it
// to an outgoing connection before the backend binds it; it is checked
// free by binding it and closing. For "unix": dir/NAME.sock, dir made
// absolute (a backend may run in another directory), NAME the name with
// characters other than letters, digits, '.', '_' and '-' replaced, cut
// short, and with a hash of the name when changed, so that two names give
// two paths; an error if the path passes the 107 bytes of a socket
// address. PickAddr never returns an address twice in a process, nor a
// socket path that exists.
func PickAddr(network, dir, name string) (string, error) {
	picked.Lock()
	defer picked.Unlock()
	if picked.addrs == nil {
		picked.addrs = map[string]bool{}
	}
	var addr string
	var err error
	switch network {
	case "tcp", "tcp4":
		addr, err = pickPort()
	case "unix":
		addr, err = pickPath(dir, name)
	default:
		return "", fmt.Errorf("backend: unknown network %q (tcp or unix)", network)
	}
	if err != nil {
		return "", err
	}
	picked.addrs[addr] = true
	return addr, nil
}

// pickPort picks a free 127.0.0.1 port below the ephemeral range.
func pickPort() (string, error) {
	low, high := 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l > 0 && h >= l {
				low, high = l, h
			}
		}
	}
	// The range to pick from: below the ephemeral range, or above it if
	// it starts too low, or any port the kernel gives as a last resort.
	from, to := lowestPort, low // [from, to)
	if to-from < 1000 {
		from = 1024
	}
	if to-from < 100 {
		from, to = high+1, 65536
	}
	if to-from >= 100 {
		for range 100 {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(from+rand.IntN(to-from)))
			if picked.addrs[addr] {
				continue
			}
			if ln, err := net.Listen("tcp4", addr); err == nil {
				ln.Close()
				return addr, nil
			}
		}
	}
	for range 100 {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("backend: no free port: %w", err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !picked.addrs[addr] {
			return addr, nil
		}
	}
	return "", errors.New("backend: no free port")
}

// maxSockName is the longest NAME of a socket path PickAddr makes.
const maxSockName = 40

// pickPath makes dir/NAME.sock of a configuration's name.
func pickPath(dir, name string) (string, error) {
	if dir == "" {
		return "", errors.New("backend: no directory for the Unix socket")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("backend: %w", err)
	}
	safe := safeName(name)
	for i := 1; i <= 1000; i++ {
		n := safe
		if i > 1 {
			n += "-" + strconv.Itoa(i)
		}
		p := filepath.Join(abs, n+".sock")
		if len(p) > maxSocketPath {
			return "", fmt.Errorf("backend: the socket path %s is %d bytes, more than the %d a socket address takes: use a shorter directory", p, len(p), maxSocketPath)
		}
		if picked.addrs[p] {
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("backend: no free socket path for %q in %s", name, abs)
}

// safeName makes a file name of a configuration's name: letters, digits,
// '.', '_' and '-' only, at most maxSockName bytes, and with a hash of the
// name when it had to be changed.
func safeName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-.")
	if s == name && len(s) <= maxSockName {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	sum := strconv.FormatUint(uint64(h.Sum32()), 36)
	if s == "" {
		s = "backend"
	}
	if len(s) > maxSockName-len(sum)-1 {
		s = strings.TrimRight(s[:maxSockName-len(sum)-1], "-.")
	}
	return s + "-" + sum
}
