package notices

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Outgoing is one email to send.
type Outgoing struct {
	// ID is the message's id in the queue; the Message-ID header is built from
	// it, so a message sent twice after a crash is recognisably the same one.
	ID      int64
	To      string
	Subject string
	Text    string
	HTML    string
}

// Sender sends email. Send returns one error per message (nil when sent); a
// *SendError says whether trying again later may help.
type Sender interface {
	Send(ctx context.Context, msgs []Outgoing) []error
}

// SendError is a refusal by the relay or a failure to reach it.
type SendError struct {
	// Temporary: a 4xx answer or a network failure; try again later.
	Temporary bool
	Err       error
}

func (e *SendError) Error() string { return e.Err.Error() }
func (e *SendError) Unwrap() error { return e.Err }

// SMTPConfig configures the relay email goes through.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string
	Password string
	// From is the sender address, e.g. "Stacks Library <library@example.org>".
	From string
	// StartTLS: "mandatory" (the default: never send in clear), "opportunistic",
	// or "none" (a relay on this host), or "tls" for implicit TLS (port 465).
	StartTLS string
	// TLSConfig overrides the TLS settings (tests trust their own certificate).
	TLSConfig *tls.Config
	// Timeout bounds a connection (default 30 s).
	Timeout time.Duration
	// HELO is the name sent to the relay (default: the relay's default).
	HELO string
}

// Configured reports whether a relay is set.
func (c SMTPConfig) Configured() bool { return c.Host != "" }

// Validate checks the settings before the server starts.
func (c SMTPConfig) Validate() error {
	if !c.Configured() {
		return nil
	}
	if c.From == "" {
		return stacks.FieldErrorf("smtp_from", stacks.EINVALID, "Set the sender address (--smtp-from) for notices sent through %s.", c.Host)
	}
	m := mail.NewMsg()
	if err := m.From(c.From); err != nil {
		return stacks.FieldErrorf("smtp_from", stacks.EINVALID, "The sender address %q is not an email address.", c.From)
	}
	switch c.StartTLS {
	case "", "mandatory", "opportunistic", "none", "tls":
	default:
		return stacks.FieldErrorf("smtp_starttls", stacks.EINVALID, "--smtp-starttls is mandatory, opportunistic, none or tls, not %q.", c.StartTLS)
	}
	if c.Port < 0 || c.Port > 65535 {
		return stacks.FieldErrorf("smtp_port", stacks.EINVALID, "The SMTP port must be between 1 and 65535.")
	}
	if c.Username != "" && c.StartTLS == "none" {
		return stacks.FieldErrorf("smtp_starttls", stacks.EINVALID, "The SMTP password would cross the network in clear: use --smtp-starttls mandatory (or tls), or no --smtp-user with a relay on this host.")
	}
	if (c.Username == "") != (c.Password == "") {
		return stacks.FieldErrorf("smtp_user", stacks.EINVALID, "Give both the SMTP user name and its password, or neither.")
	}
	return nil
}

// Describe says where mail goes, for the settings page and the log (never the
// password).
func (c SMTPConfig) Describe() string {
	if !c.Configured() {
		return "no relay configured: notices stay queued"
	}
	s := net.JoinHostPort(c.Host, strconv.Itoa(c.port()))
	tlsMode := c.StartTLS
	if tlsMode == "" {
		tlsMode = "mandatory"
	}
	s += ", STARTTLS " + tlsMode
	if c.StartTLS == "tls" {
		s = net.JoinHostPort(c.Host, strconv.Itoa(c.port())) + ", implicit TLS"
	}
	if c.Username != "" {
		s += ", as " + c.Username
	}
	return s + ", from " + c.From
}

func (c SMTPConfig) port() int {
	if c.Port != 0 {
		return c.Port
	}
	if c.StartTLS == "tls" {
		return 465
	}
	return 587
}

// SMTPSender sends through an SMTP relay with go-mail: one connection for a
// batch, STARTTLS and authentication as configured.
type SMTPSender struct {
	Config SMTPConfig
}

func (s SMTPSender) client() (*mail.Client, error) {
	c := s.Config
	opts := []mail.Option{mail.WithPort(c.port()), mail.WithTimeout(cmp(c.Timeout, 30*time.Second))}
	switch c.StartTLS {
	case "", "mandatory":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case "opportunistic":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	case "tls":
		opts = append(opts, mail.WithSSL())
	}
	if c.TLSConfig != nil {
		opts = append(opts, mail.WithTLSConfig(c.TLSConfig))
	} else {
		opts = append(opts, mail.WithTLSConfig(&tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}))
	}
	if c.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(c.Username), mail.WithPassword(c.Password))
	}
	if c.HELO != "" {
		opts = append(opts, mail.WithHELO(c.HELO))
	}
	return mail.NewClient(c.Host, opts...)
}

func cmp(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Send implements Sender.
func (s SMTPSender) Send(ctx context.Context, msgs []Outgoing) []error {
	errs := make([]error, len(msgs))
	var ms []*mail.Msg
	var idx []int
	domain := "stacks.invalid"
	if _, d, ok := strings.Cut(s.Config.From, "@"); ok {
		domain = strings.Trim(d, "> ")
	}
	for i, o := range msgs {
		m := mail.NewMsg()
		if err := m.From(s.Config.From); err != nil {
			errs[i] = &SendError{Err: fmt.Errorf("sender address %q: %w", s.Config.From, err)}
			continue
		}
		if err := m.To(o.To); err != nil {
			errs[i] = &SendError{Err: fmt.Errorf("address %q: %w", o.To, err)}
			continue
		}
		m.Subject(o.Subject)
		if o.ID != 0 {
			m.SetMessageIDWithValue(fmt.Sprintf("notice-%d@%s", o.ID, domain))
		} else {
			m.SetMessageID()
		}
		m.SetDate()
		m.SetBodyString(mail.TypeTextPlain, o.Text)
		if o.HTML != "" {
			m.AddAlternativeString(mail.TypeTextHTML, o.HTML)
		}
		ms = append(ms, m)
		idx = append(idx, i)
	}
	if len(ms) == 0 {
		return errs
	}
	c, err := s.client()
	if err != nil {
		for _, i := range idx {
			errs[i] = &SendError{Err: fmt.Errorf("SMTP settings: %w", err)}
		}
		return errs
	}
	err = c.DialAndSendWithContext(ctx, ms...)
	for k, m := range ms {
		i := idx[k]
		switch {
		case m.HasSendError():
			se := m.SendError()
			var mse *mail.SendError
			temp := errors.As(se, &mse) && mse.IsTemp()
			errs[i] = &SendError{Temporary: temp, Err: se}
		case err != nil && !m.IsDelivered():
			// Could not connect, authenticate or start TLS: nothing was sent;
			// try again later (a settings mistake shows in the error).
			errs[i] = &SendError{Temporary: true, Err: err}
		}
	}
	return errs
}

// DeliverResult counts one delivery pass.
type DeliverResult struct {
	Sent, Retry, Failed int
}

// Deliver sends the email messages that are due, at most limit (default 200),
// through sender. Each is claimed first (its attempt counted and its next attempt
// set by the backoff) so that a crash during the send, or a second process,
// never sends it at once again; then marked sent, or given its error: a
// temporary refusal waits for its next attempt, a permanent one (or the last
// attempt) fails it. With a nil sender nothing is sent and messages stay pending.
func Deliver(ctx context.Context, d *db.DB, sender Sender, limit int) (DeliverResult, error) {
	var res DeliverResult
	if sender == nil {
		return res, nil
	}
	if limit <= 0 {
		limit = 200
	}
	// Most passes find nothing due: find out with a read, so an idle server
	// does not write (and fsync) every minute.
	var due bool
	err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM notice_messages
			WHERE status = 'pending' AND delivery = 'email' AND next_attempt_at <= ?)`, db.FormatTime(tx.Now())).Scan(&due)
	})
	if err != nil || !due {
		return res, err
	}
	var out []Outgoing
	var attempts []int
	err = d.Write(ctx, func(tx *db.Tx) error {
		out, attempts = nil, nil
		now := tx.Now()
		rows, err := tx.Query(`SELECT id, to_address, subject, body_text, body_html, attempts FROM notice_messages
			WHERE status = 'pending' AND delivery = 'email' AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ?`, db.FormatTime(now), limit)
		if err != nil {
			return fmt.Errorf("read notices to send: %w", err)
		}
		for rows.Next() {
			var o Outgoing
			var a int
			if err := rows.Scan(&o.ID, &o.To, &o.Subject, &o.Text, &o.HTML, &a); err != nil {
				rows.Close()
				return err
			}
			out, attempts = append(out, o), append(attempts, a+1)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, o := range out {
			if _, err := tx.Exec(`UPDATE notice_messages SET attempts = ?, next_attempt_at = ? WHERE id = ?`,
				attempts[i], db.FormatTime(now.Add(Backoff(attempts[i]))), o.ID); err != nil {
				return fmt.Errorf("claim notice %d: %w", o.ID, err)
			}
		}
		return nil
	})
	if err != nil || len(out) == 0 {
		return res, err
	}
	errs := sender.Send(ctx, out)
	err = d.Write(ctx, func(tx *db.Tx) error {
		res = DeliverResult{}
		now := db.FormatTime(tx.Now())
		for i, o := range out {
			var err error
			switch e := errs[i]; {
			case e == nil:
				_, err = tx.Exec(`UPDATE notice_messages SET status = 'sent', sent_at = ?, last_error = '' WHERE id = ?`, now, o.ID)
				res.Sent++
			default:
				var se *SendError
				temp := errors.As(e, &se) && se.Temporary
				status := StatusPending
				if !temp || attempts[i] >= MaxAttempts {
					status = StatusFailed
					res.Failed++
				} else {
					res.Retry++
				}
				_, err = tx.Exec(`UPDATE notice_messages SET status = ?, last_error = ? WHERE id = ?`, status, truncate(e.Error(), 500), o.ID)
			}
			if err != nil {
				return fmt.Errorf("record delivery of notice %d: %w", o.ID, err)
			}
		}
		return nil
	})
	return res, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ComposeHolds composes the hold notices recorded since the last pass into
// messages, so that a patron hears of a waiting hold within minutes. It returns
// the number of messages queued.
func ComposeHolds(ctx context.Context, d *db.DB) (int, error) {
	return compose(ctx, d, composeOptions{immediate: true})
}

// SendTest sends a test message through sender to address: the settings page's
// check that the relay takes mail.
func SendTest(ctx context.Context, sender Sender, library, to string) error {
	to = strings.TrimSpace(to)
	if sender == nil {
		return stacks.Errorf(stacks.ECONFLICT, "No SMTP relay is configured: start stacks serve with --smtp-host (and --smtp-from), see docs/notices.md.")
	}
	if m := mail.NewMsg(); to == "" || m.To(to) != nil {
		return stacks.FieldErrorf("to", stacks.EINVALID, "Enter the email address to send the test message to.")
	}
	errs := sender.Send(ctx, []Outgoing{{To: to, Subject: "Test message from " + library,
		Text: "This test message shows that " + library + " can send notices by email.\n"}})
	if errs[0] != nil {
		return stacks.Errorf(stacks.ECONFLICT, "The relay did not take the test message: %s", truncate(errs[0].Error(), 300))
	}
	return nil
}
