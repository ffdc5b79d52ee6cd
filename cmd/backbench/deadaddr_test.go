package main

import (
	"testing"

	"github.com/backbench/backbench/internal/testnet"
)

// deadTCPAddr returns a 127.0.0.1 address that refuses connections and that
// no one else can take for the test's life (see internal/testnet).
func deadTCPAddr(t testing.TB) string {
	t.Helper()
	return testnet.DeadTCP(t, "127.0.0.1")
}
