//go:build unix

package action

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// filesTask is a task whose working directory is a real checkout with a
// file, a subdirectory, hostile entries (a link to /etc/passwd, a link
// out of the directory, a FIFO, a 100 MB sparse file) and a binary file.
func filesTask(t *testing.T, h *harness) (*kanban.Task, string) {
	t.Helper()
	src := realDir(t)
	mk := func(rel, body string) {
		t.Helper()
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mk("README.md", "# hello\n")
	mk("pkg/main.go", "package main\n")
	mk("blob.bin", "\x00\x01\x02ELF")
	for link, target := range map[string]string{"passwd": "/etc/passwd", "up": ".."} {
		if err := os.Symlink(target, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(src, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	_ = big.Close()
	task := h.task("browse me")
	call[TaskBranchOut](h, operator, kanban.ActionTaskRepositoryAdd, TaskBranchIn{TaskID: task.ID, LocalPath: src, BaseBranch: "main"})
	return task, src
}

// TestFilesBrowse: the operator lists the working directory a page at a
// time (sorted, links and FIFOs listed as what they are, never followed),
// opens a subdirectory and reads a text file; a binary file is reported,
// its bytes not sent.
func TestFilesBrowse(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, _ := filesTask(t, h)
	first := call[FilesListOut](h, operator, kanban.ActionTaskFilesList, FilesListIn{TaskID: task.ID, Limit: 4})
	second := call[FilesListOut](h, operator, kanban.ActionTaskFilesList, FilesListIn{TaskID: task.ID, Limit: 4, Cursor: first.NextCursor})
	var got []string
	for _, e := range append(first.Items, second.Items...) {
		got = append(got, e.Name+":"+e.Kind)
	}
	want := "README.md:file big.log:file blob.bin:file fifo:other passwd:symlink pkg:dir up:symlink"
	if strings.Join(got, " ") != want || first.NextCursor == "" || second.NextCursor != "" {
		t.Fatalf("listing: got %v (cursors %q, %q), want %s in two pages", got, first.NextCursor, second.NextCursor, want)
	}
	if first.Items[1].Size != 100<<20 {
		t.Errorf("big.log size: got %d, want %d", first.Items[1].Size, 100<<20)
	}
	sub := call[FilesListOut](h, operator, kanban.ActionTaskFilesList, FilesListIn{TaskID: task.ID, Path: "pkg"})
	if len(sub.Items) != 1 || sub.Items[0].Name != "main.go" {
		t.Fatalf("pkg: got %+v, want main.go", sub.Items)
	}
	f := call[FilesReadOut](h, operator, kanban.ActionTaskFilesRead, FilesReadIn{TaskID: task.ID, Path: "pkg/main.go"})
	if f.Content != "package main\n" || f.Binary || f.Size != 13 {
		t.Fatalf("pkg/main.go: got %+v, want its text", f)
	}
	b := call[FilesReadOut](h, operator, kanban.ActionTaskFilesRead, FilesReadIn{TaskID: task.ID, Path: "blob.bin"})
	if !b.Binary || b.Content != "" || b.Size != 6 {
		t.Fatalf("blob.bin: got %+v, want binary with no content", b)
	}
}

// TestFilesHostilePaths: a way out of the working directory, an absolute
// path, a link to /etc/passwd, a FIFO and a 100 MB file are each refused
// with a message that does not echo the path; nothing changes.
func TestFilesHostilePaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, _ := filesTask(t, h)
	for _, c := range []struct {
		action kanban.Action
		path   string
		code   kanban.Code
		msg    string
	}{
		{kanban.ActionTaskFilesRead, "../outside.txt", kanban.CodeValidation, "path: must stay inside the task's workspace"},
		{kanban.ActionTaskFilesRead, "pkg/../../x", kanban.CodeValidation, "path: must stay inside the task's workspace"},
		{kanban.ActionTaskFilesRead, "/etc/passwd", kanban.CodeValidation, "path: must be a path relative to the task's workspace"},
		{kanban.ActionTaskFilesRead, "passwd", kanban.CodeValidation, "path: is a symbolic link"},
		{kanban.ActionTaskFilesRead, "up/etc/passwd", kanban.CodeValidation, "path: must stay inside the task's workspace"},
		{kanban.ActionTaskFilesRead, "fifo", kanban.CodeValidation, "path: must name a regular file"},
		{kanban.ActionTaskFilesRead, "big.log", kanban.CodeValidation, "path: is larger than 1 MiB"},
		{kanban.ActionTaskFilesRead, "pkg", kanban.CodeValidation, "path: must name a regular file"},
		{kanban.ActionTaskFilesRead, "missing.txt", kanban.CodeNotFound, "path: no such file"},
		{kanban.ActionTaskFilesList, "..", kanban.CodeValidation, "path: must stay inside the task's workspace"},
		{kanban.ActionTaskFilesList, "/etc", kanban.CodeValidation, "path: must be a path relative to the task's workspace"},
		{kanban.ActionTaskFilesList, "up", kanban.CodeValidation, "path: must stay inside the task's workspace"},
		{kanban.ActionTaskFilesList, "fifo", kanban.CodeNotFound, "path: no such file"},
		{kanban.ActionTaskFilesList, "README.md", kanban.CodeNotFound, "path: no such file"},
	} {
		in := map[string]any{"task_id": task.ID, "path": c.path}
		msg := h.refuse(operator, c.action, in, c.code)
		if !strings.Contains(msg, c.msg) || strings.Contains(msg, c.path) {
			t.Errorf("%s %q: got %q, want it to contain %q and not the path", c.action, c.path, msg, c.msg)
		}
	}
	h.refuse(operator, kanban.ActionTaskFilesList, map[string]any{"task_id": task.ID, "cursor": "zzz"}, kanban.CodeValidation)
}

// TestFilesOperatorOnly: no agent session — of the task itself, in any
// mode — reaches the working directory through these actions.
func TestFilesOperatorOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, _ := filesTask(t, h)
	for _, mode := range []kanban.Mode{kanban.ModeTask, kanban.ModeConfig, kanban.ModeOffice} {
		sess := h.session(task, mode)
		h.refuse(sess, kanban.ActionTaskFilesList, FilesListIn{TaskID: task.ID}, kanban.CodeForbidden)
		h.refuse(sess, kanban.ActionTaskFilesRead, FilesReadIn{TaskID: task.ID, Path: "README.md"}, kanban.CodeForbidden)
	}
}
