package backend

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the backend of the tests: with BACKEND_TEST_MODE
// set, TestMain acts as one (listening on BACKEND_TEST_NETWORK and
// BACKEND_TEST_ADDR) instead of running the tests.
const (
	envMode    = "BACKEND_TEST_MODE"
	envNetwork = "BACKEND_TEST_NETWORK"
	envAddr    = "BACKEND_TEST_ADDR"
)

// The modes of the test backend.
const (
	modeServe  = "serve"  // listen and serve
	modeExit   = "exit1"  // print a line to stdout, two to stderr, exit 1
	modeNever  = "never"  // never listen
	modeIgnore = "ignore" // ignore SIGTERM, listen
	modeFork   = "fork"   // start a child that called setsid and ignores SIGTERM, ignore SIGTERM, listen
	modeOrphan = "orphan" // start a child that called setsid and ignores SIGTERM, listen
	modeGroup  = "group"  // start a child in its own group that ignores SIGTERM, listen
	modeChild  = "child"  // fork's, orphan's and group's child: ignore SIGTERM, say "ready", sleep
	modeLate   = "late"   // listen after 300 ms
	modeOwner  = "owner"  // start a watcher, claim BACKEND_TEST_DIR, start a serve and a fork backend in it, print their PIDs, sleep
)

func TestMain(m *testing.M) {
	if os.Getenv(WatcherEnv) != "" {
		os.Exit(WatcherMain())
	}
	mode := os.Getenv(envMode)
	if mode == "" {
		os.Exit(m.Run())
	}
	os.Exit(backendMain(mode))
}

// backendMain is the test backend of a mode; it returns an exit status.
func backendMain(mode string) int {
	switch mode {
	case modeExit:
		fmt.Println("starting up")
		fmt.Fprintln(os.Stderr, "reading config.toml")
		fmt.Fprintln(os.Stderr, "fatal: config.toml line 3: unknown key")
		return 1
	case modeNever:
		select {}
	case modeIgnore:
		signal.Ignore(syscall.SIGTERM)
	case modeFork, modeOrphan, modeGroup:
		if mode == modeFork {
			signal.Ignore(syscall.SIGTERM)
		}
		if err := startChild(mode != modeGroup); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 3
		}
	case modeChild:
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		select {}
	case modeLate:
		time.Sleep(300 * time.Millisecond)
	case modeOwner:
		return ownerMain()
	case modeServe:
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		return 2
	}
	ln, err := net.Listen(os.Getenv(envNetwork), os.Getenv(envAddr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 4
	}
	fmt.Println("listening on", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return 5
		}
		c.Write([]byte("hello\n"))
		c.Close()
	}
}

// startChild starts the test binary as modeChild, in a session of its own
// if setsid, and waits until it has set its signals.
func startChild(setsid bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envMode+"="+modeChild)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		return fmt.Errorf("child said %q: %v", line, err)
	}
	return nil
}
