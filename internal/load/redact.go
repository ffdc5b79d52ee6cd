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

// redactURLArg redacts a URL wherever it stands in an argument (a target,
// LABEL=URL, --flag=URL): RedactURL from its scheme on.
func redactURLArg(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	// The scheme starts after the last byte before "://" that no scheme
	// holds ("a=http://", "--proxy=http://").
	j := i
	for j > 0 && isSchemeByte(s[j-1]) {
		j--
	}
	return s[:j] + RedactURL(s[j:])
}

func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// secretQueryWords are the names of query parameters that hold a
// credential (SecretQuery).
var secretQueryWords = []string{"api_key", "apikey", "key", "token", "access_token", "auth", "password",
	"passwd", "secret", "signature", "sig", "session"}

// SecretQueryWords returns the names that mark a query parameter as a
// credential (SecretQuery), for the documentation and the tests.
func SecretQueryWords() []string { return append([]string(nil), secretQueryWords...) }

// SecretQuery reports whether a query parameter's value is a credential:
// its name (percent-decoded), or one of the words it is made of, is one of
// SecretQueryWords, in any case. The words of a name are split at every
// byte that is neither a letter nor a digit and where a lower-case letter
// is followed by an upper-case one: client_secret, X-Amz-Signature,
// refresh_token, apiKey and user[password] are credentials; monkey,
// author, design and keyword are not.
func SecretQuery(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	if isSecretQueryWord(name) {
		return true
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		split := i == len(name) || !isAlnum(name[i])
		camel := i > 0 && i < len(name) && 'a' <= name[i-1] && name[i-1] <= 'z' && 'A' <= name[i] && name[i] <= 'Z'
		if !split && !camel {
			continue
		}
		if i > start && isSecretQueryWord(name[start:i]) {
			return true
		}
		start = i
		if split {
			start = i + 1
		}
	}
	return false
}

func isSecretQueryWord(w string) bool {
	for _, s := range secretQueryWords {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// RedactQuery returns a request URI or URL with the value of every query
// parameter that SecretQuery marks replaced by Redacted
// ("/?api_key=REDACTED&page=2"); the rest is kept byte for byte. The
// query starts at the first "?" and ends at a "#"; its parameters are
// separated by "&" or ";". A secret parameter without "=" is kept as it
// is (it has no value).
func RedactQuery(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	query, frag := s[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	var b strings.Builder
	b.WriteString(s[:q+1])
	changed := false
	for i := 0; ; {
		j := strings.IndexAny(query[i:], "&;")
		end := len(query)
		if j >= 0 {
			end = i + j
		}
		part := query[i:end]
		if name, _, ok := strings.Cut(part, "="); ok && SecretQuery(name) {
			part = name + "=" + Redacted
			changed = true
		}
		b.WriteString(part)
		if j < 0 {
			break
		}
		b.WriteByte(query[end])
		i = end + 1
	}
	if !changed {
		return s
	}
	b.WriteString(frag)
	return b.String()
}

// RedactURL returns a URL as typed with its credentials replaced by
// Redacted: the password of its user information
// (http://user:REDACTED@host/) and the values of the query parameters
// that SecretQuery marks (?api_key=REDACTED). The rest is kept byte for
// byte, whether or not the URL would parse (nginx's http://unix:/path:/uri
// form included), so that it may stand in an error about that URL.
func RedactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		// The authority ends at the first "/", "?" or "#"; its user
		// information at its last "@".
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			if c := strings.IndexByte(rest[:at], ':'); c >= 0 {
				s = s[:i+3] + rest[:c+1] + Redacted + rest[at:]
			}
		}
	}
	return RedactQuery(s)
}

// DefaultValueShorts are the one-letter flags of backbench's commands that
// take a value (-n 10, -n10), for RedactArgs.
const DefaultValueShorts = "AcCegHmnopsTtuvX"

// RedactArgs returns a copy of a command line (without or with the
// program name) with every credential replaced by Redacted: the values of
// -H/--header whose name SecretHeader marks (Authorization, Cookie, ...),
// of -A/--basic-auth, of -C/--cookie (the cookie's name stays),
// of --param NAME=VALUE whose NAME looks like a secret (SecretParam), and
// in any argument that holds a URL, its password and the values of its
// query parameters that SecretQuery marks (RedactURL). Every way pflag reads a value is understood: "-H
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
