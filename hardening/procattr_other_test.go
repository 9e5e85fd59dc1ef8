//go:build !linux

package hardening

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }
