package demo

import (
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
)

// demoPIN is every demo patron's PIN at the self-check machines (desk-session.md).
const demoPIN = "1234"

// demoPINHashes are bcrypt hashes of demoPIN, made once and kept here by cost. The
// demo gives all its patrons the same PIN, so it stores one hash for all of them: a
// fixed one, so that the library stays the same on every run (bcrypt salts at
// random) and costs no hashing at all. The PIN is public; so may its salt be.
var demoPINHashes = map[int]string{
	4:  "$2a$04$HmtqILRGveFPzw/J9oyhk.pi3lytDEynFxZHgVJHGOsWE2S7HlclO",
	10: "$2a$10$S.VoIlWvbJ.Pbw7umMQ17OS/ZPpEO8/4OhUjVm9B0ZGNgJxp1/Are",
}

// kioskHashes are bcrypt hashes of the kiosk account's password, by cost, made once
// like demoPINHashes: the demo creates the account without hashing.
var kioskHashes = map[int]string{
	4:  "$2a$04$HvTO21iAW4oMVLRTTpwxUOZMwShlaW0qRKJm7SoQ7YAMUULbOehhS",
	10: "$2a$10$yLTcvyTqNvGNUfBUIrHdEuKR4gUU/q2GdNoMZPWCFxSKXhIuFrYgK",
}

// writeSIP creates the SIP2 account kiosk / kiosk for institution CEN at Central, and
// sets every patron's PIN to 1234 (the generated patrons' too, so that load tests
// can use SIP) in one statement.
func writeSIP(tx *db.Tx) error {
	_, err := sip.CreateAccount(tx, stacks.System, sip.NewAccount{Username: "kiosk", Password: "kiosk", Institution: "CEN", BranchCode: "CEN",
		PasswordHash: kioskHashes[passwords.BcryptCost]})
	if err != nil {
		return fmt.Errorf("create SIP account kiosk: %w", err)
	}
	hash, ok := demoPINHashes[passwords.BcryptCost]
	if !ok {
		if hash, err = passwords.HashPassword(demoPIN); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`UPDATE patrons SET pin_hash = ?`, hash); err != nil {
		return fmt.Errorf("set the demo patrons' PIN: %w", err)
	}
	return nil
}
