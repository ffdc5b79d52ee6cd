package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/backbench/backbench/fixtures"
)

// ChildEnv marks a child of a pool (serve --processes); its value is the
// number of listening sockets it inherits (descriptors 3 and up, then the
// preload file). Run in a process started with it serves those sockets.
const ChildEnv = "BACKBENCH_SERVE_CHILD"

// runPool is the master of serve --processes: it listens, holds the
// listening sockets and the --preload mapping, starts the children (this
// program again, as "serve" with the same arguments, the sockets and the
// preload file as inherited descriptors), prints the listening lines, and
// stops the children with SIGTERM when ctx ends. Like a Unicorn or php-fpm
// master it serves nothing itself.
//
// Go cannot fork without exec, so the children map the master's preload
// file rather than inheriting a mapping: the pages are the same page-cache
// pages either way, shared by every process that maps them, as the code and
// data a prefork master loads before forking are.
func runPool(ctx context.Context, o *Options, addrs []address, stdout io.Writer) error {
	var lns []net.Listener
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, a := range addrs {
		ln, err := fixtures.Listen(a.network, a.address, o.Backlog)
		if err != nil {
			return err
		}
		lns = append(lns, ln)
	}
	for _, ln := range lns {
		fl, ok := ln.(interface{ File() (*os.File, error) })
		if !ok {
			return fmt.Errorf("serve: cannot hand a %T to a child", ln)
		}
		f, err := fl.File()
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		files = append(files, f)
	}
	if o.Preload > 0 {
		f, err := preloadFile(o.Preload)
		if err != nil {
			return err
		}
		files = append(files, f)
		unmap, err := mapAndRead(f, o.Preload)
		if err != nil {
			return err
		}
		defer unmap()
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	var children []*exec.Cmd
	defer func() {
		for _, c := range children {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		for _, c := range children {
			_ = c.Wait()
		}
	}()
	for range o.Processes {
		c := exec.Command(exe, append([]string{"serve"}, o.Args...)...)
		c.Env = append(os.Environ(), ChildEnv+"="+strconv.Itoa(len(lns)))
		c.ExtraFiles = files
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			return fmt.Errorf("serve: starting a child: %w", err)
		}
		children = append(children, c)
	}
	for _, ln := range lns {
		fmt.Fprintf(stdout, "listening %s %s %s\n", o.Protocol, ln.Addr().Network(), ln.Addr())
	}
	<-ctx.Done()
	return nil
}

// runChild serves the sockets inherited from the master until ctx ends.
func runChild(ctx context.Context, o *Options, opts fixtures.Options) error {
	n, err := strconv.Atoi(os.Getenv(ChildEnv))
	if err != nil || n < 1 {
		return errors.New("serve: bad " + ChildEnv)
	}
	if o.Preload > 0 {
		f := os.NewFile(uintptr(3+n), "preload")
		unmap, err := mapAndRead(f, o.Preload)
		f.Close()
		if err != nil {
			return err
		}
		defer unmap()
	}
	for i := range n {
		f := os.NewFile(uintptr(3+i), "listener")
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("serve: inherited socket %d: %w", i, err)
		}
		s, err := fixtures.Serve(o.Protocol, ln, opts)
		if err != nil {
			ln.Close()
			return err
		}
		defer s.Close()
	}
	<-ctx.Done()
	return nil
}

// preloadFile returns an unlinked temporary file of size bytes of data.
func preloadFile(size int64) (*os.File, error) {
	f, err := os.CreateTemp("", "backbench-preload-*")
	if err != nil {
		return nil, fmt.Errorf("serve: --preload: %w", err)
	}
	_ = os.Remove(f.Name())
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i*7 + 1)
	}
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
			f.Close()
			return nil, fmt.Errorf("serve: --preload: %w", err)
		}
	}
	return f, nil
}

// preloadSum keeps the reads of mapAndRead from being optimized away.
var preloadSum byte

// mapAndRead maps size bytes of f read-only and shared, and reads a byte of
// every page so that all are resident; it returns the unmapping function.
func mapAndRead(f *os.File, size int64) (func(), error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("serve: --preload: mmap: %w", err)
	}
	var sum byte
	for i := 0; i < len(b); i += os.Getpagesize() {
		sum += b[i]
	}
	preloadSum += sum
	return func() { _ = syscall.Munmap(b) }, nil
}
