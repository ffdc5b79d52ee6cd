package main

import (
	"slices"
	"strings"
	"testing"
)

// TestBaselinePairs: each old-against-new pair runs both binaries with the
// same arguments against the same server, over TCP and Unix, with and
// without keep-alive for both protocols; then two noise pairs of this tree
// against itself.
func TestBaselinePairs(t *testing.T) {
	http := builtin{"http", "127.0.0.1:1", "/d/h.sock", 10}
	fcgi := builtin{"fcgi", "127.0.0.1:2", "/d/f.sock", 20}
	pairs := baselinePairs("/new", "/old", "10", "3", http, fcgi)
	if len(pairs) != 10 {
		t.Fatalf("%d pairs, want 8 old against new and 2 of noise", len(pairs))
	}
	var urls []string
	for i, p := range pairs {
		wantB := "/old"
		if i >= 8 {
			wantB = "/new"
		}
		if p.a.argv[0] != "/new" || p.b.argv[0] != wantB || !slices.Equal(p.a.argv[1:], p.b.argv[1:]) {
			t.Errorf("%s: %q against %q", p.path, p.a.argv, p.b.argv)
		}
		if p.need != 0 || p.maxCPU != 0 {
			t.Errorf("%s: a target, want none", p.path)
		}
		url := p.a.argv[len(p.a.argv)-1]
		keep := slices.Contains(p.a.argv, "-k")
		if keep != !strings.Contains(p.path, "without") {
			t.Errorf("%s: -k is %v", p.path, keep)
		}
		if want := map[bool]int{true: 10, false: 20}[strings.HasPrefix(url, "http:")]; len(p.server) != 1 || p.server[0] != want {
			t.Errorf("%s: server %v, want [%d]", p.path, p.server, want)
		}
		if i < 8 {
			urls = append(urls, url)
		}
	}
	slices.Sort(urls)
	urls = slices.Compact(urls)
	if want := []string{"fcgi://127.0.0.1:2/", "fcgi://unix:/d/f.sock:/", "http://127.0.0.1:1/", "http://unix:/d/h.sock:/"}; !slices.Equal(urls, want) {
		t.Errorf("targets %q, want %q", urls, want)
	}
}
