package sip

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// Client is a small SIP2 client: a terminal's side of a connection, for the
// sip-client command, the tests and the benchmarks.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
	// ErrorDetection adds a sequence number and checksum (AY, AZ) to each request
	// and checks the checksum of each response.
	ErrorDetection bool
	// Timeout bounds each exchange (default 10 seconds).
	Timeout time.Duration
	seq     int
}

// Dial connects to a SIP2 server.
func Dial(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the SIP server at %s: %w", addr, err)
	}
	return &Client{conn: conn, r: bufio.NewReader(conn), Timeout: 10 * time.Second}, nil
}

// DialTLS connects to a SIP2 server's TLS listener and completes the handshake,
// checking the server's certificate against cfg (nil: the system's roots and the
// host in addr). TLS 1.2 is the least it accepts, as the server does.
func DialTLS(ctx context.Context, addr string, cfg *tls.Config) (*Client, error) {
	if cfg == nil {
		cfg = &tls.Config{}
	} else {
		cfg = cfg.Clone()
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	d := tls.Dialer{Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect over TLS to the SIP server at %s: %w", addr, err)
	}
	return &Client{conn: conn, r: bufio.NewReader(conn), Timeout: 10 * time.Second}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Exchange sends one message (without terminator; error detection is added when on)
// and returns the message as sent and the response, without its terminator.
func (c *Client) Exchange(msg string) (sent, resp string, err error) {
	sent = msg
	if c.ErrorDetection {
		sent = AddErrorDetection(msg, c.seq)
		c.seq = (c.seq + 1) % 10
	}
	c.conn.SetDeadline(time.Now().Add(c.Timeout))
	if _, err := c.conn.Write([]byte(sent + "\r")); err != nil {
		return sent, "", fmt.Errorf("send: %w", err)
	}
	line, err := c.r.ReadString('\r')
	if err != nil {
		return sent, "", fmt.Errorf("read the response: %w", err)
	}
	// A server that ends lines with CR LF leaves the LF at the start of the next.
	for len(line) > 0 && (line[0] == '\n') {
		line = line[1:]
	}
	resp = line[:len(line)-1]
	if c.ErrorDetection && len(resp) >= 6 && resp[len(resp)-6:len(resp)-4] == "AZ" {
		if !checksumMatches([]byte(resp[:len(resp)-4]), []byte(resp[len(resp)-4:])) {
			return sent, resp, ErrChecksum
		}
	}
	return sent, resp, nil
}

// Write sends one message (without terminator; error detection is added when on)
// without waiting for its answer: a test of a message that gets none, or a
// terminal that does not wait.
func (c *Client) Write(msg string) error {
	if c.ErrorDetection {
		msg = AddErrorDetection(msg, c.seq)
		c.seq = (c.seq + 1) % 10
	}
	c.conn.SetWriteDeadline(time.Now().Add(c.Timeout))
	if _, err := c.conn.Write([]byte(msg + "\r")); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// Send is Exchange without the message as sent.
func (c *Client) Send(msg string) (string, error) {
	_, resp, err := c.Exchange(msg)
	return resp, err
}

// ErrLoginRefused is a login the server answered with 940.
var ErrLoginRefused = errors.New("the SIP server refused the login (check the username and password)")

// LoginMessage returns a login request (93) with plain-text user id and password.
func LoginMessage(user, password, location string) string {
	return "9300CN" + user + "|CO" + password + "|CP" + location + "|"
}

// Login logs in and checks the answer.
func (c *Client) Login(user, password, location string) error {
	resp, err := c.Send(LoginMessage(user, password, location))
	if err != nil {
		return err
	}
	if len(resp) < 3 || resp[:3] != "941" {
		return ErrLoginRefused
	}
	return nil
}

// Date formats t as a SIP date (18 characters, local time).
func Date(t time.Time) string { return t.Format(dateLayout) }
