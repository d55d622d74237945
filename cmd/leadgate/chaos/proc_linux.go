package chaos

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks Linux to SIGKILL the child when the run's process dies, so a killed chaos run
// leaves no leadgate or fake CRM behind.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
