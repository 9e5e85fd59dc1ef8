//go:build !linux

package e2e

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }

func groupProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) {}
