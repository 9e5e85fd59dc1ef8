package hardening

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCGISecureCookie runs the binary as a CGI program, as Apache would, for a
// sign-in: over HTTPS (the web server sets HTTPS=on) the session cookie is marked
// Secure, as well as HttpOnly and SameSite=Lax; over plain HTTP it is not Secure.
func TestCGISecureCookie(t *testing.T) {
	path := newDB(t)
	body := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
	for _, https := range []bool{true, false} {
		env := []string{
			"GATEWAY_INTERFACE=CGI/1.1", "SERVER_PROTOCOL=HTTP/1.1", "SERVER_SOFTWARE=test",
			"SERVER_NAME=desk.library.example", "SERVER_PORT=443", "HTTP_HOST=desk.library.example",
			"REQUEST_METHOD=POST", "SCRIPT_NAME=", "PATH_INFO=/login", "REQUEST_URI=/login", "QUERY_STRING=",
			"REMOTE_ADDR=127.0.0.1", "CONTENT_TYPE=application/x-www-form-urlencoded",
			"CONTENT_LENGTH=" + strconv.Itoa(len(body)), "STACKS_DB=" + path, "PATH=" + os.Getenv("PATH"),
		}
		if https {
			env = append(env, "HTTPS=on")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, stacksBin)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(body)
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("stacks as CGI: %v\n%s", err, out)
		}
		head, _, _ := strings.Cut(string(out), "\r\n\r\n")
		var cookie string
		for _, line := range strings.Split(head, "\r\n") {
			if strings.HasPrefix(line, "Set-Cookie: stacks_session=") {
				cookie = line
			}
		}
		if !strings.Contains(head, "Status: 303") || cookie == "" {
			t.Fatalf("CGI sign-in (HTTPS %v) answered:\n%s", https, head)
		}
		for _, want := range []string{"HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("%s lacks %s", cookie, want)
			}
		}
		if got := strings.Contains(cookie, "; Secure"); got != https {
			t.Errorf("HTTPS=%v: %s; Secure is %v", https, cookie, got)
		}
	}
}
