package terminal

import (
	"bytes"
	"os"
	"strconv"
)

// sessionMembers lists the processes of session sid, from /proc (field
// 6 of /proc/PID/stat, after the parenthesised command name).
func sessionMembers(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if len(f) > 3 && string(f[3]) == strconv.Itoa(sid) {
			out = append(out, pid)
		}
	}
	return out
}
