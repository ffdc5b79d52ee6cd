package httpprobe_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// FuzzClientResponse serves arbitrary bytes as the response to the load
// client's request, then closes, and checks what any backend may rely on:
// Do returns within the timeout, in one valid class, with an error exactly
// when it failed, and counts no more than the server sent.
func FuzzClientResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\nServer: x/1 (y)\r\n\r\nclose-delimited",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
		"HTTP/1.1 2OO OK\r\n\r\n",
		"\x00garbage",
		"",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	dir, err := os.MkdirTemp("", "bbfuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	tgt, err := sockets.ParseTarget("http://unix:" + sock + ":/x")
	if err != nil {
		f.Fatal(err)
	}
	const timeout = 2 * time.Second
	cfgs := map[bool]httpprobe.Config{}
	var reqLen [2]int
	for i, ka := range []bool{false, true} {
		cfgs[ka] = httpprobe.Config{Target: tgt, KeepAlive: ka, Timeout: timeout}
		req, err := httpprobe.BuildRequest(cfgs[ka])
		if err != nil {
			f.Fatal(err)
		}
		reqLen[i] = len(req)
	}
	var answer atomic.Pointer[[]byte]
	var wantLen atomic.Int64
	ln := serveScript(f, sock, &answer, &wantLen)
	defer ln.Close()
	f.Fuzz(func(t *testing.T, resp []byte, ka bool) {
		i := 0
		if ka {
			i = 1
		}
		answer.Store(&resp)
		wantLen.Store(int64(reqLen[i]))
		factory, err := httpprobe.NewFactory(cfgs[ka])
		if err != nil {
			t.Fatal(err)
		}
		c, err := factory(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var r load.Result
		start := time.Now()
		c.Do(&r)
		checkResult(t, &r, int64(len(resp)), time.Since(start), timeout)
	})
}

// checkResult checks the properties every Result must have.
func checkResult(t *testing.T, r *load.Result, sent int64, took, timeout time.Duration) {
	t.Helper()
	if took > timeout+time.Second {
		t.Errorf("Do took %v with a %v timeout", took, timeout)
	}
	switch r.Class {
	case load.OK:
		if r.Err != nil || r.Status < 100 || r.Status > 999 {
			t.Errorf("OK with err %v status %d", r.Err, r.Status)
		}
	case load.Receive, load.Timeout, load.Protocol, load.Exceptions:
		if r.Err == nil {
			t.Errorf("class %v without an error", r.Class)
		}
	default:
		t.Errorf("class %v (%v)", r.Class, r.Err)
	}
	if r.BytesRead > sent || r.BodyBytes > r.BytesRead || r.BodyBytes < 0 {
		t.Errorf("read %d bytes, body %d, of %d sent", r.BytesRead, r.BodyBytes, sent)
	}
	if r.Done < r.Start {
		t.Errorf("done %d before start %d", r.Done, r.Start)
	}
}

// serveScript listens on the Unix socket sock; on each connection it reads
// a request of wantLen bytes, writes the answer and closes.
func serveScript(f *testing.F, sock string, answer *atomic.Pointer[[]byte], wantLen *atomic.Int64) net.Listener {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		f.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.CopyN(io.Discard, c, wantLen.Load()); err == nil {
				c.Write(*answer.Load())
			}
			c.Close()
		}
	}()
	return ln
}
