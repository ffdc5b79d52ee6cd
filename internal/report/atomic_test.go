package report

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// onlyFile fails unless dir holds exactly the file name (no temporary
// file left behind).
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %q, want only %s", dir, names, name)
	}
}

// TestAtomicFileFailureKeepsOld injects failures midway (a writer that
// fails after writing part of the file, a JSON encoder meeting NaN, a
// write error) and checks that the previous file is whole and no
// temporary file is left.
func TestAtomicFileFailureKeepsOld(t *testing.T) {
	for name, write := range map[string]func(io.Writer) error{
		"error after a part": func(w io.Writer) error {
			w.Write([]byte(`{"half": `))
			return errors.New("injected")
		},
		"encoder fails": func(w io.Writer) error { return json.NewEncoder(w).Encode(map[string]float64{"x": math.NaN()}) },
		"write fails": func(w io.Writer) error {
			a := w.(*AtomicFile)
			a.f.Close() // the next write fails as on a full disk
			_, err := w.Write([]byte("new"))
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "sweep.json")
			os.WriteFile(p, []byte(`{"old": true}`), 0o640)
			if err := WriteFileAtomic(p, write); err == nil {
				t.Fatal("no error")
			}
			if b, _ := os.ReadFile(p); string(b) != `{"old": true}` {
				t.Errorf("the previous file now holds %q", b)
			}
			onlyFile(t, dir, "sweep.json")
		})
	}
	// A write error kept by Write fails Commit too.
	dir := t.TempDir()
	p := filepath.Join(dir, "a.csv")
	os.WriteFile(p, []byte("old"), 0o644)
	a, err := CreateAtomic(p)
	if err != nil {
		t.Fatal(err)
	}
	a.f.Close()
	a.Write([]byte("x"))
	if err := a.Commit(); err == nil {
		t.Error("Commit after a failed write: no error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the previous file now holds %q", b)
	}
	onlyFile(t, dir, "a.csv")
}

// TestAtomicFileCommit checks a whole write: the file replaced with its
// mode kept, a symbolic link followed (the link stays), a device written
// directly, and a missing directory refused before any write.
func TestAtomicFileCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	os.WriteFile(p, []byte("old"), 0o600)
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("file holds %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the previous 0600", st.Mode())
	}
	onlyFile(t, dir, "out.json")

	fresh := filepath.Join(dir, "fresh.csv")
	if err := WriteFileAtomic(fresh, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode())
	}

	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("out.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, func(w io.Writer) error { _, err := w.Write([]byte("via link")); return err }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symbolic link was replaced by a file")
	}
	if b, _ := os.ReadFile(p); string(b) != "via link" {
		t.Errorf("the link's file holds %q", b)
	}

	if err := WriteFileAtomic(os.DevNull, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Fatalf("%s: %v", os.DevNull, err)
	}
	if st, _ := os.Stat(os.DevNull); st.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device", os.DevNull)
	}

	if _, err := CreateAtomic(filepath.Join(dir, "missing", "x.json")); err == nil {
		t.Error("a missing directory: no error")
	}
}
