package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// reach says which tasks besides its bound task a session may act on
// through an action that uses taskInTree.
type reach uint8

const (
	// reachAncestors admits the bound task's parent, grandparent, ...
	reachAncestors reach = 1 << iota
	// reachDescendants admits the bound task's children, grandchildren, ...
	reachDescendants
	// reachCreated admits the tasks the bound task's sessions created
	// (kanban.Task.CreatedByTaskID) and their descendants.
	reachCreated
)

// writeReach is what a task session changes under --session-scope tree
// (DESIGN §6, D6): its own task, its descendants, the tasks it created and
// their descendants.
const (
	writeReach     = reachDescendants | reachCreated
	writeForbidden = "a task session may change only its own task, its subtasks and the tasks it created (with their subtasks)"
)

// Reach of plans and documents for sessions (DESIGN §6): plans within the
// bound task's tree and the tasks it created; documents readable in the
// tree, writable on the bound task and its ancestors only.
const (
	planReach         = reachAncestors | reachDescendants | reachCreated
	planForbidden     = "a session's plans are limited to its task, the task's ancestors, its descendants and the tasks it created"
	docReadReach      = reachAncestors | reachDescendants
	docReadForbidden  = "a session reads documents of its task, the task's ancestors and its descendants only"
	docWriteReach     = reachAncestors
	docWriteForbidden = "a session may only write documents of its own task or the task's ancestors"
)

// maxTreeDepth bounds parent-chain walks (a corrupt chain cannot loop).
const maxTreeDepth = 64

// taskInTree resolves taskID to a task the principal may reach. For a
// session an empty id or "self" is its bound task, and besides the bound
// task only the tasks allowed by r are reachable: anything else is
// FORBIDDEN with the message forbidden. The operator reaches any task and
// must name it.
func (s *Service) taskInTree(ctx context.Context, p Principal, taskID string, r reach, forbidden string) (*kanban.Task, error) {
	if taskID == "" && p.Kind == Session {
		taskID = "self"
	}
	t, err := s.taskFor(ctx, p, taskID)
	if err != nil || p.Kind != Session || t.ID == p.TaskID {
		return t, err
	}
	if r&reachAncestors != 0 {
		ok, err := s.isAncestor(ctx, t.ID, p.TaskID)
		if err != nil || ok {
			return t, err
		}
	}
	if r&(reachDescendants|reachCreated) != 0 {
		ok, err := s.below(ctx, t, p.TaskID, r)
		if err != nil || ok {
			return t, err
		}
	}
	return nil, kanban.Errorf(kanban.CodeForbidden, "%s", forbidden)
}

// isAncestor reports whether anc is a strict ancestor of id, walking parent
// links up from id.
func (s *Service) isAncestor(ctx context.Context, anc, id string) (bool, error) {
	cur := id
	for range maxTreeDepth {
		t, err := s.store.GetTask(ctx, cur)
		if err != nil {
			return false, err
		}
		switch t.ParentID {
		case "":
			return false, nil
		case anc:
			return true, nil
		}
		cur = t.ParentID
	}
	return false, nil
}

// below reports whether t lies below task owner, walking parent links up
// from t: owner is one of t's ancestors (with reachDescendants), or t or
// one of its ancestors was created by owner (with reachCreated).
func (s *Service) below(ctx context.Context, t *kanban.Task, owner string, r reach) (bool, error) {
	cur := t
	for range maxTreeDepth {
		if r&reachCreated != 0 && cur.CreatedByTaskID == owner {
			return true, nil
		}
		switch {
		case cur.ParentID == "":
			return false, nil
		case r&reachDescendants != 0 && cur.ParentID == owner:
			return true, nil
		}
		next, err := s.store.GetTask(ctx, cur.ParentID)
		if err != nil {
			return false, err
		}
		cur = next
	}
	return false, nil
}

// maxRelatedDescription caps each description in a verbose task.related
// listing.
const maxRelatedDescription = 2000

// RelatedIn is the payload of task.related.
type RelatedIn struct {
	TaskID string `json:"task_id,omitzero"`
	// Verbose adds each task's description (cut at 2000 characters).
	Verbose bool `json:"verbose,omitzero"`
	// Limit caps each list (default 20, at most 100).
	Limit int `json:"limit,omitzero"`
}

// RelatedTask is one task in a task.related result.
type RelatedTask struct {
	ID             string           `json:"id"`
	Title          string           `json:"title"`
	State          kanban.TaskState `json:"state"`
	WorkflowStepID string           `json:"workflow_step_id"`
	ParentID       string           `json:"parent_id,omitempty"`
	Description    *string          `json:"description,omitempty"`
	// DescriptionTruncated says Description was cut (verbose only).
	DescriptionTruncated bool `json:"description_truncated,omitempty"`
}

// RelatedOut is the result of task.related. Each list holds at most limit
// tasks; Truncated names the lists that had more.
type RelatedOut struct {
	Task      RelatedTask   `json:"task"`
	Parent    *RelatedTask  `json:"parent,omitempty"`
	Children  []RelatedTask `json:"children"`
	Siblings  []RelatedTask `json:"siblings"`
	Blockers  []RelatedTask `json:"blockers"`
	Blocked   []RelatedTask `json:"blocked"`
	Truncated []string      `json:"truncated"`
}

// related lists a task's parent, children, siblings (the parent's other
// children), blockers and blocked tasks. Archived children and siblings
// are left out. A session reaches tasks of its workspace.
func (s *Service) related(ctx context.Context, p Principal, in RelatedIn) (*RelatedOut, error) {
	limit := in.Limit
	if limit == 0 {
		limit = kanban.DefaultRelatedLimit
	}
	if in.TaskID == "" && p.Kind == Session {
		in.TaskID = "self"
	}
	t, err := s.taskFor(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	view := func(x *kanban.Task) RelatedTask { return relatedView(x, in.Verbose) }
	out := &RelatedOut{Task: view(t), Siblings: []RelatedTask{}, Truncated: []string{}}
	more := func(name string, cut bool) {
		if cut {
			out.Truncated = append(out.Truncated, name)
		}
	}
	var cut bool
	if out.Children, cut, err = s.childrenOf(ctx, t, t.ID, limit, view); err != nil {
		return nil, err
	}
	more(kanban.RelatedChildren, cut)
	if t.ParentID != "" {
		parent, err := s.store.GetTask(ctx, t.ParentID)
		if err != nil {
			return nil, err
		}
		pv := view(parent)
		out.Parent = &pv
		if out.Siblings, cut, err = s.childrenOf(ctx, t, parent.ID, limit, view); err != nil {
			return nil, err
		}
		more(kanban.RelatedSiblings, cut)
	}
	pg := kanban.Page{Limit: limit}
	for _, edge := range []struct {
		name string
		dst  *[]RelatedTask
		list func(context.Context, string, kanban.Page) (*kanban.List[kanban.Task], error)
	}{{kanban.RelatedBlockers, &out.Blockers, s.store.ListBlockers}, {kanban.RelatedBlocked, &out.Blocked, s.store.ListBlocked}} {
		l, err := edge.list(ctx, t.ID, pg)
		if err != nil {
			return nil, err
		}
		*edge.dst = views(l.Items, "", view)
		more(edge.name, l.NextCursor != "")
	}
	return out, nil
}

// childrenOf lists up to limit live children of parentID other than t
// (for t's own children t is never among them), reporting whether more exist.
func (s *Service) childrenOf(ctx context.Context, t *kanban.Task, parentID string, limit int, view func(*kanban.Task) RelatedTask) ([]RelatedTask, bool, error) {
	l, err := s.store.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: t.WorkspaceID, ParentID: parentID}, kanban.Page{Limit: limit + 1})
	if err != nil {
		return nil, false, err
	}
	items := views(l.Items, t.ID, view)
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, l.NextCursor != "", nil
}

// views renders tasks, leaving out the task with id skip.
func views(ts []kanban.Task, skip string, view func(*kanban.Task) RelatedTask) []RelatedTask {
	out := make([]RelatedTask, 0, len(ts))
	for i := range ts {
		if ts[i].ID != skip {
			out = append(out, view(&ts[i]))
		}
	}
	return out
}

func relatedView(t *kanban.Task, verbose bool) RelatedTask {
	v := RelatedTask{ID: t.ID, Title: t.Title, State: t.State, WorkflowStepID: t.WorkflowStepID, ParentID: t.ParentID}
	if verbose {
		d, cut := kanban.Preview(t.Description, maxRelatedDescription)
		v.Description, v.DescriptionTruncated = &d, cut
	}
	return v
}
