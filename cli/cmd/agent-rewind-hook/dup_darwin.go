package main

import "syscall"

// dupTo makes descriptor to a copy of fd, open across exec.
func dupTo(fd, to int) error { return syscall.Dup2(fd, to) }
