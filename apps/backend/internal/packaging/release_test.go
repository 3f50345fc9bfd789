package packaging

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReleaseArchives: `make release` for linux/amd64 writes
// kandev_VERSION_linux_amd64.tar.gz and a SHA256SUMS that matches it; the
// archive holds exactly the binary, the README and the systemd unit (and
// LICENSE when the repository has one) under one directory, owned by 0:0
// with fixed modes and SOURCE_DATE_EPOCH as every mtime; the binary is
// static and reports VERSION. A second run writes the same bytes (the
// archive is reproducible; the second build comes from the build cache,
// so this checks the packing, not the compiler, which -trimpath and no
// VCS stamp or build id make reproducible).
func TestReleaseArchives(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (a -trimpath build of everything on a cold cache): skipped under -short")
	}
	const version, epoch = "v0.0.3-release-test", int64(1767225600) // 2026-01-01
	root := moduleRoot(t)
	release := func() (string, string) {
		dist := t.TempDir()
		run(t, 20*time.Minute, root, nil, "make", "release", "RELEASE_TARGETS=linux/amd64", "VERSION="+version,
			"DIST="+dist, "SOURCE_DATE_EPOCH=1767225600")
		sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		return dist, string(sums)
	}
	start := time.Now()
	dist, sums := release()
	t.Logf("make release (linux/amd64) took %s", time.Since(start).Round(time.Second))
	name := "kandev_" + version + "_linux_amd64"
	archive := filepath.Join(dist, name+".tar.gz")
	if want := fileSHA256(t, archive) + "  " + name + ".tar.gz\n"; sums != want {
		t.Fatalf("SHA256SUMS: got %q, want %q", sums, want)
	}
	want := []string{name + "/", name + "/README.md", name + "/kandev", name + "/kandev.service"}
	if _, err := os.Stat(filepath.Join(root, "../../LICENSE")); err == nil {
		want = append(want, name+"/LICENSE")
	}
	slices.Sort(want)
	bin := checkArchive(t, archive, epoch)
	if got := slices.Sorted(maps.Keys(bin)); !slices.Equal(got, want) {
		t.Fatalf("archive entries: got %v, want %v", got, want)
	}
	exe := filepath.Join(t.TempDir(), "kandev")
	if err := os.WriteFile(exe, bin[name+"/kandev"], 0o755); err != nil { //nolint:gosec // an executable under test
		t.Fatal(err)
	}
	checkStatic(t, exe)
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if out := run(t, time.Minute, "", nil, exe, "version"); !strings.HasPrefix(out, "kandev "+version+"\n") {
			t.Fatalf("kandev version: got %q, want %q first", out, "kandev "+version)
		}
	}
	if _, again := release(); again != sums {
		t.Fatalf("a second make release: got SHA256SUMS %q, want the first run's %q", again, sums)
	}
}

// checkArchive reads a release archive, checks each entry's owner, mode
// and mtime, and returns the entries' contents by name.
func checkArchive(t *testing.T, path string, epoch int64) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header: got name %q time %v, want neither", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	got := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		mode := int64(0o644)
		if h.Typeflag == tar.TypeDir || strings.HasSuffix(h.Name, "/kandev") {
			mode = 0o755
		}
		if h.Uid != 0 || h.Gid != 0 || h.Mode&0o777 != mode || h.ModTime.Unix() != epoch {
			t.Errorf("%s: got uid %d gid %d mode %o mtime %d, want 0 0 %o %d", h.Name, h.Uid, h.Gid, h.Mode&0o777, h.ModTime.Unix(), mode, epoch)
		}
		b, err := io.ReadAll(io.LimitReader(tr, 512<<20))
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = b
	}
}

// checkStatic fails t unless exe is an ELF with no program interpreter
// (statically linked, as the scratch image and old distributions need).
func checkStatic(t *testing.T, exe string) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the release binary is dynamically linked (it has a PT_INTERP)")
		}
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
