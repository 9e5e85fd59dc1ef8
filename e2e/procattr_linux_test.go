package e2e

import "syscall"

// childProcAttr makes the kernel kill a server if the test binary dies
// without running its cleanups (a panic, or go test's -timeout).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// groupProcAttr is childProcAttr for a process that starts others (lighttpd): it
// also gets a process group of its own, for killGroup.
func groupProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup kills whatever is left of the process group that groupProcAttr gave
// the process pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
