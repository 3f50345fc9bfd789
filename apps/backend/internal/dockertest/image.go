package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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
	c := d.Client()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if ok, err := c.ImageExists(ctx, TestImage); err != nil || ok {
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
	files := []struct {
		name string
		mode int64
		body []byte
	}{{"bin/busybox", 0o755, bb}, {ImageMarker[1:], 0o644, []byte(ImageMarkerText)}}
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
	cmd := exec.CommandContext(ctx, c.Path, "import", "-", TestImage) //nolint:gosec // the docker CLI, fixed arguments
	cmd.Env, cmd.Stdin = c.Env, &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker import: %w: %s", err, out)
	}
	return nil
}
