package main

import (
	"context"
	"testing"
	"time"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// dialFixture starts a FastCGI fixture and returns a raw connection to it
// and the request the loop sends.
func dialFixture(t *testing.T, opts fixtures.Options) (*sockets.RawIO, []byte) {
	t.Helper()
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	tg, err := sockets.ParseTarget(srv.URL("/"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sockets.NewDialer(tg, time.Second).Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var io sockets.RawIO
	io.Reset(conn)
	return &io, fcgi.EncodeRequest(fcgi.Config{Target: tg, KeepAlive: true})
}

// TestRoundTrip: the loop reads whole responses, records spread over several
// reads included, one after another on a kept connection.
func TestRoundTrip(t *testing.T) {
	io, req := dialFixture(t, fixtures.Options{BodyBytes: 200_000})
	buf := make([]byte, 64<<10)
	for i := range 3 {
		if err := roundTrip(io, req, buf); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
}

// TestRoundTripNoEnd: a response without END_REQUEST is an error, not a
// count.
func TestRoundTripNoEnd(t *testing.T) {
	io, req := dialFixture(t, fixtures.Options{Fault: fixtures.FaultNoEnd})
	if err := roundTrip(io, req, make([]byte, 64<<10)); err == nil {
		t.Fatal("a response without END_REQUEST passed")
	}
}

// TestNoKeep: without FCGI_KEEP_CONN the loop reads the response and then
// sees the server close the connection, as -nokeep relies on.
func TestNoKeep(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	tg, err := sockets.ParseTarget(srv.URL("/"))
	if err != nil {
		t.Fatal(err)
	}
	req := fcgi.EncodeRequest(fcgi.Config{Target: tg})
	buf := make([]byte, 64<<10)
	for i := range 3 {
		conn, err := sockets.NewDialer(tg, time.Second).Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		var io sockets.RawIO
		io.Reset(conn)
		if err := roundTrip(&io, req, buf); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if !io.CloseAfterPeer(buf) {
			t.Fatalf("request %d: the server did not close the connection", i)
		}
	}
}
