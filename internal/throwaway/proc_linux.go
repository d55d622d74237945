package throwaway

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks Linux to SIGKILL the server when the process that started it dies, so a killed test
// or run leaves no server behind.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
