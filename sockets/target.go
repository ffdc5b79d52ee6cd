// Package sockets parses benchmark targets and dials them: TCP addresses and
// Unix sockets, in URL form (http://host:port/path, fcgi://host:port/path),
// in nginx's Unix form (fcgi://unix:/run/php/fpm.sock:/index.php), or with
// curl's --unix-socket override. Its Dialer always honours a context and a
// timeout, on TCP and Unix alike, and it names the connection-level failures
// a benchmark meets (refused, missing socket, backlog full, too many open
// files, ephemeral ports exhausted). It also holds the client's process-level
// knobs: the RLIMIT_NOFILE raise and the scheduling policy of its threads;
// and what the kernel says of a full TCP listen queue: the TcpExt
// ListenOverflows and ListenDrops counters, a listening socket's backlog
// (netlink sock_diag, as ss -ltn reads it), and setting a backlog. And the
// request loop that the FastCGI and HTTP load clients share on a worker's
// connection (Loop): dial or reuse, write, read with the protocol's parser,
// redial a dead kept connection once, classify failures.
//
// It is the only package of the module that imports golang.org/x/sys/unix.
package sockets

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/load"
)

// Schemes understood by ParseTarget from the start; internal/protocol
// registers more with RegisterScheme.
const (
	SchemeHTTP  = "http"
	SchemeHTTPS = "https"
	SchemeFCGI  = "fcgi"
)

// scheme is a URL scheme ParseTarget accepts: its default port and whether
// its connections are TLS.
type scheme struct {
	name, port string
	tls        bool
}

// schemes are the accepted schemes, in the order error messages name
// them. The three built in are the URL forms this package has always
// parsed (its tests need no registry); RegisterScheme adds more. The table
// is written before any parse (package init of a protocol, or a test's
// setup), so it needs no lock.
var schemes = []scheme{{SchemeHTTP, "80", false}, {SchemeHTTPS, "443", true}, {SchemeFCGI, "9000", false}}

// RegisterScheme makes ParseTarget accept URLs of the scheme name
// (lower case), with port as the default port and tls saying whether its
// connections are TLS. It is called by the protocol registry
// (internal/protocol.Register), before any target is parsed. A name
// already known with the same port and TLS is accepted as it is (the
// built-in schemes); with others, it is an error.
func RegisterScheme(name, port string, tls bool) error {
	if name == "" || strings.ToLower(name) != name || strings.ContainsAny(name, ":/") {
		return fmt.Errorf("sockets: bad scheme name %q", name)
	}
	if s, ok := lookupScheme(name); ok {
		if s.port == port && s.tls == tls {
			return nil
		}
		return fmt.Errorf("sockets: scheme %q is already registered", name)
	}
	schemes = append(schemes, scheme{name, port, tls})
	return nil
}

func lookupScheme(name string) (scheme, bool) {
	for _, s := range schemes {
		if s.name == name {
			return s, true
		}
	}
	return scheme{}, false
}

// schemeList names the accepted schemes joined by sep, the last one by
// last: "http, https or fcgi".
func schemeList(sep, last string) string {
	var b strings.Builder
	for i, s := range schemes {
		switch {
		case i == 0:
		case i == len(schemes)-1:
			b.WriteString(last)
		default:
			b.WriteString(sep)
		}
		b.WriteString(s.name)
	}
	return b.String()
}

// UnknownSchemeError is ParseTarget's text for a scheme it does not
// accept (name as typed), after the "target URL: " prefix; the protocol
// registry says the same of a scheme it has no protocol for.
func UnknownSchemeError(name string) string {
	return fmt.Sprintf("unknown scheme %q (want %s)", name, schemeList(", ", " or "))
}

// Target is a parsed benchmark target: where to connect and what to ask for.
type Target struct {
	// URL is the target as the user typed it.
	URL string
	// Scheme is "http", "https", "fcgi" or a registered scheme, in lower
	// case.
	Scheme string
	// Network is "tcp" or "unix".
	Network string
	// Address is host:port for TCP, the socket path for Unix.
	Address string
	// Host is the host name as typed ("localhost" for nginx-style Unix
	// targets); it becomes the Host header and SERVER_NAME.
	Host string
	// Port is the port as typed or the scheme's default ("" for nginx-style
	// Unix targets).
	Port string
	// Path is the request path, always starting with "/", without query.
	Path string
	// RawQuery is the query string without the "?".
	RawQuery string
}

// DefaultPort returns the port used when a URL of the scheme has none: 80 for
// http, 443 for https and 9000 (php-fpm's usual port) for fcgi; a
// registered scheme's own; 80 for a scheme not known.
func DefaultPort(scheme string) string {
	if s, ok := lookupScheme(scheme); ok {
		return s.port
	}
	return "80"
}

// UsesTLS says whether the target's connections are TLS (https).
func (t Target) UsesTLS() bool { return SchemeUsesTLS(t.Scheme) }

// SchemeUsesTLS says whether the connections of a scheme (in lower case)
// are TLS: https, or a registered TLS scheme; false for a scheme not
// known.
func SchemeUsesTLS(scheme string) bool {
	s, _ := lookupScheme(scheme)
	return s.tls
}

// SchemeOf returns the scheme of a URL as typed, in lower case, as
// ParseTarget reads it: what comes before "://" ("" without one). It does
// not check that the scheme is known, so that a command may pick the
// protocol of a URL it has not parsed yet (a {A..B} port range).
func SchemeOf(raw string) string {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return ""
	}
	return strings.ToLower(raw[:i])
}

// ParseTarget parses a target URL. Accepted forms:
//
//	http://HOST[:PORT]/PATH?QUERY   https://...   fcgi://HOST[:PORT]/PATH?QUERY
//	http://unix:/run/app.sock:/PATH?QUERY        (nginx's form; also fcgi and https)
//
// IPv6 hosts are written in brackets: http://[::1]:8080/.
func ParseTarget(raw string) (Target, error) {
	t := Target{URL: raw, Scheme: SchemeOf(raw)}
	if t.Scheme == "" {
		return t, fmt.Errorf("target %q: want SCHEME://HOST[:PORT]/PATH (schemes: %s)", load.RedactURL(raw), schemeList(", ", ", "))
	}
	i := strings.Index(raw, "://")
	if _, ok := lookupScheme(t.Scheme); !ok {
		return t, fmt.Errorf("target %q: %s", load.RedactURL(raw), UnknownSchemeError(raw[:i]))
	}
	rest := raw[i+3:]
	if strings.HasPrefix(rest, "unix:") {
		// nginx's form: unix:/path/to.sock:/uri. The socket path ends at the
		// first ':' after "unix:"; what follows is the request URI.
		sock := rest[len("unix:"):]
		uri := ""
		if j := strings.IndexByte(sock, ':'); j >= 0 {
			sock, uri = sock[:j], sock[j+1:]
		}
		if sock == "" {
			return t, fmt.Errorf("target %q: empty Unix socket path (want %s://unix:/path/to.sock:/uri)", load.RedactURL(raw), t.Scheme)
		}
		if !strings.HasPrefix(sock, "/") && !strings.HasPrefix(sock, ".") {
			return t, fmt.Errorf("target %q: Unix socket path %q must be absolute or start with ./", load.RedactURL(raw), sock)
		}
		t.Network, t.Address, t.Host = "unix", sock, "localhost"
		return t, t.setURI(uri)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return t, fmt.Errorf("target %q: %v", load.RedactURL(raw), unwrapURLError(err))
	}
	if u.User != nil {
		return t, fmt.Errorf("target %q: user info is not supported (give credentials with -A or -H)", load.RedactURL(raw))
	}
	if u.Fragment != "" {
		return t, fmt.Errorf("target %q: a fragment (#...) is never sent; remove it", load.RedactURL(raw))
	}
	t.Host = u.Hostname()
	if t.Host == "" {
		return t, fmt.Errorf("target %q: missing host", load.RedactURL(raw))
	}
	t.Port = u.Port()
	if t.Port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return t, fmt.Errorf("target %q: empty port", load.RedactURL(raw))
		}
		t.Port = DefaultPort(t.Scheme)
	}
	if p, err := strconv.Atoi(t.Port); err != nil || p < 1 || p > 65535 {
		return t, fmt.Errorf("target %q: bad port %q (want 1-65535)", load.RedactURL(raw), t.Port)
	}
	t.Network, t.Address = "tcp", net.JoinHostPort(t.Host, t.Port)
	t.Path = u.EscapedPath()
	if t.Path == "" {
		t.Path = "/"
	}
	t.RawQuery = u.RawQuery
	if strings.Contains(t.RawQuery, " ") {
		// url.Parse keeps a space of the query as typed; sent, it would
		// split the request line.
		return t, fmt.Errorf("target %q: the query has a space (write it as %%20 or +)", load.RedactURL(raw))
	}
	return t, nil
}

func (t *Target) setURI(uri string) error {
	if uri == "" {
		uri = "/"
	}
	if !strings.HasPrefix(uri, "/") {
		return fmt.Errorf("target %q: request path %q must start with /", load.RedactURL(t.URL), load.RedactQuery(uri))
	}
	if strings.ContainsAny(uri, " \t\r\n#") {
		return fmt.Errorf("target %q: request path %q has a space, control byte or '#'", load.RedactURL(t.URL), load.RedactQuery(uri))
	}
	t.Path, t.RawQuery, _ = strings.Cut(uri, "?")
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// WithUnixSocket returns t reached through the Unix socket at path instead of
// its host and port (curl's --unix-socket); Host and the URI stay as typed.
func (t Target) WithUnixSocket(path string) Target {
	t.Network, t.Address = "unix", path
	return t
}

// ShownURL is the URL as messages and results show it: its credentials
// replaced by load.Redacted (load.RedactURL).
func (t Target) ShownURL() string { return load.RedactURL(t.URL) }

// RequestURI returns the path and, if any, "?" and the query.
func (t Target) RequestURI() string {
	if t.RawQuery == "" {
		return t.Path
	}
	return t.Path + "?" + t.RawQuery
}

// HostHeader returns the value for an HTTP Host header: the host, with the
// port when it is not the scheme's default; "localhost" for nginx-style Unix
// targets.
func (t Target) HostHeader() string {
	h := t.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if t.Port == "" || t.Port == DefaultPort(t.Scheme) {
		return h
	}
	return h + ":" + t.Port
}

// MaxExpanded bounds the number of URLs ExpandPorts makes from one range.
const MaxExpanded = 1024

// ExpandPorts expands one shell-style range "{A..B}" in a URL into one URL
// per number, in order: fcgi://127.0.0.1:{3000..3004}/app gives five URLs, a
// cluster of five workers. A URL without a range is returned alone.
func ExpandPorts(raw string) ([]string, error) {
	i := strings.IndexByte(raw, '{')
	if i < 0 {
		if strings.IndexByte(raw, '}') >= 0 {
			return nil, fmt.Errorf("target %q: '}' without '{'", load.RedactURL(raw))
		}
		return []string{raw}, nil
	}
	j := strings.IndexByte(raw[i:], '}')
	if j < 0 {
		return nil, fmt.Errorf("target %q: '{' without '}'", load.RedactURL(raw))
	}
	j += i
	if strings.ContainsAny(raw[j+1:], "{}") {
		return nil, fmt.Errorf("target %q: only one {A..B} range is allowed", load.RedactURL(raw))
	}
	a, b, ok := strings.Cut(raw[i+1:j], "..")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return nil, fmt.Errorf("target %q: bad range %q (want {LOW..HIGH})", load.RedactURL(raw), raw[i:j+1])
	}
	if hi-lo+1 > MaxExpanded {
		return nil, fmt.Errorf("target %q: range of %d addresses (at most %d)", load.RedactURL(raw), hi-lo+1, MaxExpanded)
	}
	out := make([]string, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		out = append(out, raw[:i]+strconv.Itoa(n)+raw[j+1:])
	}
	return out, nil
}
