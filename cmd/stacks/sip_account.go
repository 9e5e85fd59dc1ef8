package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
)

const sipAccountUsage = "sip-account add|list|set|password|lockouts|unlock ... (sip-account SUBCOMMAND --help for each)"

// runSIPAccount manages SIP2 accounts from a shell, for installations provisioned
// by script: add, list, and set (settings, activation). The administration page
// (/admin/sip) does the same.
func runSIPAccount(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"usage: stacks " + sipAccountUsage}
	}
	switch args[0] {
	case "add":
		return runSIPAccountAdd(ctx, args[1:], stdout, stderr)
	case "list":
		return runSIPAccountList(ctx, args[1:], stdout, stderr)
	case "set":
		return runSIPAccountSet(ctx, args[1:], stdout, stderr)
	case "password":
		return runSIPAccountPassword(ctx, args[1:], stdout, stderr)
	case "lockouts":
		return runSIPLockouts(ctx, args[1:], stdout, stderr)
	case "unlock":
		return runSIPUnlock(ctx, args[1:], stdout, stderr)
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: stacks "+sipAccountUsage)
		return nil
	}
	return usageError{"usage: stacks " + sipAccountUsage}
}

func runSIPAccountAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "sip-account add --username NAME --institution ID --branch CODE [--db FILE]"
	fs := newFlagSet("sip-account add", usage,
		"Creates the account a self-check machine or sorter logs in with over SIP2 (93:\n"+
			"CN is the username, CO the password). The password is read from standard\n"+
			"input (one line), or from STACKS_PASSWORD; it is never taken as a flag.\n"+
			"The machine's checkouts and checkins are made at the account's branch.\n"+
			"Its settings have their defaults: change them with sip-account set.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	username := fs.String("username", "", "the login user id the machine sends (CN)")
	institution := fs.String("institution", "", "the institution id the machine sends (AO), e.g. the branch code")
	branch := fs.String("branch", "", "code of the branch the machine stands in (e.g. CEN)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, password, err := libraryAndPassword(ctx, dbf, stderr)
	if err != nil {
		return err
	}
	defer d.Close()
	var a *sip.Account
	err = d.Write(ctx, func(tx *db.Tx) error {
		a, err = sip.CreateAccount(tx, stacks.System, sip.NewAccount{Username: *username, Password: password, Institution: *institution, BranchCode: *branch})
		return err
	})
	if err != nil {
		return userFacing(err)
	}
	fmt.Fprintf(stdout, "created SIP2 account %q (institution %q) at %s\n", a.Username, a.Institution, a.BranchName)
	return nil
}

func runSIPAccountList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sip-account list", "sip-account list [--db FILE]",
		"Lists the SIP2 accounts with their branch, settings and when each was last used.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	var accts []sip.Account
	err = d.Read(ctx, func(tx *db.Tx) error {
		accts, err = sip.ListAccounts(tx)
		return err
	})
	if err != nil {
		return userFacing(err)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "USERNAME\tINSTITUTION\tBRANCH\tACTIVE\tLAST SEEN\tSETTINGS")
	for _, a := range accts {
		seen := "never"
		if !a.LastSeenAt.IsZero() {
			seen = db.FormatTime(a.LastSeenAt) + " from " + a.LastSeenAddr
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%s\t%s\n", a.Username, a.Institution, a.BranchCode, a.Active, seen, settingsText(a.Settings))
	}
	return w.Flush()
}

// settingsText is an account's settings on one line, in the flags' terms.
func settingsText(s sip.Settings) string {
	bins := "server"
	if s.SortBins != nil {
		bins = s.SortBins.String()
		if bins == "" {
			bins = "none"
		}
	}
	denied := "none"
	if len(s.Denied) > 0 {
		denied = strings.Join(s.Denied, ",")
	}
	return fmt.Sprintf("checked-in-ok=%t hold-items=%s sort-bins=%s deny=%s contact-without-pin=%t same-item=%s language=%s",
		s.CheckedInOK, s.HoldItems, bins, denied, s.ContactWithoutPIN, s.SameItemCheckout, s.Language)
}

func runSIPAccountSet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "sip-account set --username NAME [--institution ID] [--branch CODE] [--checked-in-ok=true|false]\n" +
		"    [--hold-items barcode|title] [--sort-bins MAP|server] [--deny IDS|none] [--contact-without-pin=true|false]\n" +
		"    [--same-item answer|renew] [--language 000-027] [--active=true|false] [--db FILE]"
	fs := newFlagSet("sip-account set", usage,
		"Changes an account's settings; what is not given stays as it is. The terminals\n"+
			"logged in with it see the change within seconds. docs/sip.md says what each does.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	username := fs.String("username", "", "the account to change")
	institution := fs.String("institution", "", "the institution id sent as AO")
	branch := fs.String("branch", "", "code of the branch where its checkouts and checkins happen")
	checkedInOK := fs.String("checked-in-ok", "", "true: a checkin of an item not on loan answers ok 1 (sorters); false: ok 0")
	holdItems := fs.String("hold-items", "", "how 64 lists holds: barcode or title")
	sortBins := fs.String("sort-bins", "", "the account's sort-bin map (hold=1,transfer=2,shelf=3,...), or server for the server's")
	deny := fs.String("deny", "", "the messages it may not send, e.g. 11,37 (none: all allowed)")
	contact := fs.String("contact-without-pin", "", "true: 63 without a PIN returns address, email and phone")
	sameItem := fs.String("same-item", "", "a checkout of an item the patron already has: answer (as lent, nothing changed) or renew (when the renewal policy is Y)")
	language := fs.String("language", "", "the SIP2 language code of 24, 26 and 64: 000 (unknown) to 027")
	active := fs.String("active", "", "false deactivates the account (its connections close), true activates it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	boolFlag := func(name, v string, dst *bool) error {
		switch v {
		case "":
		case "true", "yes", "1":
			*dst = true
		case "false", "no", "0":
			*dst = false
		default:
			return usageError{fmt.Sprintf("--%s %q: give true or false", name, v)}
		}
		return nil
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	var after *sip.Account
	err = d.Write(ctx, func(tx *db.Tx) error {
		a, err := findSIPAccount(tx, *username)
		if err != nil {
			return err
		}
		u := sip.AccountUpdate{Institution: a.Institution, BranchCode: a.BranchCode, Settings: a.Settings,
			SortBins: a.Settings.SortBins.String(), UseServerBins: a.Settings.SortBins == nil}
		if *institution != "" {
			u.Institution = *institution
		}
		if *branch != "" {
			u.BranchCode = *branch
		}
		if err := boolFlag("checked-in-ok", *checkedInOK, &u.Settings.CheckedInOK); err != nil {
			return err
		}
		if err := boolFlag("contact-without-pin", *contact, &u.Settings.ContactWithoutPIN); err != nil {
			return err
		}
		if *holdItems != "" {
			u.Settings.HoldItems = sip.HoldItems(*holdItems)
		}
		switch *sortBins {
		case "":
		case "server":
			u.UseServerBins = true
		default:
			u.SortBins, u.UseServerBins = *sortBins, false
		}
		if *sameItem != "" {
			u.Settings.SameItemCheckout = sip.SameItemCheckout(*sameItem)
		}
		if *language != "" {
			u.Settings.Language = *language
		}
		switch *deny {
		case "":
		case "none":
			u.Settings.Denied = nil
		default:
			u.Settings.Denied = strings.Split(strings.ReplaceAll(*deny, " ", ""), ",")
		}
		if *institution != "" || *branch != "" || *checkedInOK != "" || *contact != "" || *holdItems != "" || *sortBins != "" || *deny != "" ||
			*sameItem != "" || *language != "" {
			if err := sip.UpdateAccount(tx, stacks.System, a.ID, u); err != nil {
				return err
			}
		}
		if *active != "" {
			on := a.Active
			if err := boolFlag("active", *active, &on); err != nil {
				return err
			}
			if on != a.Active {
				if err := sip.SetAccountActive(tx, stacks.System, a.ID, on); err != nil {
					return err
				}
			}
		}
		after, err = sip.FindAccount(tx, a.ID)
		return err
	})
	if err != nil {
		if _, ok := err.(usageError); ok {
			return err
		}
		return userFacing(err)
	}
	fmt.Fprintf(stdout, "SIP2 account %q: institution %s, branch %s, active %t, %s\n",
		after.Username, after.Institution, after.BranchCode, after.Active, settingsText(after.Settings))
	return nil
}

// findSIPAccount finds an account by username, for the subcommands.
func findSIPAccount(tx *db.Tx, username string) (*sip.Account, error) {
	accts, err := sip.ListAccounts(tx)
	if err != nil {
		return nil, err
	}
	for i := range accts {
		if accts[i].Username == username {
			return &accts[i], nil
		}
	}
	return nil, stacks.Errorf(stacks.ENOTFOUND, "There is no SIP account %q; sip-account list shows them.", username)
}

func runSIPAccountPassword(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sip-account password", "sip-account password --username NAME [--db FILE]",
		"Replaces an account's password: read from standard input (one line), or from\n"+
			"STACKS_PASSWORD. Terminals logged in stay logged in; they need it at their next login.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	username := fs.String("username", "", "the account")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, password, err := libraryAndPassword(ctx, dbf, stderr)
	if err != nil {
		return err
	}
	defer d.Close()
	hash, err := sip.HashAccountPassword(password)
	if err != nil {
		return userFacing(err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		a, err := findSIPAccount(tx, *username)
		if err != nil {
			return err
		}
		return sip.SetAccountPassword(tx, stacks.System, a.ID, hash)
	})
	if err != nil {
		return userFacing(err)
	}
	fmt.Fprintf(stdout, "password of SIP2 account %q changed\n", *username)
	return nil
}

func runSIPLockouts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sip-account lockouts", "sip-account lockouts [--db FILE]",
		"Lists the SIP2 lockouts running (failed logins per account and address, wrong PINs\n"+
			"per patron) and the failures being counted; sip-account unlock lifts one.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	var (
		ls  []sip.Lockout
		now = d.Now()
	)
	err = d.Read(ctx, func(tx *db.Tx) error {
		ls, err = sip.ListLockouts(tx)
		return err
	})
	if err != nil {
		return userFacing(err)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tKIND\tWHO\tADDRESS\tSTATE")
	for _, l := range ls {
		state := fmt.Sprintf("%d failures since %s", l.Failures, db.FormatTime(l.WindowStart))
		if l.Locked(now) {
			state = "locked until " + db.FormatTime(l.LockedUntil)
		}
		who := l.Subject
		if l.Kind == "pin" {
			who = "patron id " + l.Subject
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", l.Key, l.Kind, who, l.Address, state)
	}
	return w.Flush()
}

func runSIPUnlock(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sip-account unlock", "sip-account unlock --key KEY [--db FILE]",
		"Lifts a SIP2 lockout (the KEY column of sip-account lockouts) and forgets its failures.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	key := fs.String("key", "", "the lockout's key, e.g. login:kiosk|10.0.0.5 or pin:42")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Write(ctx, func(tx *db.Tx) error { return sip.ClearLockout(tx, stacks.System, *key) }); err != nil {
		return userFacing(err)
	}
	fmt.Fprintf(stdout, "lifted %s\n", *key)
	return nil
}
