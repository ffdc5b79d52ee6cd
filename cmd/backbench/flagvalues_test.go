package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChoice(t *testing.T) {
	var s string
	v := NewChoice(&s, "text", "text", "json")
	if s != "text" || v.String() != "text" || v.Type() != "text|json" || strings.Join(v.Choices(), ",") != "text,json" {
		t.Errorf("default %q, String %q, Type %q", s, v.String(), v.Type())
	}
	if err := v.Set("json"); err != nil || s != "json" {
		t.Errorf("json: %q, %v", s, err)
	}
	if err := v.Set("xml"); err == nil || err.Error() != "want one of text, json" || s != "json" {
		t.Errorf("xml: %q, %v", s, err)
	}
}

func TestStartAt(t *testing.T) {
	good := []struct {
		in   string
		want time.Time
	}{
		{"2026-12-01T04:00:00Z", time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)},
		{"2026-12-01T04:00:00.25+01:00", time.Date(2026, 12, 1, 3, 0, 0, 25e7, time.UTC)},
		{"1764561600", time.Unix(1764561600, 0)},
		{"1764561600.25", time.Unix(1764561600, 25e7)},
		{"1764561600.123456789", time.Unix(1764561600, 123456789)},
	}
	for _, c := range good {
		var at time.Time
		if err := NewStartAt(&at).Set(c.in); err != nil || !at.Equal(c.want) {
			t.Errorf("%q: %v, %v; want %v", c.in, at, err, c.want)
		}
	}
	for _, in := range []string{"NaN", "1e300", "-Inf", "-1", "1.1234567891", "1.x", "tomorrow", ""} {
		var at time.Time
		if err := NewStartAt(&at).Set(in); err == nil {
			t.Errorf("%q accepted: %v", in, at)
		}
	}
	var at time.Time
	v := NewStartAt(&at)
	if v.String() != "" || v.Type() != "TIME" {
		t.Errorf("unset: %q", v.String())
	}
	at = time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	if v.String() != "2026-12-01T04:00:00Z" {
		t.Errorf("String %q", v.String())
	}
}

func TestAnnounceStart(t *testing.T) {
	var b bytes.Buffer
	AnnounceStart(&b, time.Time{}, false)
	AnnounceStart(&b, time.Now().Add(time.Hour), true)
	if b.Len() != 0 {
		t.Errorf("unset or quiet: %q", b.String())
	}
	AnnounceStart(&b, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), false)
	if want := "Starting at 2000-01-01T00:00:00Z (in 0.0 s)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestFinite(t *testing.T) {
	var f float64
	v := NewFinite(&f, 2)
	if f != 2 || v.String() != "2" || v.Type() != "float" || (&Finite{}).String() != "0" {
		t.Errorf("default %v, String %q", f, v.String())
	}
	if err := v.Set(" 1e308 "); err != nil || f != 1e308 {
		t.Errorf("1e308: %v, %v", f, err)
	}
	for _, in := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "1e400", "-1e400", "x", ""} {
		if err := v.Set(in); err == nil || f != 1e308 {
			t.Errorf("%q accepted: %v", in, f)
		}
		if g, err := ParseFinite(in); err == nil || g != 0 {
			t.Errorf("ParseFinite(%q) = %v", in, g)
		}
	}
}

func TestParseRatioAndPercent(t *testing.T) {
	for _, c := range []struct {
		in           string
		ratio, pct   float64
		ratioOK, pOK bool
	}{
		{"0.05", 0.05, 0.05, true, true},
		{"5%", 0.05, 0.05, true, true},
		{" 2% ", 0.02, 0.02, true, true},
		{"0", 0, 0, true, true},
		{"1", 1, 0, true, false},
		{"100%", 1, 0, true, false},
		{"101%", 0, 0, false, false},
		{"-1%", 0, 0, false, false},
		{"NaN", 0, 0, false, false},
		{"Inf%", 0, 0, false, false},
		{"x", 0, 0, false, false},
	} {
		r, err := ParseRatio("--stop-error-rate", c.in)
		if (err == nil) != c.ratioOK || math.Abs(r-c.ratio) > 1e-12 {
			t.Errorf("ParseRatio(%q) = %v, %v", c.in, r, err)
		}
		var ue *UsageError
		if err != nil && (!errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "bad --stop-error-rate ")) {
			t.Errorf("ParseRatio(%q): %T %v, want a usage error naming the flag", c.in, err, err)
		}
		p, err := ParsePercent("--noise", c.in)
		if (err == nil) != c.pOK || math.Abs(p-c.pct) > 1e-12 {
			t.Errorf("ParsePercent(%q) = %v, %v", c.in, p, err)
		}
		if err != nil && (!errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "bad --noise ")) {
			t.Errorf("ParsePercent(%q): %T %v, want a usage error naming the flag", c.in, err, err)
		}
	}
}

func TestWrapText(t *testing.T) {
	cases := []struct {
		text  string
		width int
		want  string
	}{
		{"short line\n", 20, "short line\n"},
		{"one two three four five", 10, "one two\nthree four\nfive"},
		// A list: continuations under the description.
		{"  -n N   the number of requests to send", 24, "  -n N   the number of\n         requests to\n         send"},
		// An indent kept when there is no list column.
		{"    aaa bbb ccc", 10, "    aaa\n    bbb\n    ccc"},
		// A first word longer than the line: the line is left as it is.
		{"averyveryverylongword x", 8, "averyveryverylongword x"},
	}
	for _, c := range cases {
		if got := WrapText(c.text, c.width); got != c.want {
			t.Errorf("WrapText(%q, %d)\n got %q\nwant %q", c.text, c.width, got, c.want)
		}
	}
	if HelpWidth(&bytes.Buffer{}) != 80 {
		t.Error("HelpWidth of a buffer is not 80")
	}
}

// TestOpenOutput: "" and "-" are stdout; a file is written whole when the
// command succeeds, left as it was when it fails; a bad path is a usage
// error.
func TestOpenOutput(t *testing.T) {
	var stdout bytes.Buffer
	for _, name := range []string{"", "-"} {
		w, done, err := OpenOutput(name, &stdout)
		if err != nil || w != &stdout {
			t.Fatalf("%q: %v", name, err)
		}
		var cmdErr error
		done(&cmdErr)
		if Commit(w) != nil {
			t.Error("Commit of stdout")
		}
	}
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(path, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []bool{true, false} {
		w, done, err := OpenOutput(path, &stdout)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("after")); err != nil {
			t.Fatal(err)
		}
		var cmdErr error
		if fail {
			cmdErr = errors.New("the run failed")
		}
		done(&cmdErr)
		got, _ := os.ReadFile(path)
		if want := map[bool]string{true: "before", false: "after"}[fail]; string(got) != want {
			t.Errorf("failed %v: file %q, want %q", fail, got, want)
		}
	}
	var ue *UsageError
	if _, _, err := OpenOutput(filepath.Join(t.TempDir(), "no", "such", "dir", "x"), &stdout); !errors.As(err, &ue) {
		t.Errorf("bad path: %T %v, want a usage error", err, err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}
}
