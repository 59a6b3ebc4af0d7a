// Test bot: a statically linked binary that makes the system calls the sandbox's seccomp profile
// refuses (io_uring first, which the engine's own default profile allowed), prints one line per
// call with the errno it got ("SYSCALL io_uring_setup EPERM"), then exits. tests/test_docker_reuse.py
// builds it into ./run with Go (scripts/setup-go.sh) and runs it as a static-runtime bot.
package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func try(name string, nr uintptr, a1, a2, a3 uintptr) {
	_, _, errno := syscall.RawSyscall(nr, a1, a2, a3)
	result := "ok"
	if errno != 0 {
		result = errnoName(errno)
	}
	fmt.Fprintf(os.Stderr, "SYSCALL %s %s\n", name, result)
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EPERM:
		return "EPERM"
	case syscall.ENOSYS:
		return "ENOSYS"
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.EFAULT:
		return "EFAULT"
	}
	return fmt.Sprintf("errno-%d", int(e))
}

func main() {
	var params [120]byte // struct io_uring_params
	p := uintptr(unsafe.Pointer(&params[0]))
	try("io_uring_setup", 425, 8, p, 0)
	try("io_uring_enter", 426, 0, 1, 0)
	try("io_uring_register", 427, 0, 0, 0)
	try("shmget", 29, 0x7a4e6, 4096, 0o1600)
	try("keyctl", 250, 0, 0, 0)           // KEYCTL_GET_KEYRING_ID
	try("ptrace", 101, 0, 0, 0)           // PTRACE_TRACEME
	try("unshare", 272, 0x10000000, 0, 0) // CLONE_NEWUSER
	fmt.Fprintln(os.Stderr, "SYSCALL done")
}
