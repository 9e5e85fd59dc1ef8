package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/privacy"
	"github.com/stacks-ils/stacks/web"
)

// dailyJobs are the jobs done once a library day before the daily notices, in
// order: by the server's scheduler (stacks serve) and by stacks daily (cron). A
// new daily job is one line here; each must be idempotent.
func dailyJobs() []notices.DailyJob {
	return []notices.DailyJob{
		{Name: "lost items", Run: lostAgingJob},
		{Name: "privacy", Run: privacyJob},
		{Name: "sign-in addresses", Run: signinAddressesJob},
		{Name: "sessions", Run: sessionsJob},
	}
}

// sessionsJob removes the expired sessions of both sites. A server also does
// it every few minutes; a CGI install, whose processes live for one request,
// has only this.
func sessionsJob(ctx context.Context, d *db.DB) (string, error) {
	staffN, err := web.DeleteExpiredSessions(ctx, d)
	if err != nil {
		return "", err
	}
	patronN, err := opac.DeleteExpiredSessions(ctx, d)
	return fmt.Sprintf("%d expired staff sessions and %d expired patron sessions removed", staffN, patronN), err
}

// signinAddressesJob forgets the addresses accounts and cards have not signed
// in from for passwords.KnownFor (they are known no longer, and a patron's
// address is personal data), and sweeps the sign-in counts of every site
// whose window and lockout are over (the names tried are any text).
func signinAddressesJob(ctx context.Context, d *db.DB) (string, error) {
	n, err := passwords.ForgetOldAddresses(ctx, d)
	if err != nil {
		return "", err
	}
	swept, err := passwords.Sweep(ctx, d)
	return fmt.Sprintf("%d addresses not signed in from for %d days forgotten, %d sign-in counts over swept", n, int(passwords.KnownFor.Hours()/24), swept), err
}

// lostAgingJob declares long-overdue loans lost by the rules, 200 loans a
// transaction.
func lostAgingJob(ctx context.Context, d *db.DB) (string, error) {
	var prefs library.Preferences
	if err := d.Read(ctx, func(tx *db.Tx) (err error) {
		prefs, err = library.LoadPreferences(tx)
		return err
	}); err != nil {
		return "", err
	}
	res, err := circulation.AgeLost(ctx, d, prefs.Location, 200)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d loans declared lost, %s billed", res.Declared, stacks.FormatMoney(res.Billed)), nil
}

// runDaily is stacks daily: every daily job, then what stacks notices run does
// (the daily notices when due, hold notices, sending). For CGI installs, from cron.
func runDaily(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runNoticesWith(ctx, "daily", append([]string{"run"}, args...), stdout, stderr, dailyJobs())
}

// privacyJob anonymises old loan history and purges inactive patrons, as the
// privacy preferences say (docs/privacy.md); with both preferences 0 it does
// nothing.
func privacyJob(ctx context.Context, d *db.DB) (string, error) {
	res, err := privacy.RunDaily(ctx, d)
	return res.String(), err
}
