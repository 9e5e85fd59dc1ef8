package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/passwords"
)

// TestPasswordOnTerminal: on a terminal the password is asked for, twice (the
// other side of TestPasswordFromPipe), and two that differ create nothing.
func TestPasswordOnTerminal(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	t.Setenv("STACKS_PASSWORD", "")
	for _, c := range []struct {
		typed string
		ok    bool
	}{{"tty-pass-1\ntty-pass-1\n", true}, {"tty-pass-1\ntty-pass-2\n", false}} {
		master, slave := openPTY(t)
		if _, err := master.WriteString(c.typed); err != nil {
			t.Fatal(err)
		}
		was := stdin
		stdin = slave
		path := filepath.Join(t.TempDir(), "lib.db")
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"init", "--db", path, "--branch", "mai", "--branch-name", "Main Library"}, &stdout, &stderr)
		stdin = was
		if !strings.Contains(stderr.String(), "Password: ") || !strings.Contains(stderr.String(), "The same password again: ") {
			t.Errorf("init on a terminal did not ask for the password twice: %q", stderr.String())
		}
		if c.ok && err != nil {
			t.Errorf("init with the password typed twice: %v\n%s", err, stdout.String())
		}
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "differ") {
				t.Errorf("init with two different passwords: %v, want a refusal", err)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("init with two different passwords created %s", path)
			}
		}
	}
}

// openPTY opens a pseudo-terminal: what is written to master is read from
// slave as if typed.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("the pseudo-terminal's number: %v", e)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}
