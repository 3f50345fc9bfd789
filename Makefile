# Kandev top-level entry points. `make run` and `make test` are all a fresh
# clone needs (Go 1.26 and Node >= 20 on PATH; everything else is installed
# by these targets from the Go module proxy and the npm registry).

BACKEND := apps/backend
KANDEV  := $(BACKEND)/bin/kandev

.PHONY: run build test test-agents vet lint test-go docs docs-check e2e bench fuzz fuzz-smoke reliability clean browser postgres apprise docker ssh board-screenshots forge-mock promtool e2e-install

run: build
	$(KANDEV) serve

build:
	$(MAKE) -C $(BACKEND) build

test: vet lint test-go fuzz-smoke docs-check e2e

vet:
	$(MAKE) -C $(BACKEND) vet

lint:
	$(MAKE) -C $(BACKEND) lint

# The board's browser tests need Debian's Chromium; without it they fail
# under make test (KANDEV_BROWSER_TESTS=1) instead of being skipped. The
# store and multi-backend tests start a throwaway PostgreSQL cluster of
# their own (initdb in a temp dir, a Unix socket, removed after); with
# KANDEV_POSTGRES_TESTS=1 a cluster that fails to start fails them. The
# forge tests start the Prism mock of GitHub's API from tests/forge; with
# KANDEV_FORGE_TESTS=1 a missing or failing mock fails them.
# The Docker executor's tests use the daemon DOCKER_HOST names or, as root,
# start a private dockerd of their own (stopped after); with
# KANDEV_DOCKER_TESTS=1 a daemon that cannot be reached or started fails them.
# The SSH executor's tests start Debian's sshd on loopback with throwaway
# keys (stopped after); with KANDEV_SSH_TESTS=1 a missing sshd fails them.
# The Docker executor's real-agent test runs claude-agent-acp from
# tests/e2e's lockfile (e2e-install).
test-go: browser postgres forge-mock apprise docker ssh promtool e2e-install
	KANDEV_BROWSER_TESTS=1 KANDEV_POSTGRES_TESTS=1 KANDEV_FORGE_TESTS=1 KANDEV_NOTIFY_TESTS=1 KANDEV_DOCKER_TESTS=1 KANDEV_SSH_TESTS=1 KANDEV_MONITORING_TESTS=1 $(MAKE) -C $(BACKEND) test

# Installs tests/e2e's pinned npm tree (the real agents and the Node they
# run on) with npm ci; a no-op while the lockfile is unchanged.
e2e-install:
	$(MAKE) -C tests/e2e install

# Installs the forge API mocks (Prism, GitHub's OpenAPI descriptions, the
# Node 24 Prism needs) from tests/forge/package-lock.json with npm ci;
# a no-op while the lockfile is unchanged.
forge-mock:
	$(MAKE) -C tests/forge install

# Installs Debian's chromium package when /usr/bin/chromium is missing
# (needs root, as on CI; nothing is downloaded by the test driver).
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" -ne 0 ]; then echo "the board's browser tests need Debian's chromium: run 'sudo apt-get install chromium' (or make browser as root)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core; }

# Installs Debian's docker.io (dockerd and the docker CLI) and busybox-static
# (the Docker executor's test image is made from it) when either is missing
# (needs root, as on CI); nothing is started here.
docker:
	@{ command -v dockerd >/dev/null && command -v docker >/dev/null && test -x /bin/busybox; } || { \
	  if [ "$$(id -u)" -ne 0 ]; then echo "the Docker executor's tests need Debian's docker.io and busybox-static: run 'sudo apt-get install docker.io busybox-static' (or make docker as root)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io busybox-static && \
	  { systemctl disable --now docker.service docker.socket >/dev/null 2>&1 || service docker stop >/dev/null 2>&1 || true; }; }

# Installs Debian's openssh-server (sshd and ssh-keygen; the SSH executor's
# tests start their own sshd on loopback) when it is missing (needs root, as
# on CI); the system's ssh service is stopped and not started again.
ssh:
	@{ test -x /usr/sbin/sshd && command -v ssh-keygen >/dev/null; } || { \
	  if [ "$$(id -u)" -ne 0 ]; then echo "the SSH executor's tests need Debian's openssh-server: run 'sudo apt-get install openssh-server' (or make ssh as root)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server && \
	  { systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || service ssh stop >/dev/null 2>&1 || true; }; }

# Installs Debian's apprise package (the notifications CLI the Apprise
# channels run) when it is missing (needs root, as on CI); with
# KANDEV_NOTIFY_TESTS=1 a missing apprise fails its test.
apprise:
	@command -v apprise >/dev/null || { \
	  if [ "$$(id -u)" -ne 0 ]; then echo "the notification tests need Debian's apprise: run 'sudo apt-get install apprise' (or make apprise as root)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends apprise; }

# Installs Debian's prometheus package for its promtool (the alert rules'
# unit tests and the dashboard's queries are checked with it) when promtool
# is missing (needs root, as on CI); the server it also installs is
# stopped and not started again. With KANDEV_MONITORING_TESTS=1 a missing
# promtool fails those tests.
promtool:
	@command -v promtool >/dev/null || { \
	  if [ "$$(id -u)" -ne 0 ]; then echo "the monitoring tests need Debian's promtool: run 'sudo apt-get install prometheus' (or make promtool as root)"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus && \
	  { systemctl disable --now prometheus >/dev/null 2>&1 || service prometheus stop >/dev/null 2>&1 || true; }; }

# Installs Debian's postgresql package (server binaries under
# /usr/lib/postgresql/N/bin; no cluster is created or started) when no
# initdb is found. Without root it says loudly that the PostgreSQL half
# of the tests will be skipped.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { \
	  if [ "$$(id -u)" -ne 0 ]; then echo "*** PostgreSQL is not installed and this is not root: the PostgreSQL half of the tests will be SKIPPED (sudo apt-get install postgresql) ***"; exit 0; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql && \
	  { systemctl disable --now postgresql >/dev/null 2>&1 || service postgresql stop >/dev/null 2>&1 || true; }; }

# Regenerates the board page's screenshots (docs/public/board/*.png) from
# the browser tests.
board-screenshots: browser
	cd $(BACKEND) && KANDEV_BROWSER_TESTS=1 go test -count=1 -run 'TestBoard' ./internal/app -args -screenshots $(CURDIR)/docs/public/board

# Regenerate the generated docs page from the catalog.
docs: build
	$(KANDEV) tools --markdown > docs/public/mcp-tool-reference.md

docs-check: build
	node --test scripts/
	node scripts/validate-public-docs.mjs --kandev $(KANDEV)

e2e: build
	$(MAKE) -C tests/e2e test

# The npm agents make test does not install (Codex's ACP adapter,
# OpenCode, Auggie, Qwen Code, Factory Droid, Pi; about 1.3 GB from
# tests/agents/package-lock.json): each detected by kandev with its version
# and driven through a real ACP initialize + session/new. Not part of make
# test, to keep it within its time budget.
test-agents: build
	$(MAKE) -C tests/agents test

# Measures validation, round trips, the bridge, mode switches, a 100k-task
# board and tools/list sizes; writes bench/results.json and regenerates
# docs/public/performance.md (a few minutes).
bench: browser postgres docker ssh
	$(MAKE) -C $(BACKEND) bench

# Load, kill -9, restarts, a full disk, misbehaving clients and agents at
# full scale; writes reliability/results.json and regenerates
# docs/public/reliability.md (about 10 minutes; make test runs them smaller).
reliability:
	$(MAKE) -C $(BACKEND) reliability

# Every fuzz target for FUZZTIME each (default 30s): make fuzz FUZZTIME=5m
fuzz:
	$(MAKE) -C $(BACKEND) fuzz

fuzz-smoke:
	$(MAKE) -C $(BACKEND) fuzz-smoke

clean:
	rm -rf $(BACKEND)/bin
