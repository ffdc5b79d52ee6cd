package httpprobe

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseHead(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Head // Len is checked against the head's length
		body BodyKind
		err  error
	}{
		{name: "minimal", in: "HTTP/1.1 200\r\n\r\n",
			want: Head{Minor: 1, Status: 200, ContentLength: -1}, body: BodyClose},
		{name: "full", in: "HTTP/1.0 404 Not Found\r\nServer: nginx/1.25 (x)\r\nContent-Length: 12\r\nConnection: Keep-Alive, Upgrade\r\nKeep-Alive: timeout=5\r\n\r\n",
			want: Head{Minor: 0, Status: 404, Reason: []byte("Not Found"), Server: []byte("nginx/1.25 (x)"), ContentLength: 12, ConnKeepAlive: true, KeepAliveHeader: true}, body: BodyLength},
		{name: "case and blanks", in: "HTTP/1.1 200 OK\r\ncontent-length:\t7 \r\nCONNECTION: close\r\n\r\n",
			want: Head{Minor: 1, Status: 200, Reason: []byte("OK"), ContentLength: 7, ConnClose: true}, body: BodyLength},
		{name: "chunked wins over length", in: "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
			want: Head{Minor: 1, Status: 200, Reason: []byte("OK"), ContentLength: 7, TransferEncoding: true, Chunked: true}, body: BodyChunked},
		{name: "204", in: "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
			want: Head{Minor: 1, Status: 204, Reason: []byte("No Content"), ContentLength: 0}, body: BodyNone},
		{name: "bare LF", in: "HTTP/1.1 200 OK\nServer: x\n\n",
			want: Head{Minor: 1, Status: 200, Reason: []byte("OK"), ContentLength: -1, Server: []byte("x")}, body: BodyClose},
		{name: "incomplete", in: "HTTP/1.1 200 OK\r\nServer: x\r\n", err: ErrIncomplete},
		{name: "incomplete CR", in: "HTTP/1.1 200 OK\r\n\r", err: ErrIncomplete},
		{name: "empty", in: "", err: ErrIncomplete},
		{name: "http/2", in: "HTTP/2.0 200 OK\r\n\r\n", err: errVersion},
		{name: "http/1.2", in: "HTTP/1.2 200 OK\r\n\r\n", err: errVersion},
		{name: "lower case", in: "http/1.1 200 OK\r\n\r\n", err: errStatusLine},
		{name: "two spaces", in: "HTTP/1.1  200 OK\r\n\r\n", err: errStatusCode},
		{name: "four digits", in: "HTTP/1.1 2000 OK\r\n\r\n", err: errStatusCode},
		{name: "status 099", in: "HTTP/1.1 099 x\r\n\r\n", err: errStatusCode},
		{name: "empty status line", in: "\r\n\r\n", err: errStatusLine},
		{name: "space in name", in: "HTTP/1.1 200 OK\r\nContent Length: 1\r\n\r\n", err: errHeaderLine},
		{name: "space before colon", in: "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\n", err: errHeaderLine},
		{name: "fold first", in: "HTTP/1.1 200 OK\r\n X: 1\r\n\r\n", err: errHeaderLine},
		{name: "folded length", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\n", err: errFold},
		{name: "negative length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: errContentLength},
		{name: "empty length", in: "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", err: errContentLength},
		{name: "huge length", in: "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", err: errContentLength},
		{name: "conflicting list", in: "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", err: errConflictCL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in + "BODY")
			if tt.err == ErrIncomplete {
				in = []byte(tt.in)
			}
			var h Head
			n, err := ParseHead(in, &h)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			tt.want.Len = len(tt.in)
			if n != len(tt.in) || !sameHead(&h, &tt.want) {
				t.Errorf("got n=%d %+v\nwant n=%d %+v", n, h, len(tt.in), tt.want)
			}
			if b := h.Body(false); b != tt.body {
				t.Errorf("Body() = %v, want %v", b, tt.body)
			}
			if h.Body(true) != BodyNone {
				t.Error("a response to HEAD has a body")
			}
		})
	}
}

func sameHead(a, b *Head) bool {
	return a.Minor == b.Minor && a.Status == b.Status && bytes.Equal(a.Reason, b.Reason) &&
		a.ContentLength == b.ContentLength && a.TransferEncoding == b.TransferEncoding &&
		a.Chunked == b.Chunked && a.ConnClose == b.ConnClose && a.ConnKeepAlive == b.ConnKeepAlive &&
		a.KeepAliveHeader == b.KeepAliveHeader && bytes.Equal(a.Server, b.Server) && a.Len == b.Len
}

func TestHeadPersistenceAndServer(t *testing.T) {
	tests := []struct {
		in     string
		keeps  bool
		server string
	}{
		{"HTTP/1.1 200 OK\r\n\r\n", true, ""},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false, ""},
		{"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\n\r\n", false, ""},
		{"HTTP/1.0 200 OK\r\n\r\n", false, ""},
		{"HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5\r\n\r\n", false, ""},
		{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", true, ""},
		{"HTTP/1.1 200 OK\r\nServer: Apache/2.4.62 (Debian)\r\n\r\n", true, "Apache/2.4.62"},
		{"HTTP/1.1 200 OK\r\nServer: \x01x\r\n\r\n", true, ""},
		{"HTTP/1.1 200 OK\r\nServer: thin\r\nServer: other\r\n\r\n", true, "thin"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.in, "\r\n", "|"), func(t *testing.T) {
			var h Head
			if _, err := ParseHead([]byte(tt.in), &h); err != nil {
				t.Fatal(err)
			}
			if h.KeepsConn() != tt.keeps || string(h.ServerToken()) != tt.server {
				t.Errorf("KeepsConn %v ServerToken %q, want %v %q", h.KeepsConn(), h.ServerToken(), tt.keeps, tt.server)
			}
		})
	}
}

// FuzzParseHead checks that ParseHead never panics, that a head it accepts
// parses the same alone or followed by more bytes, that one byte less is
// incomplete, and that its fields are in range.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello",
		"HTTP/1.0 304 Not Modified\nConnection: keep-alive\n\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX: a\r\n b\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
		"garbage\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Head
		n, err := ParseHead(b, &h)
		if err != nil {
			if n != 0 {
				t.Fatalf("n = %d with error %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(b) || n != h.Len {
			t.Fatalf("n = %d, Len %d, len(b) = %d", n, h.Len, len(b))
		}
		if h.Status < 100 || h.Status > 999 || (h.Minor != 0 && h.Minor != 1) || h.ContentLength < -1 {
			t.Fatalf("out of range: %+v", h)
		}
		var h2 Head
		n2, err := ParseHead(append(b[:n:n], "trailing bytes\r\n\r\n"...), &h2)
		if err != nil || n2 != n || !sameHead(&h, &h2) {
			t.Fatalf("head followed by more bytes: n=%d err=%v %+v, want n=%d %+v", n2, err, h2, n, h)
		}
		if _, err := ParseHead(b[:n-1], &h2); err != ErrIncomplete {
			t.Fatalf("head minus its last byte: err %v, want ErrIncomplete", err)
		}
	})
}

// BenchmarkParseHead parses the head nginx sends with a static file, the
// hot path of a keep-alive run against it.
func BenchmarkParseHead(b *testing.B) {
	head := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 01 Dec 2026 08:00:00 GMT\r\n" +
		"Content-Type: text/html\r\nContent-Length: 616\r\nLast-Modified: Tue, 01 Dec 2026 07:00:00 GMT\r\n" +
		"Connection: keep-alive\r\nETag: \"674c1e70-268\"\r\nAccept-Ranges: bytes\r\n\r\n")
	var h Head
	b.ReportAllocs()
	for b.Loop() {
		if err := parseHead(head, &h); err != nil || h.ContentLength != 616 || !h.ConnKeepAlive || h.Server == nil {
			b.Fatalf("%v %+v", err, h)
		}
	}
}
