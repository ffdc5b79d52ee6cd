package plan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/plan"
)

// TestCredentialURLRefused: a URL with user information is refused with
// its password redacted in the error, and so is a bad port with a key in
// the query, by the plans of bench (-n 1), sweep (-n 1 -c 1) and
// capacity (--max 20 --slo p99<=1s): the error says why, shows REDACTED,
// and holds neither secret.
func TestCredentialURLRefused(t *testing.T) {
	const password, secret = "Pw9userinfoSECRET", "Qz8apikeySECRET"
	query := "?page=2&api_key=" + secret
	for _, bad := range []string{"http://user:" + password + "@127.0.0.1:1/", "http://127.0.0.1:0/" + query} {
		builds := map[string]func() error{
			"bench": func() error {
				o := plan.Defaults(bad)
				_, err := o.Build()
				return err
			},
			"sweep": func() error {
				l := plan.Defaults("")
				l.Requests, l.RequestsSet = 1, true
				so := plan.SweepOptions{Load: l, Args: []string{bad}, Levels: "1"}
				_, err := so.Build()
				return err
			},
			"capacity": func() error {
				l := plan.Defaults(bad)
				l.SLO, l.Duration = []string{"p99<=1s"}, plan.CapacityStepTime
				co := plan.CapacityOptions{Load: l, Model: capacity.ModelOpen, Max: 20, Resolution: 0.02, ResolutionText: "2%",
					MaxTime: 5 * time.Minute, Warmup: time.Second}
				_, err := co.Build()
				return err
			},
		}
		for name, build := range builds {
			err := build()
			if err == nil {
				t.Errorf("%s %s: accepted", name, bad)
				continue
			}
			msg := err.Error()
			if strings.Contains(bad, "@") && !strings.Contains(msg, "user info") {
				t.Errorf("%s %s: the error does not say why: %s", name, bad, msg)
			}
			if !strings.Contains(msg, load.Redacted) {
				t.Errorf("%s %s: the error shows no %s: %s", name, bad, load.Redacted, msg)
			}
			for _, s := range []string{password, secret} {
				if strings.Contains(msg, s) {
					t.Errorf("%s %s: the error holds %s: %s", name, bad, s, msg)
				}
			}
		}
	}
}
