package httpprobe

import (
	"bytes"
	"errors"
)

// MaxHeadBytes is the largest response head (status line, header lines and
// the blank line that ends them) that the client accepts, in bytes. A larger
// head is a protocol failure, so memory stays bounded whatever a server sends.
const MaxHeadBytes = 64 << 10

// ErrIncomplete is returned by ParseHead when b does not yet hold a whole
// head (no blank line ends it): read more and call again.
var ErrIncomplete = errors.New("httpprobe: incomplete response head")

// Errors for malformed heads. They are values, so that returning one costs
// no allocation; every one of them means load.Protocol to the client.
var (
	errStatusLine    = errors.New("httpprobe: bad status line")
	errVersion       = errors.New("httpprobe: unsupported HTTP version (want HTTP/1.0 or HTTP/1.1)")
	errStatusCode    = errors.New("httpprobe: bad status code (want 3 digits)")
	errHeaderLine    = errors.New("httpprobe: bad header line")
	errFold          = errors.New("httpprobe: folded (obs-fold) framing header")
	errContentLength = errors.New("httpprobe: bad Content-Length")
	errConflictCL    = errors.New("httpprobe: conflicting Content-Length headers")
	errHeadTooLarge  = errors.New("httpprobe: response head over 64 KiB")
)

// Head is a parsed HTTP/1.x response head. Its byte slices point into the
// buffer given to ParseHead and are valid only as long as that buffer is.
type Head struct {
	// Minor is the minor version of the response: 0 for HTTP/1.0, 1 for
	// HTTP/1.1.
	Minor int
	// Status is the three-digit status code (100 to 999).
	Status int
	// Reason is the reason phrase, possibly empty.
	Reason []byte
	// ContentLength is the Content-Length value in bytes, or -1 when the
	// response has none.
	ContentLength int64
	// TransferEncoding reports that a Transfer-Encoding header was present.
	TransferEncoding bool
	// Chunked reports that the last transfer coding is "chunked", so the body
	// is chunked (RFC 9112 section 7.1).
	Chunked bool
	// ConnClose reports a "close" token in a Connection header.
	ConnClose bool
	// ConnKeepAlive reports a "keep-alive" token in a Connection header.
	ConnKeepAlive bool
	// KeepAliveHeader reports that a Keep-Alive header was present (what ab
	// looks for).
	KeepAliveHeader bool
	// Server is the whole value of the Server header (nil when absent).
	Server []byte
	// Len is the size of the head in bytes, the ending blank line included:
	// the body starts at b[Len].
	Len int
}

// ServerToken returns the Server value up to its first space or control
// byte, as ab prints it ("Apache/2.4.62 (Debian)" gives "Apache/2.4.62").
func (h *Head) ServerToken() []byte {
	for i, c := range h.Server {
		if c <= ' ' || c == 0x7f {
			return h.Server[:i]
		}
	}
	return h.Server
}

// KeepsConn reports whether the server means to keep the connection open
// after this response: HTTP/1.1 unless "Connection: close", HTTP/1.0 only
// with "Connection: keep-alive". It says nothing of the body framing (a
// close-delimited body ends the connection whatever the headers say).
func (h *Head) KeepsConn() bool {
	if h.ConnClose {
		return false
	}
	return h.Minor == 1 || h.ConnKeepAlive
}

// BodyKind is how a response body is delimited (RFC 9112 section 6.3).
type BodyKind uint8

// Body kinds.
const (
	// BodyNone means no body: a response to HEAD, a 1xx, 204 or 304.
	BodyNone BodyKind = iota
	// BodyLength means a body of exactly ContentLength bytes.
	BodyLength
	// BodyChunked means a chunked body.
	BodyChunked
	// BodyClose means a body that ends when the server closes the
	// connection.
	BodyClose
)

// Body returns how the body of this response is delimited; head reports that
// the request method was HEAD.
func (h *Head) Body(head bool) BodyKind {
	switch {
	case head, h.Status < 200, h.Status == 204, h.Status == 304:
		return BodyNone
	case h.Chunked:
		return BodyChunked
	case h.TransferEncoding:
		// A transfer coding other than chunked last: the body runs to
		// the close (RFC 9112 section 6.3, rule 4).
		return BodyClose
	case h.ContentLength >= 0:
		return BodyLength
	}
	return BodyClose
}

// ParseHead parses the response head at the start of b into h and returns
// its length in bytes (h.Len). It returns ErrIncomplete when b holds no whole
// head yet, and another error when the head is malformed. It does not
// allocate and does not limit the size: callers bound b (see MaxHeadBytes).
//
// Lines may end in CRLF or a bare LF. Header names are matched without
// regard to case. Folded header lines (obs-fold) are ignored, except after
// Content-Length, Transfer-Encoding or Connection, where they are an error.
func ParseHead(b []byte, h *Head) (int, error) {
	end, _ := findHeadEnd(b, 0)
	if end < 0 {
		return 0, ErrIncomplete
	}
	if err := parseHead(b[:end], h); err != nil {
		return 0, err
	}
	return end, nil
}

// findHeadEnd looks for the blank line that ends a head in b, starting the
// scan at from (a previous call's next). It returns the length of the head
// (-1 when not found) and where to resume the scan once more bytes arrive.
func findHeadEnd(b []byte, from int) (end, next int) {
	i := from
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1, len(b)
		}
		i += j // b[i] == '\n'
		if i+1 >= len(b) {
			return -1, i
		}
		switch b[i+1] {
		case '\n':
			return i + 2, i + 2
		case '\r':
			if i+2 >= len(b) {
				return -1, i
			}
			if b[i+2] == '\n' {
				return i + 3, i + 3
			}
		}
		i++
	}
	return -1, i
}

// nextLine returns the first line of b without its LF or CRLF, and the rest.
func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		line, rest = b, nil
	} else {
		line, rest = b[:i], b[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// parseHead parses a whole head, b ending with its blank line.
func parseHead(b []byte, h *Head) error {
	*h = Head{ContentLength: -1, Len: len(b)}
	line, rest := nextLine(b)
	if err := parseStatusLine(line, h); err != nil {
		return err
	}
	prev := -1 // previous header: -1 none, 1 framing, 0 other (for obs-fold)
	for {
		line, rest = nextLine(rest)
		if len(line) == 0 {
			return nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			// obs-fold: a continuation of the previous header line.
			if prev < 0 {
				return errHeaderLine
			}
			if prev > 0 {
				return errFold
			}
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return errHeaderLine
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		for _, c := range name {
			if !isTokenChar(c) {
				return errHeaderLine
			}
		}
		prev = 0
		// The length first: most header lines are none of these, and
		// EqualFold compares the bytes before it compares lengths.
		switch {
		case !framingLen[len(name)&31]:
		case bytes.EqualFold(name, hdrContentLength):
			prev = 1
			n, err := parseContentLength(value)
			if err != nil {
				return err
			}
			if h.ContentLength >= 0 && h.ContentLength != n {
				return errConflictCL
			}
			h.ContentLength = n
		case bytes.EqualFold(name, hdrTransferEncoding):
			prev = 1
			h.TransferEncoding = true
			// Only the last coding matters, and a later header line
			// continues the list.
			if last := lastToken(value); last != nil {
				h.Chunked = bytes.EqualFold(last, tokChunked)
			}
		case bytes.EqualFold(name, hdrConnection):
			prev = 1
			for v := value; v != nil; {
				var tok []byte
				tok, v = nextToken(v)
				switch {
				case bytes.EqualFold(tok, tokClose):
					h.ConnClose = true
				case bytes.EqualFold(tok, tokKeepAlive):
					h.ConnKeepAlive = true
				}
			}
		case bytes.EqualFold(name, hdrKeepAlive):
			h.KeepAliveHeader = true
		case bytes.EqualFold(name, hdrServer):
			if h.Server == nil {
				h.Server = value
			}
		}
	}
}

// framingLen marks the lengths of the header names parseHead looks at
// (len&31: every name is shorter than 32).
var framingLen = func() (m [32]bool) {
	for _, h := range [][]byte{hdrContentLength, hdrTransferEncoding, hdrConnection, hdrKeepAlive, hdrServer} {
		m[len(h)] = true
	}
	return m
}()

var (
	hdrContentLength    = []byte("Content-Length")
	hdrTransferEncoding = []byte("Transfer-Encoding")
	hdrConnection       = []byte("Connection")
	hdrKeepAlive        = []byte("Keep-Alive")
	hdrServer           = []byte("Server")
	tokChunked          = []byte("chunked")
	tokClose            = []byte("close")
	tokKeepAlive        = []byte("keep-alive")
)

// parseStatusLine reads "HTTP/1.x SP 3DIGIT [SP reason]".
func parseStatusLine(line []byte, h *Head) error {
	if len(line) < len("HTTP/1.x 200") || string(line[:5]) != "HTTP/" {
		return errStatusLine
	}
	switch string(line[5:8]) {
	case "1.0":
		h.Minor = 0
	case "1.1":
		h.Minor = 1
	default:
		return errVersion
	}
	if line[8] != ' ' {
		return errStatusLine
	}
	code := line[9:12]
	if len(line) > 12 && line[12] != ' ' {
		return errStatusCode
	}
	h.Status = 0
	for _, c := range code {
		if c < '0' || c > '9' {
			return errStatusCode
		}
		h.Status = h.Status*10 + int(c-'0')
	}
	if h.Status < 100 {
		return errStatusCode
	}
	if len(line) > 13 {
		h.Reason = line[13:]
	}
	return nil
}

// parseContentLength reads a decimal length, or a comma-separated list of
// the same length (RFC 9110 section 8.6 lets a recipient accept that).
func parseContentLength(v []byte) (int64, error) {
	n := int64(-1)
	for v != nil {
		var tok []byte
		tok, v = nextToken(v)
		if len(tok) == 0 || len(tok) > 18 {
			return 0, errContentLength
		}
		var x int64
		for _, c := range tok {
			if c < '0' || c > '9' {
				return 0, errContentLength
			}
			x = x*10 + int64(c-'0')
		}
		if n >= 0 && n != x {
			return 0, errConflictCL
		}
		n = x
	}
	if n < 0 {
		return 0, errContentLength
	}
	return n, nil
}

// nextToken returns the first comma-separated element of v, trimmed, and the
// rest (nil when there is none).
func nextToken(v []byte) (tok, rest []byte) {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		return trimOWS(v[:i]), v[i+1:]
	}
	return trimOWS(v), nil
}

// lastToken returns the last non-empty comma-separated element of v.
func lastToken(v []byte) []byte {
	var last []byte
	for v != nil {
		var tok []byte
		tok, v = nextToken(v)
		if len(tok) > 0 {
			last = tok
		}
	}
	return last
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// isTokenChar reports whether c may appear in a header name or method (RFC
// 9110 section 5.6.2).
func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
