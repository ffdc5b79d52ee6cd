package fcgi_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// FuzzClientResponse serves arbitrary bytes as the response to the load
// client's request, then closes, and checks what any backend may rely on:
// Do returns within the timeout, in one valid class, with an error exactly
// when it failed, and counts no more than the server sent.
func FuzzClientResponse(f *testing.F) {
	ok := fcgi.AppendRecord(nil, fcgi.TypeStdout, 1, []byte("Status: 404 Not Found\r\nServer: php/8\r\n\r\nbody"))
	ok = fcgi.AppendRecord(ok, fcgi.TypeStderr, 1, []byte("notice"))
	ok = fcgi.AppendRecord(ok, fcgi.TypeStdout, 1, nil)
	ok = fcgi.AppendEndRequest(ok, 1, 0, fcgi.StatusRequestComplete)
	for _, s := range [][]byte{
		ok,
		ok[:len(ok)-5],
		fcgi.AppendEndRequest(nil, 1, 0, fcgi.StatusOverloaded),
		fcgi.AppendEndRequest(fcgi.AppendRecord(nil, fcgi.TypeStdout, 2, []byte("\r\n")), 1, 0, 0),
		fcgi.AppendHeader(nil, fcgi.TypeStdout, 1, 65535, 255),
		[]byte("HTTP/1.1 400 Bad Request\r\n\r\n"),
		nil,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	dir, err := os.MkdirTemp("", "bbfuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	tgt, err := sockets.ParseTarget("fcgi://unix:" + sock + ":/x.php")
	if err != nil {
		f.Fatal(err)
	}
	const timeout = 2 * time.Second
	factories := map[bool]load.ClientFactory{}
	var reqLen [2]int
	for i, ka := range []bool{false, true} {
		cfg := fcgi.Config{Target: tgt, KeepAlive: ka, Timeout: timeout, DocumentRoot: "/srv"}
		reqLen[i] = len(fcgi.EncodeRequest(cfg))
		if factories[ka], err = fcgi.NewFactory(cfg); err != nil {
			f.Fatal(err)
		}
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
		c, err := factories[ka](context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var r load.Result
		start := time.Now()
		c.Do(&r)
		took := time.Since(start)
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
		if r.BytesRead > int64(len(resp)) || r.BodyBytes+r.StderrBytes > r.BytesRead || r.BodyBytes < 0 {
			t.Errorf("read %d bytes, body %d, stderr %d, of %d sent", r.BytesRead, r.BodyBytes, r.StderrBytes, len(resp))
		}
		if r.Done < r.Start {
			t.Errorf("done %d before start %d", r.Done, r.Start)
		}
	})
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
