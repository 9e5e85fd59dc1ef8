package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
)

// sipLogin logs in to a SIP2 server on d as a terminal does (93, plain text),
// so that what the admin pages change is checked where it takes effect. It
// returns nil for a login the server accepts (941).
func sipLogin(t *testing.T, d *db.DB, username, password string) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := sip.New(sip.Config{DB: d})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("stop the SIP server: %v", err)
		}
		<-served
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "9300CN%s|CO%s|\r", username, password); err != nil {
		t.Fatal(err)
	}
	answer, err := bufio.NewReader(c).ReadString('\r')
	if err != nil {
		t.Fatalf("the login's answer: %v", err)
	}
	switch {
	case strings.HasPrefix(answer, "941"):
		return nil
	case strings.HasPrefix(answer, "940"):
		return fmt.Errorf("login refused (%q)", answer)
	}
	t.Fatalf("login answered %q, want 941 or 940", answer)
	return nil
}
