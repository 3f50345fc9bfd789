package kanban

import "testing"

func TestTaskCreateCheck(t *testing.T) {
	t.Parallel()
	tab := "a\tb"
	cases := []struct {
		name  string
		in    TaskCreate
		field string // "" when accepted
	}{
		{"plain", TaskCreate{Title: "Fix the build", BlockedBy: []string{"a", "b"}}, ""},
		{"newline in title", TaskCreate{Title: "one\ntwo"}, "title"},
		{"NUL in title", TaskCreate{Title: "one\x00"}, "title"},
		{"inherit_parent with a parent", TaskCreate{Title: "t", ParentID: "p", WorkspaceMode: WorkspaceInheritParent}, ""},
		{"inherit_parent without a parent", TaskCreate{Title: "t", WorkspaceMode: WorkspaceInheritParent}, "workspace_mode"},
		{"new_workspace without a parent", TaskCreate{Title: "t", WorkspaceMode: WorkspaceNew}, ""},
		{"blocker named twice", TaskCreate{Title: "t", BlockedBy: []string{"a", "b", "a"}}, "blocked_by"},
		{"one locator and a branch", TaskCreate{Title: "t", Repository: &TaskRepositoryInput{LocalPath: "/r", BaseBranch: "main"}}, ""},
		{"two locators", TaskCreate{Title: "t", Repository: &TaskRepositoryInput{RepositoryID: "r", LocalPath: "/r"}}, "repository"},
		{"a branch without a locator", TaskCreate{Title: "t", Repository: &TaskRepositoryInput{BaseBranch: "main"}}, "base_branch"},
	}
	for _, c := range cases {
		checkField(t, c.name, c.in.Check(), c.field)
	}
	checkField(t, "update with a tab in the title", TaskUpdate{Title: &tab}.Check(), "title")
	checkField(t, "update without a title", TaskUpdate{}.Check(), "")
}

// checkField fails t unless err is nil (field "") or a VALIDATION_ERROR
// naming field.
func checkField(t *testing.T, name string, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Errorf("%s: got %v, want accepted", name, err)
		}
		return
	}
	e, ok := AsError(err)
	if !ok || e.Code != CodeValidation || e.Field != field {
		t.Errorf("%s: got %v, want VALIDATION_ERROR on %s", name, err, field)
	}
}
