package sockets

import (
	"io"
	"net"
	"path/filepath"
	"testing"
)

// listen starts a server on network that runs handle on each connection.
func listen(t *testing.T, network string, handle func(net.Conn)) Addr {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return Addr{network, ln.Addr().String()}
}

func echo(c net.Conn) { io.Copy(c, c) }
