package httpprobe

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/sockets"
)

// DefaultTimeout bounds one request (dial to last byte) when Config.Timeout
// is 0: 30 seconds, ab's default.
const DefaultTimeout = 30 * time.Second

// Config describes the request a client sends and how.
type Config struct {
	// Target is where to connect and what to ask for; its scheme must be
	// http or https (https needs a Dialer with TLS).
	Target sockets.Target
	// Dialer, when not nil, replaces the target's own address: a cluster
	// of upstreams and/or TLS (see sockets.NewClusterDialer).
	Dialer *sockets.Dialer
	// Method is the request method; "" means GET.
	Method string
	// Headers are extra request headers, name and value, in order (from
	// -H). A header named like a default one (Host, User-Agent, Accept,
	// Connection, Content-Type, Content-Length) replaces it in place.
	Headers [][2]string
	// Body is the request body; nil sends none. A non-nil body, even
	// empty, sends Content-Length and Content-Type.
	Body []byte
	// ContentType is the Content-Type of the body; "" means text/plain (as
	// ab does).
	ContentType string
	// KeepAlive asks for persistent connections (ab's -k). Without it the
	// client closes the connection after each response.
	KeepAlive bool
	// HTTP10 sends HTTP/1.0 requests, as ab does; the default is HTTP/1.1.
	HTTP10 bool
	// Timeout bounds one request, dial to last byte; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Verbose, when not nil, receives the request head once per request and
	// every response head, each in one Write call. The caller makes it safe
	// for concurrent use.
	Verbose io.Writer
	// Mix, when not empty, are the requests of a mix (--targets), each a
	// whole Config of its own (its Target, method, headers and body; its
	// KeepAlive, HTTP10 and Timeout those of the run): every one is
	// serialized once, and a client sends Mix[r.Target] for each
	// load.Result r. The Config's own request is then not sent; its
	// Target, Dialer, Timeout, KeepAlive and Verbose still apply.
	Mix []Config
}

func (cfg *Config) method() string {
	if cfg.Method == "" {
		return "GET"
	}
	return cfg.Method
}

// RequestHead returns the request head that a client made from cfg sends:
// the request line, the header lines and the blank line, without the body.
func RequestHead(cfg Config) (string, error) {
	if cfg.Target.Scheme != sockets.SchemeHTTP && cfg.Target.Scheme != sockets.SchemeHTTPS {
		return "", fmt.Errorf("httpprobe: target scheme %q is not http or https", cfg.Target.Scheme)
	}
	method := cfg.method()
	if !isToken(method) {
		return "", fmt.Errorf("httpprobe: bad method %q", method)
	}
	uri := cfg.Target.RequestURI()
	if uri == "" || strings.ContainsAny(uri, " \t\r\n") {
		return "", fmt.Errorf("httpprobe: bad request URI %q", uri)
	}
	for _, h := range cfg.Headers {
		if !isToken(h[0]) {
			return "", fmt.Errorf("httpprobe: bad header name %q", h[0])
		}
		if strings.ContainsAny(h[1], "\r\n\x00") {
			return "", fmt.Errorf("httpprobe: header %s: value has a CR, LF or NUL byte", h[0])
		}
	}

	var b strings.Builder
	b.WriteString(method)
	b.WriteByte(' ')
	b.WriteString(uri)
	if cfg.HTTP10 {
		b.WriteString(" HTTP/1.0\r\n")
	} else {
		b.WriteString(" HTTP/1.1\r\n")
	}
	used := make([]bool, len(cfg.Headers))
	// header writes the default name: value, or in its place every user
	// header of that name.
	header := func(name, value string) {
		replaced := false
		for i, h := range cfg.Headers {
			if strings.EqualFold(h[0], name) {
				writeHeader(&b, h[0], h[1])
				used[i], replaced = true, true
			}
		}
		if !replaced && value != "" {
			writeHeader(&b, name, value)
		}
	}
	header("Host", cfg.Target.HostHeader())
	header("User-Agent", "backbench")
	header("Accept", "*/*")
	header("Connection", defaultConnection(cfg))
	if cfg.Body != nil {
		ct := cfg.ContentType
		if ct == "" {
			ct = "text/plain"
		}
		header("Content-Type", ct)
		header("Content-Length", strconv.Itoa(len(cfg.Body)))
	}
	for i, h := range cfg.Headers {
		if !used[i] {
			writeHeader(&b, h[0], h[1])
		}
	}
	b.WriteString("\r\n")
	return b.String(), nil
}

// defaultConnection is the Connection header sent unless -H replaces it:
// keep-alive for HTTP/1.0 with keep-alive, close for HTTP/1.1 without, none
// otherwise (each version's default then says it).
func defaultConnection(cfg Config) string {
	switch {
	case cfg.HTTP10 && cfg.KeepAlive:
		return "keep-alive"
	case !cfg.HTTP10 && !cfg.KeepAlive:
		return "close"
	}
	return ""
}

// ConnectionHeader returns the value of the Connection header that a client
// made from cfg sends ("" when it sends none): the default of RequestHead,
// or the values of the -H headers that replace it, joined by ", ".
func ConnectionHeader(cfg Config) string {
	var vals []string
	for _, h := range cfg.Headers {
		if strings.EqualFold(h[0], "Connection") {
			vals = append(vals, h[1])
		}
	}
	if vals == nil {
		return defaultConnection(cfg)
	}
	return strings.Join(vals, ", ")
}

// BuildRequest returns the whole request a client made from cfg sends: the
// head from RequestHead, then the body.
func BuildRequest(cfg Config) ([]byte, error) {
	head, err := RequestHead(cfg)
	if err != nil {
		return nil, err
	}
	req := make([]byte, 0, len(head)+len(cfg.Body))
	req = append(req, head...)
	return append(req, cfg.Body...), nil
}

func writeHeader(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}
