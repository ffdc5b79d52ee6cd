package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// AtomicFile is an output file that replaces the file of its name only
// when it is whole: it is written to a temporary file in the same
// directory (".NAME.tmp-RANDOM"), and Commit renames that into place. A run
// that fails before Commit, a full disk, or a process killed while it
// writes leaves the previous file as it was (a kill may leave the
// temporary file behind).
//
// A name that exists and is not a regular file (/dev/null, /dev/stdout, a
// FIFO) is written directly, since renaming over it would replace the
// device; a symbolic link is followed, so that the file it points to is
// replaced and the link stays.
type AtomicFile struct {
	f       *os.File
	name    string // as given, for messages
	target  string // the path renamed onto
	direct  bool
	done    bool
	mode    os.FileMode
	written error
}

// WritePauseEnv names an environment variable holding a Go duration
// ("300ms") that Commit sleeps before it renames: a test hook, so that a
// test can kill a process while its outputs are written.
const WritePauseEnv = "BACKBENCH_TEST_WRITE_PAUSE"

// CreateAtomic starts an AtomicFile for name. An error here (a directory
// that does not exist or cannot be written) comes before any byte is
// written.
func CreateAtomic(name string) (*AtomicFile, error) {
	a := &AtomicFile{name: name, target: name, mode: 0o644}
	if t, err := filepath.EvalSymlinks(name); err == nil {
		a.target = t
	}
	if st, err := os.Stat(a.target); err == nil {
		if !st.Mode().IsRegular() {
			f, err := os.OpenFile(a.target, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, err
			}
			a.f, a.direct = f, true
			return a, nil
		}
		a.mode = st.Mode().Perm()
	}
	dir, base := filepath.Split(a.target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, unwrapPath(err))
	}
	a.f = f
	return a, nil
}

// unwrapPath drops the temporary file's name from an error, so that the
// message names the directory's problem, not a name the user never gave.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Name is the name the file was created with.
func (a *AtomicFile) Name() string { return a.name }

// Write writes to the temporary file; the first error is kept and returned
// by Commit too.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a.written != nil {
		return 0, a.written
	}
	n, err := a.f.Write(p)
	if err != nil {
		a.written = err
	}
	return n, err
}

// Commit makes the file whole on disk (fsync) and renames it into place.
// On any error the previous file stays and the temporary one is removed.
func (a *AtomicFile) Commit() error {
	if a.done {
		return nil
	}
	a.done = true
	if a.direct {
		return errors.Join(a.written, a.f.Close())
	}
	err := a.written
	if err == nil {
		err = a.f.Sync()
	}
	err = errors.Join(err, a.f.Close())
	if err == nil {
		err = os.Chmod(a.f.Name(), a.mode)
	}
	if d, perr := time.ParseDuration(os.Getenv(WritePauseEnv)); perr == nil && d > 0 {
		time.Sleep(d)
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.target)
	}
	if err != nil {
		os.Remove(a.f.Name())
		return fmt.Errorf("write %s: %w", a.name, err)
	}
	return nil
}

// Abort drops the temporary file and leaves the previous file as it was;
// after Commit it does nothing, so that it may be deferred.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	if !a.direct {
		os.Remove(a.f.Name())
	}
}

// WriteFileAtomic writes name with write through an AtomicFile: the
// previous file is replaced only when write and the commit succeed.
func WriteFileAtomic(name string, write func(io.Writer) error) error {
	a, err := CreateAtomic(name)
	if err != nil {
		return err
	}
	defer a.Abort()
	if err := write(a); err != nil {
		return err
	}
	return a.Commit()
}

// CommitAll commits the files in order, after every one was written: the
// outputs of one run that go together. It stops at the first error and
// aborts the files not yet committed.
func CommitAll(files []*AtomicFile) error {
	for i, f := range files {
		if err := f.Commit(); err != nil {
			for _, g := range files[i+1:] {
				g.Abort()
			}
			return err
		}
	}
	return nil
}
