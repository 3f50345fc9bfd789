package kanban

// Bounds of the operator's view of a task's working directory (the board's
// Files tab and its actions, task.files.list and task.files.read).
const (
	// MaxViewBytes is the largest file task.files.read returns; a larger
	// one is refused, never sent in part.
	MaxViewBytes = 1 << 20
	// MaxDirEntries is how many names of one directory task.files.list
	// reads, sorts and pages through; a larger directory is listed in
	// part (its first MaxDirEntries names as the system returns them,
	// sorted), and says so.
	MaxDirEntries = 10_000
)

// Kinds of the entries of a directory of a task's working directory.
const (
	EntryFile    = "file"
	EntryDir     = "dir"
	EntrySymlink = "symlink" // listed, never followed
	EntryOther   = "other"   // a FIFO, socket or device: listed, never opened
)

// EntryKinds lists the kinds of directory entries.
var EntryKinds = []string{EntryFile, EntryDir, EntrySymlink, EntryOther}
