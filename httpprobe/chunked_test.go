package httpprobe

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// decodeAll feeds in to a fresh decoder in pieces of at most step bytes
// (0: all at once) and returns the data, the bytes consumed and the error.
func decodeAll(in []byte, step int) (data []byte, used int, done bool, err error) {
	var d ChunkedDecoder
	for used < len(in) && !d.Done() {
		p := in[used:]
		if step > 0 && len(p) > step {
			p = p[:step]
		}
		for len(p) > 0 && !d.Done() {
			n, b, err := d.Step(p)
			data = append(data, b...)
			used += n
			p = p[n:]
			if err != nil {
				return data, used, false, err
			}
			if n == 0 && !d.Done() {
				return data, used, false, errors.New("no progress")
			}
		}
	}
	return data, used, d.Done(), nil
}

func TestChunkedDecoder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		data string
		used int // bytes of the body; -1 means len(in)
		err  error
	}{
		{name: "one chunk", in: "5\r\nhello\r\n0\r\n\r\n", data: "hello", used: -1},
		{name: "upper hex and leading zeros", in: "000A\r\n0123456789\r\n0\r\n\r\n", data: "0123456789", used: -1},
		{name: "extensions", in: "3;a=1;b=\"x;y\"\r\nabc\r\n0;last\r\n\r\n", data: "abc", used: -1},
		{name: "blanks before extension", in: "3 \t;a\r\nabc\r\n0\r\n\r\n", data: "abc", used: -1},
		{name: "trailer", in: "1\r\nx\r\n0\r\nA: 1\r\nB: 2\r\n\r\n", data: "x", used: -1},
		{name: "bare LF", in: "2\nab\n0\n\n", data: "ab", used: -1},
		{name: "what follows is left", in: "1\r\nx\r\n0\r\n\r\nHTTP/1.1 200 OK", data: "x", used: 11},
		{name: "empty body", in: "0\r\n\r\n", data: "", used: -1},
		{name: "incomplete", in: "5\r\nhel", data: "hel", used: -1},
		{name: "no digits", in: "\r\n", err: errChunkSize},
		{name: "bad digit", in: "g\r\n", err: errChunkSize},
		{name: "0x prefix", in: "0x5\r\nhello\r\n", err: errChunkSize},
		{name: "negative", in: "-5\r\n", err: errChunkSize},
		{name: "too many digits", in: "10000000000000000\r\n", err: errChunkSize},
		{name: "too big", in: "7fffffffffffffff\r\n", err: errChunkSize},
		{name: "data too long", in: "3\r\nabcd\r\n", data: "abc", err: errChunkEnd},
		{name: "CR without LF", in: "3\r\nabc\rX", data: "abc", err: errChunkEnd},
		{name: "size CR without LF", in: "3\rabc", err: errChunkCR},
		{name: "long extension", in: "3;" + strings.Repeat("x", maxChunkLine), err: errChunkLine},
		{name: "long trailer", in: "0\r\nX: " + strings.Repeat("x", maxTrailer), err: errChunkTrailer},
	}
	for _, tt := range tests {
		for _, step := range []int{0, 1, 2, 7} {
			t.Run(fmt.Sprintf("%s/step%d", tt.name, step), func(t *testing.T) {
				data, used, done, err := decodeAll([]byte(tt.in), step)
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				if string(data) != tt.data {
					t.Errorf("data %q, want %q", data, tt.data)
				}
				if err != nil {
					return
				}
				want := tt.used
				if want < 0 {
					want = len(tt.in)
				}
				if used != want {
					t.Errorf("used %d bytes, want %d", used, want)
				}
				if wantDone := !strings.HasPrefix(tt.name, "incomplete"); done != wantDone {
					t.Errorf("done %v, want %v", done, wantDone)
				}
			})
		}
	}
}

// encodeChunked encodes data in chunks of the given sizes (cycled).
func encodeChunked(data []byte, sizes []byte) []byte {
	var b bytes.Buffer
	for i := 0; len(data) > 0; i++ {
		n := 1
		if len(sizes) > 0 {
			n = int(sizes[i%len(sizes)]) + 1
		}
		n = min(n, len(data))
		fmt.Fprintf(&b, "%x", n)
		if i%3 == 1 {
			b.WriteString(";ext=v")
		}
		b.WriteString("\r\n")
		b.Write(data[:n])
		b.WriteString("\r\n")
		data = data[n:]
	}
	b.WriteString("0\r\nTrailer: x\r\n\r\n")
	return b.Bytes()
}

// FuzzChunked checks that the decoder never panics, that splitting the input
// anywhere changes nothing, and that encoding then decoding gives the data
// back.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), []byte("hello world"), []byte{2, 5})
	f.Add([]byte("3;a=b\r\nabc\r\n0\r\nX: 1\r\n\r\nrest"), []byte(""), []byte{})
	f.Add([]byte("zz\r\n"), []byte{0, 1, 2, 3, 255}, []byte{0})
	f.Fuzz(func(t *testing.T, in, data, sizes []byte) {
		d1, u1, done1, err1 := decodeAll(in, 0)
		d2, u2, done2, err2 := decodeAll(in, 1)
		if !errors.Is(err2, err1) || !bytes.Equal(d1, d2) || u1 != u2 || done1 != done2 {
			t.Fatalf("whole vs byte by byte: %q %d %v %v / %q %d %v %v", d1, u1, done1, err1, d2, u2, done2, err2)
		}
		if u1 > len(in) {
			t.Fatalf("used %d of %d bytes", u1, len(in))
		}
		enc := encodeChunked(data, sizes)
		got, used, done, err := decodeAll(enc, 3)
		if err != nil || !done || used != len(enc) || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %q via %q: got %q used %d done %v err %v", data, enc, got, used, done, err)
		}
	})
}
