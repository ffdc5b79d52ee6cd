package stats

import (
	"testing"

	"github.com/backbench/backbench/internal/load"
)

// TestCommandLine: the command line reads back in a shell, every argument
// with a space or a shell character quoted (a quote inside too), and
// credentials redacted unless kept.
func TestCommandLine(t *testing.T) {
	args := []string{"-n", "100", "-H", "Authorization: Bearer x", "--label", "it's", "", "http://h/a?b=1&c=2"}
	tests := []struct {
		name string
		p    Privacy
		want string
	}{
		{"redacted", Privacy{}, `backbench bench -n 100 -H 'Authorization: ` + load.Redacted + `' --label 'it'\''s' '' 'http://h/a?b=1&c=2'`},
		{"kept", Privacy{KeepSecrets: true}, `backbench bench -n 100 -H 'Authorization: Bearer x' --label 'it'\''s' '' 'http://h/a?b=1&c=2'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.CommandLine("bench", args); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
