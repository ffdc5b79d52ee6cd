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
