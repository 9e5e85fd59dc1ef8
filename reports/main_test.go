package reports_test

import (
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
)

func TestMain(m *testing.M) {
	// The demo's staff passwords are hashed as it is created: at bcrypt's real
	// cost that takes seconds under the race detector.
	passwords.BcryptCost = bcrypt.MinCost
	code := dbtest.Main(m)
	if demoLib.db != nil {
		demoLib.db.Close()
	}
	if demoLib.dir != "" {
		os.RemoveAll(demoLib.dir)
	}
	os.Exit(code)
}

func osMkdirTemp() (string, error) { return os.MkdirTemp("", "stacks-reports-") }

func stacksField(err error) string { return stacks.ErrorField(err) }
