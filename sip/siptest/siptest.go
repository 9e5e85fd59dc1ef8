// Package siptest helps tests check SIP2 settings where they take effect: at a
// terminal's login.
package siptest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
)

// Login starts a SIP2 server on d, logs in to it as a terminal does (93), and
// stops it. It returns nil for a login the server accepts and
// sip.ErrLoginRefused for one it refuses; anything else fails the test.
func Login(t *testing.T, d *db.DB, username, password string) error {
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
	c, err := sip.Dial(context.Background(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Login(username, password, "")
	if err != nil && !errors.Is(err, sip.ErrLoginRefused) {
		t.Fatalf("log in as %s: %v", username, err)
	}
	return err
}
