package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// Kind is what a failure was, beside its class: the condition behind it,
// found from the error's type and errno (never from its text), so that the
// notes of a report can name causes and remedies exactly.
type Kind uint8

// The failure kinds.
const (
	// KindOther is any failure that is none of the kinds below.
	KindOther Kind = iota
	// KindRefused is a refused connection (ECONNREFUSED).
	KindRefused
	// KindBacklogFull is a Unix socket connect refused at once because the
	// listen backlog was full (EAGAIN).
	KindBacklogFull
	// KindNoFiles is a connect that failed for lack of file descriptors
	// (EMFILE, ENFILE).
	KindNoFiles
	// KindNoPorts is a TCP connect that failed for lack of ephemeral ports
	// (EADDRNOTAVAIL).
	KindNoPorts
	// KindNoSocket is a Unix socket path that does not exist (ENOENT).
	KindNoSocket
	// KindPermission is a denied connect (EACCES, EPERM).
	KindPermission
	// KindReset is a connection reset by the peer (ECONNRESET).
	KindReset
	// KindBrokenPipe is a write to a connection the peer closed (EPIPE).
	KindBrokenPipe
	// KindTimeout is a deadline passed.
	KindTimeout
	// KindEOF is a connection closed by the peer mid-response.
	KindEOF
	// NumKinds is the number of kinds, for arrays indexed by Kind.
	NumKinds
)

var kindNames = [NumKinds]string{"other", "refused", "backlog_full", "no_files", "no_ports", "no_socket",
	"permission", "reset", "broken_pipe", "timeout", "eof"}

// String returns the kind's snake_case name, as used in JSON.
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "unknown"
}

// MarshalText returns the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("load: unknown failure kind %q", b)
}

// KindOf returns the kind of a failure's error (KindOther for nil or an
// error of no known kind). It looks at the error chain's errno and types
// only.
func KindOf(err error) Kind {
	if err == nil {
		return KindOther
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	case errors.Is(err, syscall.EAGAIN):
		return KindBacklogFull
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return KindNoFiles
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return KindNoPorts
	case errors.Is(err, syscall.ENOENT):
		return KindNoSocket
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return KindPermission
	case errors.Is(err, syscall.ECONNRESET):
		return KindReset
	case errors.Is(err, syscall.EPIPE):
		return KindBrokenPipe
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return KindEOF
	}
	return KindOther
}
