package reports_test

import (
	"os"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db/dbtest"
)

func TestMain(m *testing.M) {
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
