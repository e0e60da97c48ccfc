package main

import "syscall"

// dupTo makes descriptor to a copy of fd, open across exec (Linux/arm64 has no dup2).
func dupTo(fd, to int) error { return syscall.Dup3(fd, to, 0) }
