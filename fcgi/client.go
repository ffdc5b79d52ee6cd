package fcgi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// RequestID is the request id of every request the load client sends: it
// never multiplexes, so one id is enough.
const RequestID = 1

// DefaultTimeout bounds a request (dial to last byte) when Config.Timeout is
// zero: 30 s, ab's default.
const DefaultTimeout = 30 * time.Second

// MaxHeaderBlock is the largest CGI header block, in bytes (64 KiB), blank
// line included, accepted at the start of STDOUT; a longer one is a Protocol
// failure.
const MaxHeaderBlock = 64 << 10

// readBufSize is the client's read buffer, in bytes: one whole record of the
// largest size fits, so an END_REQUEST never straddles a compaction.
const readBufSize = 64<<10 + HeaderLen + 256

// serverCap bounds the Server header value kept per client, in bytes.
const serverCap = 64

// Config describes the request the load client sends.
type Config struct {
	// Target is where to connect and what to ask for (path and query).
	Target sockets.Target
	// Method is the request method; "" means GET.
	Method string
	// Headers are HTTP request headers (from -H) in order. Each becomes an
	// HTTP_* param (upper case, '-' as '_'), except Content-Type and
	// Content-Length, which set CONTENT_TYPE and CONTENT_LENGTH. A repeated
	// header is joined with ", ".
	Headers [][2]string
	// Body is the request body, sent as STDIN.
	Body []byte
	// ContentType is CONTENT_TYPE; a Content-Type header overrides it.
	ContentType string
	// DocumentRoot is DOCUMENT_ROOT, made absolute; SCRIPT_FILENAME is
	// DocumentRoot joined with the request path. "" means "/".
	DocumentRoot string
	// Params are NAME=VALUE overrides applied last: a param of the same
	// name is replaced in place, others are appended. An empty value is
	// still sent.
	Params [][2]string
	// KeepAlive sets FCGI_KEEP_CONN and reuses the connection.
	KeepAlive bool
	// Dialer, when not nil, replaces the target's own address: a cluster
	// of upstreams (see sockets.NewClusterDialer).
	Dialer *sockets.Dialer
	// Timeout bounds one request, dial to last byte; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Verbose, when not nil, receives the request head (once per Do) and
	// every response head, each in one Write call.
	Verbose io.Writer
	// Mix, when not empty, are the requests of a mix (--targets), each a
	// whole Config of its own (its Target's path and query, method,
	// headers, body, document root and params; KeepAlive that of the
	// run): every one is encoded once, and a client sends Mix[r.Target]
	// for each load.Result r. The Config's own request is then not sent;
	// its Target's address, Dialer, Timeout and Verbose still apply.
	Mix []Config
}

// Params returns the CGI/1.1 params, in order, that a web server front end
// sends for cfg: REQUEST_METHOD, SCRIPT_FILENAME, SCRIPT_NAME, REQUEST_URI,
// DOCUMENT_URI, DOCUMENT_ROOT, QUERY_STRING, SERVER_PROTOCOL, SERVER_NAME,
// SERVER_PORT, REMOTE_ADDR, REMOTE_PORT, GATEWAY_INTERFACE, SERVER_SOFTWARE,
// CONTENT_TYPE, CONTENT_LENGTH, HTTP_HOST and the HTTP_* of cfg.Headers, then
// cfg.Params as overrides.
func Params(cfg Config) [][2]string {
	t := cfg.Target
	method := cfg.Method
	if method == "" {
		method = "GET"
	}
	path := t.Path
	if path == "" {
		path = "/"
	}
	decoded, err := url.PathUnescape(path)
	if err != nil {
		decoded = path
	}
	root := "/"
	if cfg.DocumentRoot != "" {
		root = filepath.Clean(cfg.DocumentRoot)
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
	}
	port := t.Port
	if port == "" {
		port = "80"
	}
	contentLength := ""
	if len(cfg.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		contentLength = strconv.Itoa(len(cfg.Body))
	}
	p := [][2]string{
		{"REQUEST_METHOD", method},
		{"SCRIPT_FILENAME", filepath.Join(root, decoded)},
		{"SCRIPT_NAME", decoded},
		{"REQUEST_URI", t.RequestURI()},
		{"DOCUMENT_URI", decoded},
		{"DOCUMENT_ROOT", root},
		{"QUERY_STRING", t.RawQuery},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"SERVER_NAME", t.Host},
		{"SERVER_PORT", port},
		{"REMOTE_ADDR", "127.0.0.1"},
		{"REMOTE_PORT", "0"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "backbench"},
		{"CONTENT_TYPE", cfg.ContentType},
		{"CONTENT_LENGTH", contentLength},
		{"HTTP_HOST", t.HostHeader()},
	}
	index := func(name string) int {
		for i := range p {
			if p[i][0] == name {
				return i
			}
		}
		return -1
	}
	seen := map[string]bool{}
	for _, h := range cfg.Headers {
		name := headerParam(h[0])
		i := index(name)
		switch {
		case i < 0:
			p = append(p, [2]string{name, h[1]})
		case seen[name] && strings.HasPrefix(name, "HTTP_") && name != "HTTP_HOST":
			p[i][1] += ", " + h[1]
		default:
			p[i][1] = h[1]
		}
		seen[name] = true
	}
	for _, o := range cfg.Params {
		if i := index(o[0]); i >= 0 {
			p[i][1] = o[1]
		} else {
			p = append(p, o)
		}
	}
	return p
}

// headerParam maps an HTTP header name to its CGI param name.
func headerParam(h string) string {
	b := make([]byte, 0, len(h)+5)
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c == '-':
			c = '_'
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	switch s := string(b); s {
	case "CONTENT_TYPE", "CONTENT_LENGTH":
		return s
	default:
		return "HTTP_" + s
	}
}

// EncodeRequest returns the whole request of cfg as it goes on the wire:
// BEGIN_REQUEST (role RESPONDER, FCGI_KEEP_CONN when cfg.KeepAlive), the
// PARAMS stream, an empty PARAMS, the body as STDIN and an empty STDIN, all
// with request id RequestID.
func EncodeRequest(cfg Config) []byte {
	var flags uint8
	if cfg.KeepAlive {
		flags = FlagKeepConn
	}
	pairs := AppendPairs(nil, Params(cfg))
	b := AppendBeginRequest(nil, RequestID, RoleResponder, flags)
	if len(pairs) > 0 {
		b = AppendRecord(b, TypeParams, RequestID, pairs)
	}
	b = AppendRecord(b, TypeParams, RequestID, nil)
	if len(cfg.Body) > 0 {
		b = AppendRecord(b, TypeStdin, RequestID, cfg.Body)
	}
	return AppendRecord(b, TypeStdin, RequestID, nil)
}

func verboseRequest(cfg Config) []byte {
	var b bytes.Buffer
	flags := "0"
	if cfg.KeepAlive {
		flags = "KEEP_CONN"
	}
	fmt.Fprintf(&b, "> BEGIN_REQUEST id=%d role=RESPONDER flags=%s\n", RequestID, flags)
	for _, p := range Params(cfg) {
		fmt.Fprintf(&b, "> PARAMS %s=%s\n", p[0], p[1])
	}
	fmt.Fprintf(&b, "> STDIN %d bytes\n>\n", len(cfg.Body))
	return b.Bytes()
}

// NewFactory checks cfg, encodes its request once and returns a factory of
// load Clients that all send those bytes. Each Client owns one connection
// and its own read buffer (about 64 KiB).
func NewFactory(cfg Config) (load.ClientFactory, error) {
	switch cfg.Target.Network {
	case "tcp", "unix":
	default:
		return nil, fmt.Errorf("fcgi: unsupported network %q (want tcp or unix)", cfg.Target.Network)
	}
	if strings.ContainsAny(cfg.Method, " \t\r\n") {
		return nil, fmt.Errorf("fcgi: bad method %q", cfg.Method)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("fcgi: negative timeout %v", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	one := []Config{cfg}
	if len(cfg.Mix) > 0 {
		one = cfg.Mix
	}
	for i, m := range cfg.Mix {
		if len(m.Mix) > 0 {
			return nil, errors.New("fcgi: a mix's request has a mix of its own")
		}
		if strings.ContainsAny(m.Method, " \t\r\n") {
			return nil, fmt.Errorf("fcgi: request %d of the mix: bad method %q", i+1, m.Method)
		}
	}
	reqs, err := encodeRequests(one, cfg.Verbose != nil)
	if err != nil {
		return nil, err
	}
	dialer := cfg.Dialer
	if dialer == nil {
		dialer = sockets.NewDialer(cfg.Target, 0)
	}
	return func(ctx context.Context) (load.Client, error) {
		c := &client{keepAlive: cfg.KeepAlive, verbose: cfg.Verbose, reqs: reqs, mix: len(reqs.at) > 1} // buf: at the first request (see Do)
		c.Loop = sockets.Loop{Ctx: ctx, Dialer: dialer, Timeout: cfg.Timeout,
			Verbose: cfg.Verbose, Prefix: "fcgi: "}
		reqs.use(&c.Loop, 0)
		c.Init()
		return c, nil
	}, nil
}

// requests are a run's requests as they go on the wire, each encoded once
// and all back to back in one buffer: the one request of the run, or every
// request of a mix. A client picks a mix's request by its index into a
// small array of spans, and the bytes it writes all come from one
// allocation, not from one of 1,000 scattered over the heap.
type requests struct {
	buf  []byte // every request, back to back
	vbuf []byte // their verbose forms, back to back (empty without Verbose)
	at   []span // request i is buf[at[i].start:at[i].end]
}

// span is one request's place in requests.buf and that of its verbose form
// in vbuf: 16 bytes, four to a cache line.
type span struct {
	start, end   uint32 // the request: buf[start:end]
	vstart, vend uint32 // its verbose form: vbuf[vstart:vend]
}

// maxRequests bounds the bytes of a run's requests together (the spans'
// offsets are 32-bit): 4 GiB - 1.
const maxRequests = 1<<32 - 1

// encodeRequests encodes the requests of cfgs once, into one buffer, and
// their verbose forms into another when verbose.
func encodeRequests(cfgs []Config, verbose bool) (requests, error) {
	var total, vtotal int64
	reqs, vreqs := make([][]byte, len(cfgs)), make([][]byte, len(cfgs))
	for i, cfg := range cfgs {
		reqs[i] = EncodeRequest(cfg)
		total += int64(len(reqs[i]))
		if verbose {
			vreqs[i] = verboseRequest(cfg)
			vtotal += int64(len(vreqs[i]))
		}
	}
	if total > maxRequests || vtotal > maxRequests {
		return requests{}, fmt.Errorf("fcgi: the requests add up to more than %d bytes", int64(maxRequests))
	}
	q := requests{buf: make([]byte, 0, total), vbuf: make([]byte, 0, vtotal), at: make([]span, len(cfgs))}
	for i := range cfgs {
		s := span{start: uint32(len(q.buf)), vstart: uint32(len(q.vbuf))}
		q.buf = append(q.buf, reqs[i]...)
		q.vbuf = append(q.vbuf, vreqs[i]...)
		s.end, s.vend = uint32(len(q.buf)), uint32(len(q.vbuf))
		q.at[i] = s
	}
	return q, nil
}

// use makes request i of q the one that l sends next.
func (q *requests) use(l *sockets.Loop, i int) {
	s := q.at[i]
	l.Request = q.buf[s.start:s.end:s.end]
	l.VerboseRequest = q.vbuf[s.vstart:s.vend:s.vend]
}

// client is one worker's connection: the shared exchange loop and the
// FastCGI response parser's state. Fields after buf are per-request state.
type client struct {
	sockets.Loop
	keepAlive bool
	verbose   io.Writer
	reqs      requests // the requests, encoded once: one, or a mix's
	mix       bool     // a mix: Do sends the request of each Result's Target

	buf    []byte // read buffer; unread bytes are buf[r:w]
	r, w   int
	hdr    []byte // CGI header block when it spans records
	scan   int    // start of the first incomplete line in hdr
	inBody bool   // the CGI header block has been read
	server [serverCap]byte

	stderrSeen bool // the run's first STDERR content was kept
	stderr     [stderrCap]byte
}

// stderrCap bounds the STDERR sample a client keeps (load.Result.Stderr).
const stderrCap = 256

// Do sends the request and reads the response; see load.Client.
func (c *client) Do(r *load.Result) {
	if c.buf == nil {
		// The buffer is taken at the worker's first request, not when
		// the run makes its clients: a run holds buffers only for the
		// workers that get to send.
		c.buf = make([]byte, readBufSize)
		c.Loop.Buf = c.buf
	}
	if c.mix {
		// The runner chose the request by its index.
		c.reqs.use(&c.Loop, r.Target)
	}
	c.Loop.Do(r, c)
}

// more reads once into the free end of the buffer.
func (c *client) more(r *load.Result) error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	n, err := c.Read(r, c.buf[c.w:])
	c.w += n
	return err
}

// fill makes sure need bytes are buffered, compacting when they would not
// fit after c.r.
func (c *client) fill(r *load.Result, need int) error {
	if len(c.buf)-c.r < need {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	for c.w-c.r < need {
		if err := c.more(r); err != nil {
			return err
		}
	}
	return nil
}

// ReadResponse reads records up to END_REQUEST; see sockets.ResponseReader.
func (c *client) ReadResponse(r *load.Result) (load.ErrClass, error) {
	c.r, c.w = 0, 0
	c.hdr, c.scan, c.inBody = c.hdr[:0], 0, false
	for {
		if err := c.fill(r, HeaderLen); err != nil {
			return c.readFailed(r, err)
		}
		h, _ := ParseHeader(c.buf[c.r:])
		if h.Version != Version1 {
			return load.Protocol, fmt.Errorf("fcgi: bad record version %d", h.Version)
		}
		if h.ID != RequestID {
			return load.Protocol, fmt.Errorf("fcgi: %s record for request id %d, want %d", h.Type, h.ID, RequestID)
		}
		c.r += HeaderLen
		switch h.Type {
		case TypeStdout, TypeStderr:
			n := int(h.ContentLength)
			for n > 0 {
				if c.r == c.w {
					if err := c.more(r); err != nil {
						return c.readFailed(r, err)
					}
				}
				k := min(n, c.w-c.r)
				if h.Type == TypeStderr {
					r.StderrBytes += int64(k)
					if !c.stderrSeen {
						c.stderrSeen = true
						r.Stderr = c.stderr[:copy(c.stderr[:], c.buf[c.r:c.r+k])]
					}
				} else if err := c.stdout(r, c.buf[c.r:c.r+k]); err != nil {
					return load.Protocol, err
				}
				c.r += k
				n -= k
			}
			if err := c.skip(r, int(h.PaddingLength)); err != nil {
				return c.readFailed(r, err)
			}
		case TypeEndRequest:
			if h.ContentLength < 8 {
				return load.Protocol, fmt.Errorf("fcgi: END_REQUEST body of %d bytes, want 8", h.ContentLength)
			}
			need := int(h.ContentLength) + int(h.PaddingLength)
			if err := c.fill(r, need); err != nil {
				return c.readFailed(r, err)
			}
			_, ps, _ := ParseEndRequest(c.buf[c.r:])
			c.r += need
			if ps != StatusRequestComplete {
				return load.Protocol, errors.New("fcgi: END_REQUEST " + ps.String())
			}
			if !c.inBody {
				return load.Protocol, errors.New("fcgi: STDOUT ended inside the CGI headers")
			}
			// Bytes after END_REQUEST would be misread as the next
			// response: drop the connection rather than trust it.
			// Without FCGI_KEEP_CONN the server closes: the loop waits
			// for that close.
			r.KeepAlive = c.keepAlive && c.r == c.w
			r.Unsolicited = int64(c.w - c.r)
			c.PeerCloses = !c.keepAlive
			return load.OK, nil
		default:
			return load.Protocol, fmt.Errorf("fcgi: unexpected %s record", h.Type)
		}
	}
}

// skip discards n buffered or incoming bytes.
func (c *client) skip(r *load.Result, n int) error {
	for n > 0 {
		if c.r == c.w {
			if err := c.more(r); err != nil {
				return err
			}
		}
		k := min(n, c.w-c.r)
		c.r += k
		n -= k
	}
	return nil
}

// readFailed words a read error met in a response.
func (c *client) readFailed(r *load.Result, err error) (load.ErrClass, error) {
	switch {
	case (err == io.EOF || err == io.ErrUnexpectedEOF) && r.BytesRead == 0:
		return sockets.IOError(load.Receive, err, "fcgi: connection closed with no response")
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return sockets.IOError(load.Receive, err, "fcgi: connection closed before END_REQUEST")
	}
	return c.IOFailure(load.Receive, "read", err)
}

// stdout consumes STDOUT content: first the CGI header block, then body
// bytes, which are only counted.
func (c *client) stdout(r *load.Result, chunk []byte) error {
	if c.inBody {
		r.BodyBytes += int64(len(chunk))
		return nil
	}
	if len(c.hdr) == 0 {
		// Fast path: the whole block is in this chunk; parse it in place.
		end, body, next := FindHeaderEnd(chunk, 0)
		if end >= 0 && body <= MaxHeaderBlock {
			r.BodyBytes += int64(len(chunk) - body)
			return c.head(r, chunk[:end])
		}
		c.scan = next
	} else {
		from := c.scan
		chunk = c.appendHdr(chunk)
		end, body, next := FindHeaderEnd(c.hdr, from)
		if end >= 0 {
			r.BodyBytes += int64(len(c.hdr)-body) + int64(len(chunk))
			return c.head(r, c.hdr[:end])
		}
		c.scan = next
		if len(chunk) == 0 {
			return nil
		}
	}
	chunk = c.appendHdr(chunk)
	if len(chunk) > 0 || len(c.hdr) >= MaxHeaderBlock {
		return fmt.Errorf("fcgi: CGI header block over %d bytes", MaxHeaderBlock)
	}
	return nil
}

// appendHdr appends as much of chunk to c.hdr as MaxHeaderBlock allows and
// returns the rest.
func (c *client) appendHdr(chunk []byte) []byte {
	take := min(len(chunk), MaxHeaderBlock-len(c.hdr))
	c.hdr = append(c.hdr, chunk[:take]...)
	return chunk[take:]
}

// head applies a complete CGI header block (without its blank line).
func (c *client) head(r *load.Result, block []byte) error {
	c.inBody = true
	status, server, err := ParseCGIHead(block)
	if err != nil {
		return err
	}
	r.Status = status
	if server != nil {
		r.Server = c.server[:copy(c.server[:], server)]
	}
	if c.verbose != nil {
		c.writeVerboseHead(block)
	}
	return nil
}

func (c *client) writeVerboseHead(block []byte) {
	out := make([]byte, 0, len(block)+64)
	for len(block) > 0 {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		out = append(out, "< "...)
		out = append(out, bytes.TrimSuffix(line, []byte("\r"))...)
		out = append(out, '\n')
	}
	out = append(out, "<\n"...)
	c.verbose.Write(out)
}

// FindHeaderEnd looks for the blank line that ends a CGI header block in b,
// scanning from from, which must be the start of a line. It returns the
// offset of the blank line (the block is b[:end]) and of the first body
// byte; or end = -1, body = -1 and next, the start of the first incomplete
// line, from which to resume once more bytes are appended. Lines end in
// "\n" or "\r\n".
func FindHeaderEnd(b []byte, from int) (end, body, next int) {
	ls := from
	for {
		j := bytes.IndexByte(b[ls:], '\n')
		if j < 0 {
			return -1, -1, ls
		}
		j += ls
		if j == ls || (j == ls+1 && b[ls] == '\r') {
			return ls, j + 1, j + 1
		}
		ls = j + 1
	}
}

// ParseCGIHead parses a CGI response header block (RFC 3875 section 6.3),
// without its blank line: "Name: value" lines ending in "\n" or "\r\n". It
// returns the status (from "Status: 404 Not Found"; 302 when only Location
// is present; else 200) and the Server value up to its first space or
// control byte (a slice of block, nil when absent). It does not allocate
// unless it fails.
func ParseCGIHead(block []byte) (status int, server []byte, err error) {
	status = 0
	location := false
	for len(block) > 0 {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, nil, fmt.Errorf("fcgi: CGI header line without a name and colon: %q", trunc(line))
		}
		name := bytes.TrimRight(line[:colon], " \t")
		value := bytes.Trim(line[colon+1:], " \t")
		switch {
		case asciiEqualFold(name, "Status"):
			code, ok := parseStatus(value)
			if !ok {
				return 0, nil, fmt.Errorf("fcgi: bad CGI Status header %q", trunc(value))
			}
			status = code
		case asciiEqualFold(name, "Server"):
			end := 0
			for end < len(value) && value[end] > ' ' && value[end] != 0x7f {
				end++
			}
			server = value[:end]
		case asciiEqualFold(name, "Location"):
			location = true
		}
	}
	if status == 0 {
		status = 200
		if location {
			status = 302
		}
	}
	return status, server, nil
}

// parseStatus reads the three-digit code at the start of a Status value,
// which must be followed by nothing or a space.
func parseStatus(v []byte) (int, bool) {
	if len(v) < 3 || (len(v) > 3 && v[3] != ' ' && v[3] != '\t') {
		return 0, false
	}
	code := 0
	for _, d := range v[:3] {
		if d < '0' || d > '9' {
			return 0, false
		}
		code = code*10 + int(d-'0')
	}
	return code, code >= 100
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func trunc(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}
