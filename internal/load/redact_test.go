package load

import (
	"slices"
	"testing"
)

// TestRedactArgs checks every way pflag reads a credential's value, and
// that what is no credential stays as typed.
func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"bench", "-H", "Authorization: Bearer x"}, []string{"bench", "-H", "Authorization: REDACTED"}},
		{[]string{"-H", "authorization:x"}, []string{"-H", "authorization: REDACTED"}},
		{[]string{"-HProxy-Authorization: x"}, []string{"-HProxy-Authorization: REDACTED"}},
		{[]string{"--header=Cookie: a=b"}, []string{"--header=Cookie: REDACTED"}},
		{[]string{"--header", "SET-COOKIE: a=b"}, []string{"--header", "SET-COOKIE: REDACTED"}},
		{[]string{"-kH", "Cookie: a=b"}, []string{"-kH", "Cookie: REDACTED"}},
		{[]string{"-H", "X-Trace: 1", "-H", "Accept: */*"}, []string{"-H", "X-Trace: 1", "-H", "Accept: */*"}},
		{[]string{"-H", "X-Api-Key: k", "-HX-Auth-Token:t"}, []string{"-H", "X-Api-Key: REDACTED", "-HX-Auth-Token: REDACTED"}},
		{[]string{"-A", "u:p"}, []string{"-A", "REDACTED"}},
		{[]string{"-Au:p"}, []string{"-AREDACTED"}},
		{[]string{"--basic-auth=u:p"}, []string{"--basic-auth=REDACTED"}},
		{[]string{"--basic-auth", "u:p"}, []string{"--basic-auth", "REDACTED"}},
		{[]string{"-C", "sid=abc"}, []string{"-C", "sid=REDACTED"}},
		{[]string{"-Csid=abc", "--cookie=x=y"}, []string{"-Csid=REDACTED", "--cookie=x=REDACTED"}},
		{[]string{"--param", "DB_PASSWORD=pw", "--param", "APP_ENV=prod"}, []string{"--param", "DB_PASSWORD=REDACTED", "--param", "APP_ENV=prod"}},
		{[]string{"--param=api_key=k", "--param=Session_Token=t"}, []string{"--param=api_key=REDACTED", "--param=Session_Token=REDACTED"}},
		{[]string{"-n", "100", "-c10", "-m", "GET"}, []string{"-n", "100", "-c10", "-m", "GET"}},
		// -n takes a value: "-nA" is -n with the value A, not -A.
		{[]string{"-n5", "-A"}, []string{"-n5", "-A"}},
		{[]string{"http://user:pw@127.0.0.1:8080/x"}, []string{"http://user:REDACTED@127.0.0.1:8080/x"}},
		// A secret header wherever it stands (taken by another flag).
		{[]string{"-m", "Cookie: a=b"}, []string{"-m", "Cookie: REDACTED"}},
		// After "--" nothing is a flag.
		{[]string{"--", "-A", "u:p"}, []string{"--", "-A", "u:p"}},
	} {
		if got := RedactArgs(tc.in, ""); !slices.Equal(got, tc.want) {
			t.Errorf("RedactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	in := []string{"-A", "u:p"}
	RedactArgs(in, "")
	if in[1] != "u:p" {
		t.Errorf("RedactArgs changed its argument")
	}
}

// TestSecretParam checks the names that look like secrets.
func TestSecretParam(t *testing.T) {
	for name, want := range map[string]bool{"DB_PASSWORD": true, "passwd": true, "MY_SECRET": true, "token": true,
		"API_KEY": true, "HTTP_AUTHORIZATION": true, "HTTP_COOKIE": true, "AWS_CREDENTIALS": true,
		"APP_ENV": false, "SCRIPT_FILENAME": false, "REQUEST_METHOD": false} {
		if SecretParam(name) != want {
			t.Errorf("SecretParam(%q) = %v", name, !want)
		}
	}
}

// TestSecretQuery: a query parameter is a credential when its name, or a
// word of it, is one of the list, in any case; a name that merely holds
// one of the words inside another word is not.
func TestSecretQuery(t *testing.T) {
	for _, name := range append(SecretQueryWords(), "API_KEY", "ApiKey", "apiKey", "Token", "client_secret",
		"X-Amz-Signature", "refresh_token", "user[password]", "api%5Fkey", "SESSION", "auth.token", "id_token") {
		if !SecretQuery(name) {
			t.Errorf("SecretQuery(%q) = false", name)
		}
	}
	for _, name := range []string{"page", "monkey", "author", "design", "keyword", "tokens", "q", "", "sessions", "signed"} {
		if SecretQuery(name) {
			t.Errorf("SecretQuery(%q) = true", name)
		}
	}
}

// TestRedactURL: the values of credential parameters and the password of
// the user information read REDACTED; every other byte stays as typed,
// URLs that do not parse included.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://h/?api_key=k3y&token=t0k3n", "http://h/?api_key=REDACTED&token=REDACTED"},
		{"http://h/p?page=2&access_token=x&q=a%20b", "http://h/p?page=2&access_token=REDACTED&q=a%20b"},
		{"http://h/?a=1;sig=abc#frag", "http://h/?a=1;sig=REDACTED#frag"},
		{"http://h/?key", "http://h/?key"},
		{"http://h/?key=", "http://h/?key=REDACTED"},
		{"http://h/?Api_Key=1&api_key=2", "http://h/?Api_Key=REDACTED&api_key=REDACTED"},
		{"http://h/?page=2", "http://h/?page=2"},
		{"http://h/", "http://h/"},
		{"http://u:pw@h:8080/x?key=1", "http://u:REDACTED@h:8080/x?key=REDACTED"},
		{"http://u@h/", "http://u@h/"},
		{"http://u:p@ss@h/", "http://u:REDACTED@h/"},
		{"http://h/a@b:c", "http://h/a@b:c"},
		{"fcgi://unix:/run/a.sock:/x.php?password=p", "fcgi://unix:/run/a.sock:/x.php?password=REDACTED"},
		{"http://u:pw@h:bad port/?secret=s", "http://u:REDACTED@h:bad port/?secret=REDACTED"},
		{"/x?session=abc", "/x?session=REDACTED"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	args := []string{"bench", "-n", "1", "http://h/?api_key=k", "a=http://u:p@h/?token=t", "--proxy=http://h/?sig=s", "page?key=1"}
	want := []string{"bench", "-n", "1", "http://h/?api_key=REDACTED", "a=http://u:REDACTED@h/?token=REDACTED",
		"--proxy=http://h/?sig=REDACTED", "page?key=1"}
	if got := RedactArgs(args, ""); !slices.Equal(got, want) {
		t.Errorf("RedactArgs(%q) = %q, want %q", args, got, want)
	}
}
