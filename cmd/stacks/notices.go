package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
)

// smtpFlags are the relay settings serve and notices run share.
type smtpFlags struct {
	host, user, password, passwordFile, from, startTLS, helo, tlsCA string
	port                                                            int
	timeout                                                         time.Duration
}

func registerSMTPFlags(fs *flag.FlagSet) *smtpFlags {
	f := &smtpFlags{}
	fs.StringVar(&f.host, "smtp-host", env("STACKS_SMTP_HOST", ""),
		"SMTP relay that sends notices by email; without it notices stay queued (STACKS_SMTP_HOST)")
	fs.IntVar(&f.port, "smtp-port", envInt("STACKS_SMTP_PORT", 0),
		"SMTP relay port (default 587, or 465 with --smtp-starttls tls) (STACKS_SMTP_PORT)")
	fs.StringVar(&f.user, "smtp-user", env("STACKS_SMTP_USER", ""),
		"user name to authenticate to the relay (AUTH PLAIN, only over TLS) (STACKS_SMTP_USER)")
	// No default from the environment: a flag's default is printed by --help
	// and with every usage error. config reads STACKS_SMTP_PASSWORD.
	fs.StringVar(&f.password, "smtp-password", "",
		"password for --smtp-user; prefer --smtp-password-file, which ps does not show (STACKS_SMTP_PASSWORD)")
	fs.StringVar(&f.passwordFile, "smtp-password-file", env("STACKS_SMTP_PASSWORD_FILE", ""),
		"file holding the password for --smtp-user (its first line) (STACKS_SMTP_PASSWORD_FILE)")
	fs.StringVar(&f.from, "smtp-from", env("STACKS_SMTP_FROM", ""),
		`sender of notices, e.g. "Town Library <library@example.org>" (STACKS_SMTP_FROM)`)
	fs.StringVar(&f.startTLS, "smtp-starttls", env("STACKS_SMTP_STARTTLS", "mandatory"),
		"mandatory (never send in clear), opportunistic, none (a relay on this host), or tls (implicit TLS, port 465) (STACKS_SMTP_STARTTLS)")
	fs.StringVar(&f.helo, "smtp-helo", env("STACKS_SMTP_HELO", ""),
		"host name to greet the relay with (default: localhost) (STACKS_SMTP_HELO)")
	fs.StringVar(&f.tlsCA, "smtp-tls-ca", env("STACKS_SMTP_TLS_CA", ""),
		"PEM file of the certificate authorities to trust for the relay instead of the system's (a relay with its own certificate) (STACKS_SMTP_TLS_CA)")
	fs.DurationVar(&f.timeout, "smtp-timeout", envDuration("STACKS_SMTP_TIMEOUT", 30*time.Second),
		"give up on a relay that does not answer within this time (STACKS_SMTP_TIMEOUT)")
	return f
}

// config checks the flags together and returns the relay's settings, or a zero
// SMTPConfig when no relay is set.
func (f *smtpFlags) config() (notices.SMTPConfig, error) {
	pw := f.password
	if pw == "" {
		pw = os.Getenv("STACKS_SMTP_PASSWORD")
	}
	if f.passwordFile != "" {
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return notices.SMTPConfig{}, usageError{fmt.Sprintf("--smtp-password-file: %v", err)}
		}
		pw, _, _ = strings.Cut(string(b), "\n")
		pw = strings.TrimRight(pw, "\r")
	}
	c := notices.SMTPConfig{Host: f.host, Port: f.port, Username: f.user, Password: pw, From: f.from,
		StartTLS: f.startTLS, HELO: f.helo, Timeout: f.timeout}
	if f.tlsCA != "" {
		b, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return notices.SMTPConfig{}, usageError{fmt.Sprintf("--smtp-tls-ca: %v", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return notices.SMTPConfig{}, usageError{fmt.Sprintf("--smtp-tls-ca %s: no PEM certificate in it", f.tlsCA)}
		}
		c.TLSConfig = &tls.Config{RootCAs: pool, ServerName: f.host, MinVersion: tls.VersionTLS12}
	}
	if err := c.Validate(); err != nil {
		return notices.SMTPConfig{}, usageError{stacks.ErrorMessage(err)}
	}
	return c, nil
}

// sender returns the Sender of c, nil without a relay.
func sender(c notices.SMTPConfig) notices.Sender {
	if !c.Configured() {
		return nil
	}
	return notices.SMTPSender{Config: c}
}

func runNotices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runNoticesWith(ctx, "notices run", args, stdout, stderr, nil)
}

// runNoticesWith is stacks notices run (name "notices run") or, with the daily
// jobs run first, stacks daily (name "daily").
func runNoticesWith(ctx context.Context, name string, args []string, stdout, stderr io.Writer, jobs []notices.DailyJob) error {
	if name == "daily" && len(args) > 1 && (args[1] == "-h" || args[1] == "--help") {
		fmt.Fprintln(stdout, "Usage: stacks daily [flags]\n\nRuns every daily job (long overdues declared lost, ...), then what\n"+
			"stacks notices run does, with its flags (see stacks notices run --help). Each job is\n"+
			"idempotent: from cron once a day, e.g.\n"+
			"  30 6 * * *  flock -n /var/lib/stacks/notices.lock stacks daily --db /var/lib/stacks/library.db --smtp-host ...")
		return nil
	}
	if len(args) == 0 || args[0] != "run" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(stdout, "Usage: stacks notices run [flags]\n\nRun \"stacks notices run --help\" for its flags.")
			return nil
		}
		return usageError{"usage: stacks notices run [flags] (see stacks notices run --help)"}
	}
	fs := newFlagSet(name, name+" [flags]",
		"Does the notices' work once, as stacks serve does every minute: the daily run if it is\n"+
			"due (after --at, local time, once per library day however often it starts; at once\n"+
			"after downtime that missed a day), the hold notices, then sends what is due through\n"+
			"the relay. For CGI installs, from cron, e.g. every 10 minutes:\n"+
			"  */10 * * * *  flock -n /var/lib/stacks/notices.lock stacks notices run --db /var/lib/stacks/library.db --smtp-host ...\n"+
			"With --dry-run it prints what the daily run would queue and changes nothing.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	smtpf := registerSMTPFlags(fs)
	dry := fs.Bool("dry-run", false, "print what the daily run would queue, and change nothing")
	force := fs.Bool("force", false, "run the daily notices now even if it is not their time (nothing is queued twice)")
	runAt := fs.String("at", env("STACKS_NOTICES_AT", ""), "local time of the daily run, HH:MM (default: the notices_run_at preference, else 07:00) (STACKS_NOTICES_AT)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("notices run takes no arguments, got %q", fs.Args())}
	}
	if *runAt != "" {
		if _, err := notices.ParseRunAt(*runAt); err != nil {
			return usageError{"--at: " + stacks.ErrorMessage(err)}
		}
	}
	cfg, err := smtpf.config()
	if err != nil {
		return err
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()

	if *dry {
		res, err := notices.RunDaily(ctx, d, notices.RunOptions{DryRun: true})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Library day %s: %d new notice items, %d messages would be queued (nothing changed).\n", res.Day, res.Items, res.Messages)
		for _, m := range res.Preview {
			to := m.To
			if m.Delivery == notices.DeliveryPrint {
				to = "print"
			}
			fmt.Fprintf(stdout, "\n--- %s to %s (patron %s)\nSubject: %s\n\n%s", m.Delivery, to, m.PatronCard, m.Subject, m.Text)
		}
		return nil
	}
	// Several servers (and cron on several hosts) may share a PostgreSQL
	// database: one at a time does the notices' work.
	ran, err := d.Exclusive(ctx, notices.LockName, func(ctx context.Context) error {
		return noticesPass(ctx, d, stdout, jobs, *force, *runAt, cfg)
	})
	if err == nil && !ran {
		fmt.Fprintln(stdout, "Another Stacks process (a server's scheduler, or another cron job) is doing the notices' work now; nothing done.")
	}
	return err
}

// noticesPass is what stacks notices run and stacks daily do under the notices
// lock: the daily jobs, the daily run when due, hold notices, sending.
func noticesPass(ctx context.Context, d *db.DB, stdout io.Writer, jobs []notices.DailyJob, force bool, runAt string, cfg notices.SMTPConfig) error {
	for _, j := range jobs {
		did, err := j.Run(ctx, d)
		if err != nil {
			return fmt.Errorf("daily job %s: %w", j.Name, err)
		}
		fmt.Fprintf(stdout, "%s: %s.\n", j.Name, did)
	}
	due := force
	if !due {
		var err error
		if due, err = notices.DailyDue(ctx, d, runAt); err != nil {
			return err
		}
	}
	if due {
		res, err := notices.RunDaily(ctx, d, notices.RunOptions{Force: force})
		if err != nil {
			return err
		}
		if res.Skipped {
			fmt.Fprintf(stdout, "Library day %s: already run.\n", res.Day)
		} else {
			fmt.Fprintf(stdout, "Library day %s: %d notice items, %d messages queued.\n", res.Day, res.Items, res.Messages)
		}
	}
	n, err := notices.ComposeHolds(ctx, d)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(stdout, "%d hold notices queued.\n", n)
	}
	if !cfg.Configured() {
		fmt.Fprintln(stdout, "No SMTP relay configured (--smtp-host): email notices stay queued.")
		return nil
	}
	var total notices.DeliverResult
	for range 100 {
		r, err := notices.Deliver(ctx, d, sender(cfg), 100)
		if err != nil {
			return err
		}
		total.Sent, total.Retry, total.Failed, total.Cancelled = total.Sent+r.Sent, total.Retry+r.Retry, total.Failed+r.Failed, total.Cancelled+r.Cancelled
		if r.Total() < 100 {
			break
		}
	}
	fmt.Fprintf(stdout, "Email: %d sent, %d to retry, %d failed, %d no longer needed.\n", total.Sent, total.Retry, total.Failed, total.Cancelled)
	return nil
}
