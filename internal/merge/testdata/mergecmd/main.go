// Command mergecmd is merge's memory tests' program (limits_test.go): it
// merges the files named by its arguments as backbench merge --format json
// does (merge.Merge, then document.Write on stdout), in a process of its
// own whose address space and peak resident set the tests can bound. On
// an error it prints one line on stderr and exits with status 2.
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/merge"
)

func main() {
	m := merge.New(merge.Options{})
	for _, name := range os.Args[1:] {
		if err := m.ReadFile(name, os.Stdin); err != nil {
			fail(err)
		}
	}
	d, err := m.Result()
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := document.Write(w, d); err != nil {
		fail(err)
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
}

// fail prints err and exits with status 2.
func fail(err error) {
	fmt.Fprintf(os.Stderr, "mergecmd: %v\n", err)
	os.Exit(2)
}
