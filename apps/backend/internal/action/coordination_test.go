package action

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestTaskMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	parent := h.task("parent")
	kid := h.child(parent, "kid")
	other := h.task("unrelated")
	ps := h.session(parent, kanban.ModeTask)
	stranger := h.session(other, kanban.ModeTask)

	// No running session on the target yet: nothing to deliver to.
	if msg := h.refuse(ps, kanban.ActionTaskMessage, TaskMessageIn{TaskID: kid.ID, Prompt: "hi"}, kanban.CodeConflict); !strings.Contains(msg, "no running session") {
		t.Errorf("message without session: got %q, want the no-running-session rule", msg)
	}
	ks := h.session(kid, kanban.ModeTask)
	for _, tc := range []struct {
		name string
		p    Principal
		in   TaskMessageIn
		code kanban.Code
	}{
		{"interrupt by non-parent", stranger, TaskMessageIn{TaskID: kid.ID, Prompt: "stop", DeliveryMode: kanban.DeliveryInterrupt}, kanban.CodeForbidden},
		{"own task", ks, TaskMessageIn{TaskID: "self", Prompt: "me"}, kanban.CodeValidation},
		// An empty prompt and an unknown delivery_mode are refused by
		// message_task_kandev's schema, the action's contract on every
		// transport (app TestWebSocketRefusesLikeMCP), before the handler.
		{"missing task", ps, TaskMessageIn{Prompt: "x"}, kanban.CodeValidation},
	} {
		if msg := h.refuse(tc.p, kanban.ActionTaskMessage, tc.in, tc.code); msg == "" {
			t.Errorf("%s: got an empty message, want a reason", tc.name)
		}
	}
	queued := call[TaskMessageOut](h, stranger, kanban.ActionTaskMessage, TaskMessageIn{TaskID: kid.ID, Prompt: "FYI"})
	if queued.SessionID != ks.SessionID || queued.DeliveryMode != kanban.DeliveryQueued || queued.Message.Author != "task:"+other.ID || queued.Message.Type != "prompt" {
		t.Errorf("queued message: got %+v, want a prompt by task:%s on the kid's session", queued, other.ID)
	}
	intr := call[TaskMessageOut](h, ps, kanban.ActionTaskMessage, TaskMessageIn{TaskID: kid.ID, Prompt: "change course", DeliveryMode: kanban.DeliveryInterrupt})
	if intr.DeliveryMode != kanban.DeliveryInterrupt {
		t.Errorf("interrupt by parent: got %+v, want delivery interrupt", intr)
	}
	if !h.pub.has(SessionTopic(ks.SessionID), kanban.EventSessionMessage.Name()) {
		t.Errorf("session.message: not published to the target session")
	}
	msgs := call[kanban.List[kanban.Message]](h, operator, kanban.ActionMessageList, MessageListIn{TaskID: kid.ID, MessageTypes: []string{"prompt"}})
	if len(msgs.Items) != 2 || msgs.Items[1].Content != "change course" {
		t.Errorf("kid's prompts: got %+v, want the two delivered messages", msgs.Items)
	}
}

func TestTaskStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	parent := h.task("parent")
	kid := h.child(parent, "kid")
	grandkid := h.child(kid, "grandkid")
	ps := h.session(parent, kanban.ModeTask)
	k1, k2 := h.session(kid, kanban.ModeTask), h.session(kid, kanban.ModeTask)
	h.session(grandkid, kanban.ModeTask)
	if _, err := h.st.SetSessionState(context.Background(), k2.SessionID, kanban.SessionCompleted); err != nil {
		t.Fatal(err)
	}
	h.refuse(ps, kanban.ActionTaskStop, TaskStopIn{TaskID: grandkid.ID}, kanban.CodeForbidden)
	h.refuse(k1, kanban.ActionTaskStop, TaskStopIn{TaskID: "self"}, kanban.CodeForbidden)

	out := call[TaskStopOut](h, ps, kanban.ActionTaskStop, TaskStopIn{TaskID: kid.ID, Reason: "plan changed"})
	if len(out.StoppedSessionIDs) != 1 || out.StoppedSessionIDs[0] != k1.SessionID {
		t.Errorf("task.stop: got %+v, want only the live session %s", out, k1.SessionID)
	}
	if got := h.sessionState(k1.SessionID); got != kanban.SessionCancelled {
		t.Errorf("stopped session state: got %s, want CANCELLED", got)
	}
	if got := h.sessionState(k2.SessionID); got != kanban.SessionCompleted {
		t.Errorf("ended session state: got %s, want COMPLETED (untouched)", got)
	}
	status := call[kanban.List[kanban.Message]](h, operator, kanban.ActionMessageList, MessageListIn{TaskID: kid.ID, MessageTypes: []string{"status"}})
	if len(status.Items) != 1 || status.Items[0].Content != "Stopped by task:"+parent.ID+": plan changed" {
		t.Errorf("status messages: got %+v, want one naming the parent and the reason", status.Items)
	}
	again := call[TaskStopOut](h, ps, kanban.ActionTaskStop, TaskStopIn{TaskID: kid.ID})
	if len(again.StoppedSessionIDs) != 0 {
		t.Errorf("second task.stop: got %+v, want nothing stopped", again)
	}
}

func TestSessionSpawn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("retry me")
	sess := h.session(task, kanban.ModeTask)
	_, _, elsewhere := h.otherBoard()
	h.refuse(sess, kanban.ActionSessionSpawn, SessionSpawnIn{TaskID: elsewhere.ID}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionSessionSpawn, SessionSpawnIn{TaskID: "self", AgentProfileID: "missing"}, kanban.CodeNotFound)

	out := call[SessionSpawnOut](h, sess, kanban.ActionSessionSpawn, SessionSpawnIn{TaskID: "self", Prompt: "try again"})
	if out.Session == nil || out.Session.TaskID != task.ID || out.AgentProfile == nil || out.AgentProfile.ID != out.Session.AgentProfileID {
		t.Fatalf("session.spawn: got %+v, want a new session with its effective agent profile", out)
	}
	msgs := call[kanban.List[kanban.Message]](h, operator, kanban.ActionMessageList, MessageListIn{TaskID: task.ID, SessionID: out.Session.ID})
	if len(msgs.Items) != 1 || msgs.Items[0].Content != "try again" || msgs.Items[0].Author != "task:"+task.ID {
		t.Errorf("spawned session's conversation: got %+v, want the given prompt", msgs.Items)
	}
	def := call[SessionSpawnOut](h, operator, kanban.ActionSessionSpawn, SessionSpawnIn{TaskID: task.ID})
	msgs = call[kanban.List[kanban.Message]](h, operator, kanban.ActionMessageList, MessageListIn{TaskID: task.ID, SessionID: def.Session.ID})
	if len(msgs.Items) != 1 || msgs.Items[0].Content != "retry me" {
		t.Errorf("spawn without prompt: got %+v, want the task's own prompt (its title here)", msgs.Items)
	}
}

func TestTaskRelated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := h.task("root")
	me := h.child(root, "me")
	sib1, sib2 := h.child(root, "sib1"), h.child(root, "sib2")
	kid := h.child(me, "kid")
	blocker := h.task("blocker")
	blocked := h.task("blocked")
	ctx := context.Background()
	if _, err := h.st.AddDependency(ctx, me.ID, blocker.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.AddDependency(ctx, blocked.ID, me.ID); err != nil {
		t.Fatal(err)
	}
	sess := h.session(me, kanban.ModeOffice)
	out := call[RelatedOut](h, sess, kanban.ActionTaskRelated, RelatedIn{})
	ids := func(l []RelatedTask) []string {
		var s []string
		for _, x := range l {
			s = append(s, x.ID)
		}
		return s
	}
	if out.Task.ID != me.ID || out.Parent == nil || out.Parent.ID != root.ID || out.Task.Description != nil {
		t.Errorf("task/parent: got %+v / %+v, want me under root, no description", out.Task, out.Parent)
	}
	if got := ids(out.Children); len(got) != 1 || got[0] != kid.ID {
		t.Errorf("children: got %v, want [kid]", got)
	}
	if got := ids(out.Siblings); len(got) != 2 || got[0] != sib1.ID || got[1] != sib2.ID {
		t.Errorf("siblings: got %v, want [sib1 sib2]", got)
	}
	if got := ids(out.Blockers); len(got) != 1 || got[0] != blocker.ID {
		t.Errorf("blockers: got %v, want [blocker]", got)
	}
	if got := ids(out.Blocked); len(got) != 1 || got[0] != blocked.ID {
		t.Errorf("blocked: got %v, want [blocked]", got)
	}
	if len(out.Truncated) != 0 {
		t.Errorf("truncated: got %v, want none", out.Truncated)
	}
	capped := call[RelatedOut](h, sess, kanban.ActionTaskRelated, RelatedIn{TaskID: "self", Limit: 1, Verbose: true})
	if len(capped.Siblings) != 1 || len(capped.Truncated) != 1 || capped.Truncated[0] != "siblings" {
		t.Errorf("limit 1: got siblings %v truncated %v, want one sibling and siblings truncated", ids(capped.Siblings), capped.Truncated)
	}
	if capped.Task.Description == nil {
		t.Errorf("verbose: got no description, want one")
	}
	_, _, elsewhere := h.otherBoard()
	h.refuse(sess, kanban.ActionTaskRelated, RelatedIn{TaskID: elsewhere.ID}, kanban.CodeForbidden)
}

func TestPlanAndDocumentTreeReach(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := h.task("root")
	me := h.child(root, "me")
	sib := h.child(root, "sibling")
	kid := h.child(me, "kid")
	sess := h.session(me, kanban.ModeOffice)
	for _, id := range []string{"", "self", root.ID, kid.ID} {
		h.refuse(sess, kanban.ActionPlanGet, TaskRefIn{TaskID: id}, kanban.CodeNotFound) // reachable, no plan yet
	}
	for _, id := range []string{sib.ID, h.task("stranger").ID} {
		if msg := h.refuse(sess, kanban.ActionPlanCreate, PlanCreateIn{TaskID: id, Content: "x"}, kanban.CodeForbidden); !strings.Contains(msg, "ancestors") {
			t.Errorf("plan outside the tree: got %q, want the tree rule", msg)
		}
	}
	call[kanban.Plan](h, sess, kanban.ActionPlanCreate, PlanCreateIn{TaskID: kid.ID, Content: "kid plan"})
	call[kanban.Plan](h, operator, kanban.ActionPlanCreate, PlanCreateIn{TaskID: sib.ID, Content: "operator reaches anything"})

	call[kanban.Document](h, sess, kanban.ActionDocumentWrite, DocumentWriteIn{TaskID: root.ID, Key: "notes", Content: "up"})
	call[kanban.Document](h, sess, kanban.ActionDocumentWrite, DocumentWriteIn{Key: "mine", Content: "self by default"})
	h.refuse(sess, kanban.ActionDocumentWrite, DocumentWriteIn{TaskID: kid.ID, Key: "down", Content: "x"}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionDocumentWrite, DocumentWriteIn{TaskID: sib.ID, Key: "side", Content: "x"}, kanban.CodeForbidden)
	call[kanban.List[kanban.Document]](h, sess, kanban.ActionDocumentList, TaskPageIn{TaskID: kid.ID})
	h.refuse(sess, kanban.ActionDocumentList, TaskPageIn{TaskID: sib.ID}, kanban.CodeForbidden)
	if got := call[kanban.Document](h, sess, kanban.ActionDocumentGet, DocumentGetIn{TaskID: root.ID, Key: "notes"}); got.Content != "up" {
		t.Errorf("document.get on the parent: got %q, want up", got.Content)
	}
}
