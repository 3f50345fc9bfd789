//go:build unix

package app

import (
	"fmt"
	"syscall"
)

// checkDisk reports the free space of dir's file system, a warning under
// lowDiskBytes.
func checkDisk(dir string) checkResult {
	r := checkResult{Name: "disk", Fix: "free space on the data dir's file system, or move the data dir (kandev backup, then restore)"}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		r.Status, r.Detail = checkWarn, "the free space of "+dir+" could not be read"
		return r
	}
	free := fs.Bavail * uint64(fs.Bsize) //nolint:gosec // Bsize is a positive block size
	r.Status, r.Detail = checkOK, fmt.Sprintf("%.1f GiB free on %s", float64(free)/(1<<30), dir)
	if free < lowDiskBytes {
		r.Status = checkWarn
		r.Detail += fmt.Sprintf(" (under %d GiB)", lowDiskBytes>>30)
	}
	return r
}
