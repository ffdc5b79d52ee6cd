package sockets

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSendOnce: the request is written on a fresh connection whose
// deadline bounds the exchange, on tcp and unix alike; a dial that fails
// is an error with the protocol's prefix.
func TestSendOnce(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			a := listen(t, network, echo)
			tgt := Target{Network: a.Network, Address: a.Address}
			c, err := SendOnce(context.Background(), nil, tgt, 2*time.Second, []byte("ping"), "x")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got := make([]byte, 4)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
				t.Fatalf("read %q, %v; want the request echoed", got, err)
			}
			// A server that never answers: the deadline SendOnce set, not
			// a hang, ends the read.
			silent := listen(t, network, func(c net.Conn) { io.Copy(io.Discard, c) })
			c2, err := SendOnce(context.Background(), nil, Target{Network: silent.Network, Address: silent.Address}, 100*time.Millisecond, []byte("ping"), "x")
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			if _, err := c2.Read(got); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read from a silent server: %v, want the deadline exceeded", err)
			}
		})
	}
	none := Target{Network: "unix", Address: filepath.Join(t.TempDir(), "none.sock")}
	if _, err := SendOnce(context.Background(), nil, none, time.Second, []byte("ping"), "x"); err == nil || !strings.HasPrefix(err.Error(), "x: connect: ") {
		t.Errorf("dial to no socket: %v, want an error starting with x: connect:", err)
	}
}
