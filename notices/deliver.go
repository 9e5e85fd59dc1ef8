package notices

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/textproto"
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
	if c.Username != "" && (c.StartTLS == "none" || c.StartTLS == "opportunistic") {
		return stacks.FieldErrorf("smtp_starttls", stacks.EINVALID, "The SMTP password could cross the network in clear: with --smtp-user use --smtp-starttls mandatory (or tls); opportunistic and none are for a relay that takes mail without authentication.")
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

// SendTimeout is the bound on each step of the SMTP exchange; Deliver sizes its
// claims by it.
func (s SMTPSender) SendTimeout() time.Duration { return cmp(s.Config.Timeout, 30*time.Second) }

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
		case err != nil && !m.IsDelivered() && authRefused(err):
			// The relay refused the user name or password: trying again
			// changes nothing until an administrator fixes the settings (and
			// resends the failed notices).
			errs[i] = &SendError{Err: fmt.Errorf("the relay refused to authenticate user %q (fix --smtp-user or the password, then resend the failed notices): %w",
				s.Config.Username, err)}
		case err != nil && !m.IsDelivered():
			// Could not connect or start TLS: nothing was sent; try again
			// later (a settings mistake shows in the error).
			errs[i] = &SendError{Temporary: true, Err: err}
		}
	}
	return errs
}

// authRefused reports whether err is the relay's permanent refusal of the
// authentication: a 53x reply (535 credentials invalid, 534 mechanism too weak,
// 530 authentication required, 538 encryption required).
func authRefused(err error) bool {
	var te *textproto.Error
	return errors.As(err, &te) && te.Code >= 530 && te.Code <= 538
}

// DeliverResult counts one delivery pass.
type DeliverResult struct {
	Sent, Retry, Failed int
	// Cancelled counts messages dropped unsent: no longer needed (StaleReason)
	// or queued too long ago (TooOldReason).
	Cancelled int
}

// Total is the number of messages the pass dealt with.
func (r DeliverResult) Total() int { return r.Sent + r.Retry + r.Failed + r.Cancelled }

func (r *DeliverResult) add(o DeliverResult) {
	r.Sent, r.Retry, r.Failed, r.Cancelled = r.Sent+o.Sent, r.Retry+o.Retry, r.Failed+o.Failed, r.Cancelled+o.Cancelled
}

const (
	// deliverBatch is how many messages one claim takes: a small batch is sent
	// quickly, so its claim is short and a slow relay holds few messages.
	deliverBatch = 10
	// MaxQueuedAge: a message still unsent this long after it was queued, or
	// last resent by staff (a long relay outage), is cancelled rather than sent
	// late.
	MaxQueuedAge = 14 * 24 * time.Hour
	// StaleReason and TooOldReason are what a cancelled message's error says.
	StaleReason  = "Not sent: no longer needed (the loan was returned or renewed, or the hold is no longer waiting)."
	TooOldReason = "Not sent: still queued 14 days after it was written; too late to be useful."
)

// claimFor is how long a claim on n messages holds: generously longer than
// sending them can take (each step of the SMTP exchange is bounded by the
// sender's timeout, and the send's context by half the claim), so that no other
// process (stacks notices run from cron beside stacks serve, a second server)
// sends them meanwhile.
func claimFor(s Sender, n int) time.Duration {
	t := 30 * time.Second
	if ts, ok := s.(interface{ SendTimeout() time.Duration }); ok && ts.SendTimeout() > 0 {
		t = ts.SendTimeout()
	}
	return 10*time.Minute + time.Duration(2*(n+2))*4*t
}

// Deliver sends the email messages that are due, at most limit (default 200),
// through sender, a few at a time. Each batch is claimed first, in one write
// transaction: its attempt counted, its next attempt set by the backoff, and
// claimed_until set well past the time the send can take (claimFor), so that
// neither a crash during the send nor a second process sends it again before
// then; the send's context ends at half the claim. Then each message is marked
// sent, or given its error (a temporary refusal waits for its next attempt, a
// permanent one or the last attempt fails it), but only while the claim is
// still its own. Before it is claimed, a message whose notice items no longer
// hold (the loan was returned, the hold collected) or queued more than
// MaxQueuedAge ago is cancelled with the reason. With a nil sender nothing is
// sent and messages stay pending.
func Deliver(ctx context.Context, d *db.DB, sender Sender, limit int) (DeliverResult, error) {
	var res DeliverResult
	if sender == nil {
		return res, nil
	}
	if limit <= 0 {
		limit = 200
	}
	for res.Total() < limit {
		r, err := deliverBatchOnce(ctx, d, sender, min(deliverBatch, limit-res.Total()))
		res.add(r)
		if err != nil || r.Total() == 0 {
			return res, err
		}
	}
	return res, nil
}

// claimedMessage is a message claimed for sending.
type claimedMessage struct {
	Outgoing
	attempts int
}

func deliverBatchOnce(ctx context.Context, d *db.DB, sender Sender, n int) (DeliverResult, error) {
	var res DeliverResult
	// Most passes find nothing due: find out with a read, so an idle server
	// does not write (and fsync) every minute.
	var due bool
	err := d.Read(ctx, func(tx *db.Tx) error {
		now := db.FormatTime(tx.Now())
		return tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM notice_messages
			WHERE status = 'pending' AND delivery = 'email' AND next_attempt_at <= ?
			  AND (claimed_until IS NULL OR claimed_until <= ?))`, now, now).Scan(&due)
	})
	if err != nil || !due {
		return res, err
	}
	var out []claimedMessage
	var claim time.Duration
	var claimedUntil string
	err = d.Write(ctx, func(tx *db.Tx) error {
		out, res = nil, DeliverResult{}
		now := tx.Now()
		nowS := db.FormatTime(now)
		rows, err := tx.Query(`SELECT m.id, m.to_address, m.subject, m.body_text, m.body_html, m.attempts, coalesce(m.resent_at, m.created_at),
				EXISTS (SELECT 1 FROM notice_items n WHERE n.message_id = m.id)
				AND NOT EXISTS (SELECT 1 FROM notice_items n WHERE n.message_id = m.id AND NOT (`+staleItem+`))
			FROM notice_messages m
			WHERE m.status = 'pending' AND m.delivery = 'email' AND m.next_attempt_at <= ?
			  AND (m.claimed_until IS NULL OR m.claimed_until <= ?)
			ORDER BY m.next_attempt_at, m.id LIMIT ?`, nowS, nowS, n)
		if err != nil {
			return fmt.Errorf("read notices to send: %w", err)
		}
		type cancel struct {
			id     int64
			reason string
		}
		var cancels []cancel
		for rows.Next() {
			var m claimedMessage
			var created db.Time
			var stale bool
			if err := rows.Scan(&m.ID, &m.To, &m.Subject, &m.Text, &m.HTML, &m.attempts, &created, &stale); err != nil {
				rows.Close()
				return err
			}
			switch {
			case stale:
				cancels = append(cancels, cancel{m.ID, StaleReason})
			case now.Sub(created.Time) > MaxQueuedAge:
				cancels = append(cancels, cancel{m.ID, TooOldReason})
			default:
				m.attempts++
				out = append(out, m)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range cancels {
			if _, err := tx.Exec(`UPDATE notice_messages SET status = 'cancelled', last_error = ?, claimed_until = NULL WHERE id = ?`, c.reason, c.id); err != nil {
				return fmt.Errorf("cancel notice %d: %w", c.id, err)
			}
			res.Cancelled++
		}
		claim = claimFor(sender, len(out))
		claimedUntil = db.FormatTime(now.Add(claim))
		for _, m := range out {
			if _, err := tx.Exec(`UPDATE notice_messages SET attempts = ?, next_attempt_at = ?, claimed_until = ? WHERE id = ?`,
				m.attempts, db.FormatTime(now.Add(Backoff(m.attempts))), claimedUntil, m.ID); err != nil {
				return fmt.Errorf("claim notice %d: %w", m.ID, err)
			}
		}
		return nil
	})
	if err != nil || len(out) == 0 {
		return res, err
	}
	msgs := make([]Outgoing, len(out))
	for i, m := range out {
		msgs[i] = m.Outgoing
	}
	sendCtx, cancel := context.WithTimeout(ctx, claim/2)
	errs := sender.Send(sendCtx, msgs)
	cancel()
	err = d.Write(ctx, func(tx *db.Tx) error {
		res.Sent, res.Retry, res.Failed = 0, 0, 0
		now := db.FormatTime(tx.Now())
		for i, m := range out {
			status, lastErr, sentAt := StatusSent, "", sql.NullString{String: now, Valid: true}
			count := &res.Sent
			if e := errs[i]; e != nil {
				var se *SendError
				temp := errors.As(e, &se) && se.Temporary
				status, lastErr, sentAt, count = StatusPending, truncate(e.Error(), 500), sql.NullString{}, &res.Retry
				if !temp || m.attempts >= MaxAttempts {
					status, count = StatusFailed, &res.Failed
				}
			}
			// Only while the claim is still this pass's: had it run out, another
			// process (or staff resending it) owns the message and its record.
			r, err := tx.Exec(`UPDATE notice_messages SET status = ?, last_error = ?, sent_at = coalesce(?, sent_at), claimed_until = NULL
				WHERE id = ? AND claimed_until = ?`, status, lastErr, sentAt, m.ID, claimedUntil)
			if err != nil {
				return fmt.Errorf("record delivery of notice %d: %w", m.ID, err)
			}
			if k, _ := r.RowsAffected(); k > 0 {
				*count++
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
