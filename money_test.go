package stacks_test

import (
	"testing"

	"github.com/stacks-ils/stacks"
)

func TestFormatMoney(t *testing.T) {
	for cents, want := range map[int64]string{0: "0.00", 5: "0.05", 1250: "12.50", 500: "5.00", -75: "-0.75", -1250: "-12.50", 100000: "1000.00"} {
		if got := stacks.FormatMoney(cents); got != want {
			t.Errorf("FormatMoney(%d) = %q, want %q", cents, got, want)
		}
	}
}
