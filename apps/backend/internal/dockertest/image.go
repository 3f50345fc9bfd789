package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestImage is the tag of the test image: Debian's static busybox as
// /bin/busybox with /bin/sh linked to it (executor scripts need a shell)
// and ImageMarker, nothing else. The kandev binary is not in it: the
// Docker executor mounts it.
const TestImage = "kandev-test/busybox:1"

// ImageMarker is a file only the test image holds, and its content.
const (
	ImageMarker     = "/etc/kandev-test-image"
	ImageMarkerText = "kandev test image\n"
)

// Busybox is the static busybox the image is made from (Debian's
// busybox-static package).
const Busybox = "/bin/busybox"

var images sync.Map // daemon host → *imageOnce

type imageOnce struct {
	once sync.Once
	tag  string
	err  error
}

// Image returns TestImage, importing it into d once (a daemon that has the
// tag already keeps it). It fails t when the image cannot be made.
func (d *Daemon) Image(t testing.TB) string {
	t.Helper()
	v, _ := images.LoadOrStore(d.Host, &imageOnce{})
	o := v.(*imageOnce)
	o.once.Do(func() { o.err = d.importImage(context.WithoutCancel(t.Context())) })
	if o.err != nil {
		t.Fatalf("build the test image: %v", o.err)
	}
	return TestImage
}

// BuildImage is Image outside a test: TestImage, imported once.
func (d *Daemon) BuildImage(ctx context.Context) (string, error) {
	v, _ := images.LoadOrStore(d.Host, &imageOnce{})
	o := v.(*imageOnce)
	o.once.Do(func() { o.err = d.importImage(ctx) })
	return TestImage, o.err
}

func (d *Daemon) importImage(ctx context.Context) error {
	return d.buildImage(ctx, TestImage, nil)
}

// imageFile is a file of a test image.
type imageFile struct {
	name string // its path in the image, without the leading slash
	mode int64
	body []byte
}

// buildImage imports tag into d, unless d has it: busybox as /bin/sh,
// the marker file and extra.
func (d *Daemon) buildImage(ctx context.Context, tag string, extra []imageFile) error {
	c := d.Client()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if ok, err := c.ImageExists(ctx, tag); err != nil || ok {
		return err
	}
	bb, err := os.ReadFile(Busybox)
	if err != nil {
		return fmt.Errorf("read %s (make docker installs Debian's busybox-static): %w", Busybox, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dir := range []string{"bin/", "etc/", "tmp/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	files := append([]imageFile{{"bin/busybox", 0o755, bb}, {ImageMarker[1:], 0o644, []byte(ImageMarkerText)}}, extra...)
	dirs := map[string]bool{"bin/": true, "etc/": true, "tmp/": true}
	for _, f := range files {
		for dir := path.Dir(f.name); dir != "." && !dirs[dir+"/"]; dir = path.Dir(dir) {
			dirs[dir+"/"] = true
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if dir == "bin/" || dir == "etc/" || dir == "tmp/" {
			continue // written above
		}
		if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: "bin/sh", Typeflag: tar.TypeSymlink, Linkname: "busybox"}); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, c.Path, "import", "-", tag) //nolint:gosec // the docker CLI, fixed arguments
	cmd.Env, cmd.Stdin = c.Env, &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker import: %w: %s", err, out)
	}
	return nil
}

// LibsImage is the repository of the test images with the shared
// libraries of a dynamically linked binary besides TestImage's files, for
// agents whose runtime (node) is mounted into the container; the tag is a
// digest of the files, so a daemon that keeps its images never serves a
// stale one.
const LibsImage = "kandev-test/libs"

// libLine is a line of ldd's output naming a library file.
var libLine = regexp.MustCompile(`(?m)(?:=>\s*)?(/\S+)\s+\(0x`)

// ImageWithLibsOf returns LibsImage: TestImage's files and the shared
// libraries ldd lists for each of binaries (a runtime and the native
// programs it starts), at their paths, imported into d once. It fails t
// when the image cannot be made.
func (d *Daemon) ImageWithLibsOf(t testing.TB, binaries ...string) string {
	t.Helper()
	v, _ := images.LoadOrStore(d.Host+" "+LibsImage+" "+strings.Join(binaries, " "), &imageOnce{})
	o := v.(*imageOnce)
	o.once.Do(func() {
		ctx := context.WithoutCancel(t.Context())
		libs, err := sharedLibs(ctx, binaries)
		if err != nil {
			o.err = err
			return
		}
		// Runtimes look their user up (Node's os.userInfo): the containers
		// run as the backend's user, so the image names it.
		passwd := fmt.Sprintf("root:x:0:0:root:/tmp:/bin/sh\nkandev:x:%d:%d:kandev:/tmp:/bin/sh\n", os.Getuid(), os.Getgid())
		group := fmt.Sprintf("root:x:0:\nkandev:x:%d:\n", os.Getgid())
		libs = append(libs, imageFile{name: "etc/passwd", mode: 0o644, body: []byte(passwd)}, imageFile{name: "etc/group", mode: 0o644, body: []byte(group)})
		sum := sha256.New()
		for _, f := range libs {
			_, _ = fmt.Fprintf(sum, "%s %d\n", f.name, len(f.body))
			_, _ = sum.Write(f.body)
		}
		tag := fmt.Sprintf("%s:%x", LibsImage, sum.Sum(nil)[:6])
		o.tag, o.err = tag, d.buildImage(ctx, tag, libs)
	})
	if o.err != nil {
		t.Fatalf("build the test image with libraries: %v", o.err)
	}
	return o.tag
}

// sharedLibs reads the shared libraries ldd lists for binaries, each
// once, in a stable order.
func sharedLibs(ctx context.Context, binaries []string) ([]imageFile, error) {
	seen := map[string]bool{}
	var libs []imageFile
	for _, binary := range binaries {
		out, err := exec.CommandContext(ctx, "ldd", binary).Output() //nolint:gosec // the test's own binaries
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", binary, err)
		}
		found := libLine.FindAllStringSubmatch(string(out), -1)
		if len(found) == 0 {
			return nil, fmt.Errorf("ldd listed no library of %s", binary)
		}
		for _, m := range found {
			if seen[m[1]] {
				continue
			}
			seen[m[1]] = true
			body, err := os.ReadFile(m[1])
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", m[1], err)
			}
			libs = append(libs, imageFile{name: m[1][1:], mode: 0o755, body: body})
		}
	}
	return libs, nil
}
