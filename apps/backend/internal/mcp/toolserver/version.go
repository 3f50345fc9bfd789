package toolserver

import "runtime/debug"

// Version is the binary's version, reported in initialize, by kandev
// version and in the serve banner. A release build sets it with -ldflags
// -X (make build, make release); otherwise `go install …/cmd/kandev@v1.2.3`
// records the module's version in the binary's build info and init takes
// it from there. A build from a checkout without -ldflags stays "dev".
var Version = "dev"

func init() {
	bi, ok := debug.ReadBuildInfo()
	Version = versionOf(Version, bi, ok)
}

// versionOf is the version -ldflags set, else the main module's version
// from the build info, else "dev". A checkout's build reports its module
// as "(devel)", which says nothing, so it stays "dev".
func versionOf(set string, bi *debug.BuildInfo, ok bool) string {
	if set != "dev" || !ok || bi == nil {
		return set
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return set
}
