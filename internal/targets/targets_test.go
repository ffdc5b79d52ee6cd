package targets

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte("{\"a\":1}\n\x00\xff"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `# a comment
GET /a

# weight: 3 is a comment here? no: outside a block it is an error, so this line says nothing
GET http://example.com/b?x=1
X-One: 1
# weight: 3
Host: h

POST /c
Content-Type: application/json
@body.json
`
	src = strings.Replace(src, "# weight: 3 is a comment here? no: outside a block it is an error, so this line says nothing\n", "# just a comment\n", 1)
	ts, err := Parse(strings.NewReader(src), "t.txt", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 {
		t.Fatalf("%d targets", len(ts))
	}
	if ts[0].Label() != "GET /a" || ts[0].Weight != 1 || ts[0].Line != 2 {
		t.Errorf("first %+v", ts[0])
	}
	if ts[1].URL != "http://example.com/b?x=1" || ts[1].Weight != 3 || len(ts[1].Headers) != 2 || ts[1].Headers[1] != [2]string{"Host", "h"} {
		t.Errorf("second %+v", ts[1])
	}
	if ts[2].Method != "POST" || string(ts[2].Body) != "{\"a\":1}\n\x00\xff" || ts[2].BodyFile != "body.json" ||
		ts[2].Headers[0] != [2]string{"Content-Type", "application/json"} {
		t.Errorf("third %+v", ts[2])
	}
}

func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ src, want string }{
		{"", "f: no targets"},
		{"\n# only\n\n", "f: no targets"},
		{"GET\n", "f:1: want METHOD URL"},
		{"GET a/b\n", "f:1: bad URL \"a/b\""},
		{"G(T /a\n", "f:1: bad method"},
		{"GET /a\nnot a header\n", "f:2: bad header"},
		{"GET /a\n# weight: 0\n", "f:2: bad weight \"0\""},
		{"GET /a\n# weight: x\n", "f:2: bad weight"},
		{"GET /a\n# weight: 2\n# weight: 3\n", "f:3: a second weight"},
		{"# weight: 2\nGET /a\n", "f:1: a weight line must be inside a block"},
		{"GET /a\n@nosuch\n", "f:2: body file nosuch: no such file"},
		{"GET /a\n@\n", "f:2: an empty body file name"},
		{"GET /a\n@" + "x\n@y\n", "f:2: body file x"},
		{"GET /a\nX: 1\n\nGET /b\n# weight: 10001\n", "f:5: bad weight"},
	} {
		_, err := Parse(strings.NewReader(c.src), "f", dir)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error of more than one line: %q", c.src, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(strings.NewReader("GET /a\n@b\nX: 1\n"), "f", dir); err == nil || !strings.HasPrefix(err.Error(), "f:3: a line after the body file") {
		t.Errorf("line after body: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "nosuch"), nil); err == nil || !strings.Contains(err.Error(), "nosuch: cannot read") {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadFileStdin(t *testing.T) {
	ts, err := ReadFile("-", strings.NewReader("GET /x\n\nHEAD /y\n"))
	if err != nil || len(ts) != 2 || ts[1].Method != "HEAD" {
		t.Fatalf("%+v %v", ts, err)
	}
	if _, err := ReadFile("-", strings.NewReader("nonsense\n")); err == nil || !strings.HasPrefix(err.Error(), "stdin:1: ") {
		t.Errorf("stdin error %v", err)
	}
}

// TestScheduleShares checks the property the truth tests lean on: over
// any first m slots of the schedule, repeated, every target was picked
// within one of its share m·w/Σw.
func TestScheduleShares(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := [][]int{{1}, {1, 1}, {3, 1}, {2, 4, 6}, {1, 1, 1, 1, 1, 1, 1, 97}, {10000, 1}}
	for range 20 {
		n := 1 + rng.IntN(40)
		w := make([]int, n)
		for i := range w {
			w[i] = 1 + rng.IntN(50)
		}
		cases = append(cases, w)
	}
	for _, w := range cases {
		s, err := Schedule(w)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, v := range w {
			sum += v
		}
		counts := make([]int, len(w))
		for m := 1; m <= 3*len(s)+7; m++ {
			counts[s[(m-1)%len(s)]]++
			for i, c := range counts {
				share := float64(m) * float64(w[i]) / float64(sum)
				if d := float64(c) - share; d > 1 || d < -1 {
					t.Fatalf("weights %v: after %d slots target %d has %d, share %.2f", w, m, i, c, share)
				}
			}
		}
	}
}

func TestScheduleReduces(t *testing.T) {
	s, err := Schedule([]int{300, 100})
	if err != nil || len(s) != 4 {
		t.Fatalf("%v %v", s, err)
	}
	if _, err := Schedule([]int{MaxWeight, MaxWeight - 1, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := Schedule(nil); err == nil {
		t.Error("no weights scheduled")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("GET /a\nX: 1\n# weight: 2\n\nPOST http://h/b\n")
	f.Add("#\n\n\nGET /\r\n")
	f.Fuzz(func(t *testing.T, src string) {
		ts, err := Parse(strings.NewReader(src), "f", t.TempDir())
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		for _, x := range ts {
			if x.Weight < 1 || x.Weight > MaxWeight || x.Method == "" || x.URL == "" {
				t.Fatalf("bad target %+v", x)
			}
		}
	})
}
