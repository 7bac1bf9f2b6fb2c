//go:build linux

package gitx

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// gitProcesses lists the live git processes from /proc. Zombies (exited,
// not yet reaped) are not live. ok is false when /proc cannot be read.
func gitProcesses() (procs []process, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		pid := e.Name()
		if pid == self || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		dir := "/proc/" + pid + "/"
		comm, err := os.ReadFile(dir + "comm")
		if err != nil || strings.TrimSpace(string(comm)) != "git" {
			continue
		}
		stat, err := os.ReadFile(dir + "stat")
		if err != nil {
			continue // gone
		}
		// "pid (comm) S ...": the state follows the last parenthesis.
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue
		}
		var p process
		if cwd, err := os.Readlink(dir + "cwd"); err == nil {
			p.cwd = strings.TrimSuffix(cwd, " (deleted)")
		} else if os.IsNotExist(err) {
			continue // exited meanwhile
		}
		if cmdline, err := os.ReadFile(dir + "cmdline"); err == nil {
			p.args = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		}
		procs = append(procs, p)
	}
	return procs, true
}
