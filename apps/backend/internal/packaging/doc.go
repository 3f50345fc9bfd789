// Package packaging holds no code: its tests prove the ways Kandev is
// installed without a source checkout — `go install …/cmd/kandev@VERSION`
// from a module proxy, the container image of apps/backend/Dockerfile
// (built and run on a real Docker daemon), the systemd unit in
// apps/backend/packaging and the archives of `make release`. They drive
// the go command, make, docker and systemd-analyze as an operator would.
//
// Its tests import internal/app (for the token file's name) and
// internal/dockertest; nothing imports it.
package packaging
