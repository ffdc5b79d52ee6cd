package targets

import (
	"errors"
	"strings"
	"testing"
)

func TestParseLog(t *testing.T) {
	log := strings.Join([]string{
		`127.0.0.1 - - [10/Oct/2026:13:55:36 +0000] "GET /a?x=1 HTTP/1.1" 200 2326 "-" "curl/8.0"`,
		`127.0.0.1 - frank [10/Oct/2026:13:55:37 +0000] "POST /form HTTP/1.1" 302 0 "http://h/" "Mozilla/5.0 (X11) \"quoted\""`,
		``,
		`garbage`,
		`127.0.0.1 - - [10/Oct/2026:13:55:38 +0000] "HEAD /b HTTP/1.0" 200 0 "-" "-"`,
		`127.0.0.1 - - [10/Oct/2026:13:55:39 +0000] "-" 408 0 "-" "-"`,
		`127.0.0.1 - - [10/Oct/2026:13:55:40 +0000] "\x16\x03\x01" 400 157 "-" "-"`,
		`127.0.0.1 - - [10/Oct/2026:13:55:41 +0000] "GET /a?x=1 HTTP/1.1" 200 2326 "-" "curl/8.0"`,
		`127.0.0.1 - - [10/Oct/2026:13:55:42 +0000] "CONNECT example.com:443 HTTP/1.1" 400 0 "-" "-"`,
	}, "\n")
	lg, err := ParseLog(strings.NewReader(log), "access.log", "combined", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Targets) != 2 || lg.Targets[0].Label() != "GET /a?x=1" || lg.Targets[0].Weight != 2 || lg.Targets[1].Label() != "HEAD /b" {
		t.Errorf("targets %+v", lg.Targets)
	}
	if want := []int32{0, 1, 0}; len(lg.Order) != 3 || lg.Order[0] != want[0] || lg.Order[1] != want[1] || lg.Order[2] != want[2] {
		t.Errorf("order %v", lg.Order)
	}
	// POST (not replayed), "-", CONNECT skipped; garbage and \x16 malformed.
	if lg.Lines != 8 || lg.Replayed != 3 || lg.Skipped != 3 || lg.Malformed != 2 || lg.FirstBad != 2 {
		t.Errorf("lines %d replayed %d skipped %d malformed %d first bad %d", lg.Lines, lg.Replayed, lg.Skipped, lg.Malformed, lg.FirstBad)
	}
	lg, err = ParseLog(strings.NewReader(log), "access.log", "common", []string{"GET", "POST"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Targets) != 2 || lg.Targets[1].Label() != "POST /form" || lg.Replayed != 3 {
		t.Errorf("common with POST: %+v", lg.Targets)
	}
}

func TestParseLogFormat(t *testing.T) {
	format := `$remote_addr [$time_local] $request_time "${request}" $status $body_bytes_sent rt=$upstream_response_time`
	log := "10.0.0.1 [10/Oct/2026:13:55:36 +0000] 0.012 \"GET /x HTTP/2.0\" 200 5 rt=0.010\n" +
		"10.0.0.1 [10/Oct/2026:13:55:36 +0000] 0.012 \"GET /y HTTP/2.0\" 200 5\n"
	lg, err := ParseLog(strings.NewReader(log), "l", format, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Targets) != 1 || lg.Targets[0].URL != "/x" || lg.Malformed != 1 || lg.FirstBad != 2 {
		t.Errorf("%+v", lg)
	}
	for _, bad := range []string{`$remote_addr $status`, `$request$status`, `${request`} {
		if _, err := ParseLog(strings.NewReader(log), "l", bad, nil); err == nil {
			t.Errorf("format %q accepted", bad)
		}
	}
}

// TestParseLogNone: a log with no usable line is an error naming the
// first bad line.
func TestParseLogNone(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"\nnot a log line\nnor this\n", `access.log:2: no request to replay: does not match the log format (2 lines: 2 malformed, 0 skipped; methods replayed: GET,HEAD)`},
		{`1.2.3.4 - - [t] "POST /x HTTP/1.1" 200 1` + "\n", `access.log:1: no request to replay: method POST not replayed (--replay-methods) (1 lines: 0 malformed, 1 skipped; methods replayed: GET,HEAD)`},
		{"", `access.log: no request to replay: the log is empty`},
	} {
		_, err := ParseLog(strings.NewReader(c.log), "access.log", "", nil)
		var e *Error
		if !errors.As(err, &e) || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.log, err, c.want)
		}
	}
}

// TestParseLogMostFrequent: past MaxLogTargets distinct targets, the
// most frequent are kept and the rest are skipped.
func TestParseLogMostFrequent(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxLogTargets+5; i++ {
		b.WriteString(`h - - [t] "GET /u` + strings.Repeat("x", i%3) + "/" + string(rune('a'+i%26)) + itoa(i) + ` HTTP/1.1" 200 1` + "\n")
	}
	for i := 0; i < 10; i++ {
		b.WriteString(`h - - [t] "GET /hot HTTP/1.1" 200 1` + "\n")
	}
	lg, err := ParseLog(strings.NewReader(b.String()), "l", "common", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Targets) != MaxLogTargets || lg.Targets[len(lg.Targets)-1].URL != "/hot" || lg.Skipped != 6 || lg.Replayed != int64(len(lg.Order)) || lg.Replayed != MaxLogTargets+9 {
		t.Errorf("%d targets, last %s, skipped %d, replayed %d", len(lg.Targets), lg.Targets[len(lg.Targets)-1].URL, lg.Skipped, lg.Replayed)
	}
}

func itoa(i int) string {
	s := ""
	for {
		s = string(rune('0'+i%10)) + s
		i /= 10
		if i == 0 {
			return s
		}
	}
}

func FuzzParseLog(f *testing.F) {
	f.Add(`1.2.3.4 - - [t] "GET /x HTTP/1.1" 200 1 "-" "a"`, Combined)
	f.Add(`x "GET /y"`, `$a "$request"`)
	f.Fuzz(func(t *testing.T, log, format string) {
		lg, err := ParseLog(strings.NewReader(log), "l", format, nil)
		if err != nil {
			return
		}
		var sum int64
		for _, tg := range lg.Targets {
			sum += int64(tg.Weight)
		}
		if sum != lg.Replayed || int64(len(lg.Order)) != lg.Replayed || lg.Replayed+lg.Skipped+lg.Malformed != lg.Lines {
			t.Errorf("counts: %+v", lg)
		}
	})
}
