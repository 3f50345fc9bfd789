//go:build !unix

package app

// checkDisk is skipped where the free space is not read.
func checkDisk(dir string) checkResult {
	return checkResult{Name: "disk", Status: checkSkip, Detail: "free space is not read on this platform"}
}
