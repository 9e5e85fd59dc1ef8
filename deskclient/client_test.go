package deskclient_test

import (
	"testing"
	"time"

	"github.com/stacks-ils/stacks/deskclient"
)

func TestParseServerTiming(t *testing.T) {
	app, db, n, ok := deskclient.ParseServerTiming(`app;dur=1.250, db;dur=0.500, sql;desc="7"`)
	if !ok || app != 1250*time.Microsecond || db != 500*time.Microsecond || n != 7 {
		t.Fatalf("got %v %v %d %v", app, db, n, ok)
	}
	if _, _, _, ok := deskclient.ParseServerTiming("total;dur=3"); ok {
		t.Fatal("parsed a header without our fields")
	}
}
