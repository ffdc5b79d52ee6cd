package load

import (
	"net/url"
	"strings"
)

// Redacted is the mark that replaces a credential in anything backbench
// writes: the recorded command line, headers and params.
const Redacted = "REDACTED"

// secretParamWords mark a FastCGI param name as a secret when one of them
// is a substring of it, in any case (DB_PASSWORD, API_KEY, HTTP_COOKIE).
var secretParamWords = []string{"PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY", "AUTH", "COOKIE", "CREDENTIAL"}

// SecretHeader reports whether a header's value is a credential:
// Authorization, Proxy-Authorization, Cookie and Set-Cookie, and any other
// header whose name holds one of SecretParam's words (X-Api-Key,
// X-Auth-Token), in any case. A header redacted for nothing costs less
// than a key left in a shared file.
func SecretHeader(name string) bool { return SecretParam(strings.TrimSpace(name)) }

// SecretParam reports whether a FastCGI param's value is a secret: its name
// holds PASSWORD, PASSWD, SECRET, TOKEN, KEY, AUTH, COOKIE or CREDENTIAL, in
// any case.
func SecretParam(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range secretParamWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactHeader returns a header's value, or Redacted when SecretHeader
// says the value is a credential.
func RedactHeader(name, value string) string {
	if SecretHeader(name) {
		return Redacted
	}
	return value
}

// RedactParam returns a param's value, or Redacted when SecretParam says
// the value is a secret.
func RedactParam(name, value string) string {
	if SecretParam(name) {
		return Redacted
	}
	return value
}

// redactHeaderArg redacts an -H value, "Name: value" or "Name:value".
func redactHeaderArg(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok || !SecretHeader(name) {
		return h
	}
	return name + ": " + Redacted
}

// redactParamArg redacts a --param value, "NAME=VALUE".
func redactParamArg(p string) string {
	name, _, ok := strings.Cut(p, "=")
	if !ok || !SecretParam(name) {
		return p
	}
	return name + "=" + Redacted
}

// redactCookieArg redacts a -C value, "name=value": the name stays.
func redactCookieArg(c string) string {
	if name, _, ok := strings.Cut(c, "="); ok {
		return name + "=" + Redacted
	}
	return Redacted
}

// redactURLArg redacts the password of a URL's user information
// (http://user:password@host/).
func redactURLArg(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	u.User = url.UserPassword(u.User.Username(), Redacted)
	return u.String()
}

// DefaultValueShorts are the one-letter flags of backbench's commands that
// take a value (-n 10, -n10), for RedactArgs.
const DefaultValueShorts = "AcCegHmnopsTtuvX"

// RedactArgs returns a copy of a command line (without or with the
// program name) with every credential replaced by Redacted: the values of
// -H/--header whose name SecretHeader marks (Authorization, Cookie, ...),
// of -A/--basic-auth, of -C/--cookie (the cookie's name stays),
// of --param NAME=VALUE whose NAME looks like a secret (SecretParam), and
// the password of a URL. Every way pflag reads a value is understood: "-H
// v", "-Hv", "-kH v" (letters clustered), "--header v" and "--header=v".
// valueShorts lists the one-letter flags that take a value (a cluster ends
// at the first of them); "" means DefaultValueShorts.
//
// Whatever the position, an argument that reads as a secret header ("Cookie:
// a=b") is redacted too: a value taken by another flag by mistake is a
// credential all the same.
func RedactArgs(args []string, valueShorts string) []string {
	if valueShorts == "" {
		valueShorts = DefaultValueShorts
	}
	out := make([]string, len(args))
	copy(out, args)
	byFlag := func(short byte, long string) func(string) string {
		switch {
		case short == 'H' || long == "header":
			return redactHeaderArg
		case short == 'A' || long == "basic-auth":
			return func(string) string { return Redacted }
		case short == 'C' || long == "cookie":
			return redactCookieArg
		case long == "param":
			return redactParamArg
		}
		return nil
	}
	flags := true
	for i := 0; i < len(out); i++ {
		a := out[i]
		var red func(string) string
		next := false // the value is the next argument
		prefix, value := "", ""
		switch {
		case !flags || a == "-" || !strings.HasPrefix(a, "-"):
		case a == "--":
			flags = false
		case strings.HasPrefix(a, "--"):
			name, v, glued := strings.Cut(a[2:], "=")
			if red = byFlag(0, name); red != nil {
				if glued {
					prefix, value = a[:len(a)-len(v)], v
				} else {
					next = true
				}
			}
		default: // a cluster of one-letter flags
			for j := 1; j < len(a); j++ {
				c := a[j]
				if !strings.ContainsRune(valueShorts, rune(c)) {
					continue
				}
				red = byFlag(c, "")
				if j+1 < len(a) {
					prefix, value = a[:j+1], a[j+1:]
				} else {
					next = true
				}
				break
			}
		}
		switch {
		case red != nil && next && i+1 < len(out):
			i++
			out[i] = red(out[i])
		case red != nil && !next:
			out[i] = prefix + red(value)
		default:
			out[i] = redactURLArg(redactHeaderArg(a))
		}
	}
	return out
}
