package hardening

import "syscall"

// childProcAttr makes the kernel kill a server if the test binary dies without
// running its cleanups (a panic, or go test's -timeout).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
