package backend

import (
	"bytes"
	"strings"
	"sync"
)

// outputCap is how much of a backend's output a Process keeps: its last
// 64 KiB.
const outputCap = 64 << 10

// ring keeps the last outputCap bytes written to it. It is safe for
// concurrent use.
type ring struct {
	mu      sync.Mutex
	buf     []byte
	dropped bool // bytes were dropped from the front: the first line is partial
}

// Write appends b, dropping the oldest bytes beyond outputCap.
func (r *ring) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(b)
	if len(b) >= outputCap {
		b = b[len(b)-outputCap:]
		r.buf = append(r.buf[:0], b...)
		r.dropped = true
		return n, nil
	}
	if over := len(r.buf) + len(b) - outputCap; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
		r.dropped = true
	}
	r.buf = append(r.buf, b...)
	return n, nil
}

// tail returns the last n non-blank lines kept, without their line ends;
// a line cut by the 64 KiB bound is left out.
func (r *ring) tail(n int) []string {
	if n <= 0 {
		return nil
	}
	r.mu.Lock()
	b := bytes.Clone(r.buf)
	dropped := r.dropped
	r.mu.Unlock()
	if dropped {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	var out []string
	for len(b) > 0 && len(out) < n {
		b = bytes.TrimRight(b, "\r\n")
		i := bytes.LastIndexByte(b, '\n')
		line := strings.TrimRight(string(b[i+1:]), "\r")
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
		if i < 0 {
			break
		}
		b = b[:i]
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
