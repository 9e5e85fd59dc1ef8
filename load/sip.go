package load

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/sip"
)

// SIPConfig is how the SIP2 virtual users connect: each opens one TCP connection
// to Addr and logs in as User/Password, as a self-check machine does, and sends
// every patron's PIN.
type SIPConfig struct {
	Addr, User, Password string
	// Institution is sent as AO (the demo's kiosk account is for CEN).
	Institution string
	// PIN is the patrons' PIN (the demo gives every patron 1234).
	PIN string
}

// SIPDialer returns a Dialer of SIP2 terminals.
func SIPDialer(cfg SIPConfig) Dialer {
	return func(ctx context.Context, i int) (Terminal, error) {
		c, err := sip.Dial(ctx, cfg.Addr)
		if err != nil {
			return nil, err
		}
		if err := c.Login(cfg.User, cfg.Password, ""); err != nil {
			c.Close()
			return nil, err
		}
		return &sipTerminal{c: c, cfg: cfg}, nil
	}
}

// sipTerminal is a self-check terminal: patron status (23) when a card is
// scanned, checkout (11) and checkin (09) for each item.
type sipTerminal struct {
	c   *sip.Client
	cfg SIPConfig
}

// exchange sends msg and checks that the answer starts with want (the response's
// code and its ok flag).
func (t *sipTerminal) exchange(ctx context.Context, what, msg, want string) (string, error) {
	if d, ok := ctx.Deadline(); ok {
		t.c.Timeout = time.Until(d)
	}
	resp, err := t.c.Send(msg)
	if err != nil {
		return resp, fmt.Errorf("%s: %w", what, err)
	}
	if !strings.HasPrefix(resp, want) {
		return resp, fmt.Errorf("%s: answered %q, expected %s...%s", what, clip(resp, 6), want, screenMessage(resp))
	}
	return resp, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// screenMessage returns ": " and the response's screen message (AF), if any.
func screenMessage(resp string) string {
	for _, f := range strings.Split(resp, "|")[1:] {
		if strings.HasPrefix(f, "AF") && len(f) > 2 {
			return ": " + f[2:]
		}
	}
	return ""
}

func (t *sipTerminal) Patron(ctx context.Context, s *Share) (Result, error) {
	msg := "23001" + sip.Date(time.Now()) + "AO" + t.cfg.Institution + "|AA" + s.Card + "|AC|AD" + t.cfg.PIN + "|"
	resp, err := t.exchange(ctx, "patron status "+s.Card, msg, "24")
	if err == nil && (!strings.Contains(resp, "|BLY|") || !strings.Contains(resp, "|CQY|")) {
		err = fmt.Errorf("patron status %s: the card or PIN was not accepted (BL/CQ not Y)%s", s.Card, screenMessage(resp))
	}
	return Result{}, err
}

func (t *sipTerminal) Checkout(ctx context.Context, s *Share, barcode string) (Result, error) {
	msg := "11YN" + sip.Date(time.Now()) + strings.Repeat(" ", 18) + "AO" + t.cfg.Institution +
		"|AA" + s.Card + "|AB" + barcode + "|AC|AD" + t.cfg.PIN + "|"
	_, err := t.exchange(ctx, "checkout "+barcode, msg, "121")
	return Result{}, err
}

func (t *sipTerminal) Checkin(ctx context.Context, barcode string) (Result, error) {
	now := sip.Date(time.Now())
	msg := "09N" + now + now + "AP|AO" + t.cfg.Institution + "|AB" + barcode + "|AC|"
	_, err := t.exchange(ctx, "checkin "+barcode, msg, "101")
	return Result{}, err
}

// EndVisit does nothing: a terminal keeps no visit between messages.
func (t *sipTerminal) EndVisit(context.Context) error { return nil }

func (t *sipTerminal) Close() error { return t.c.Close() }
