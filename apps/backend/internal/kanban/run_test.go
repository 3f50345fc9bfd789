package kanban

import "testing"

func TestTaskStateForSessions(t *testing.T) {
	tests := []struct {
		name    string
		current TaskState
		changed SessionState
		live    []SessionState
		want    TaskState
		changes bool
	}{
		{"agent starts", TaskTodo, SessionStarting, []SessionState{SessionStarting}, TaskInProgress, true},
		{"turn runs", TaskInProgress, SessionRunning, []SessionState{SessionRunning}, TaskInProgress, false},
		{"waits for a person", TaskInProgress, SessionWaitingForInput, []SessionState{SessionWaitingForInput}, TaskWaitingForInput, true},
		{"turn ends", TaskInProgress, SessionIdle, []SessionState{SessionIdle}, TaskReview, true},
		{"agent exits", TaskReview, SessionCompleted, nil, TaskReview, false},
		{"agent fails", TaskInProgress, SessionFailed, nil, TaskFailed, true},
		{"stopped mid-work", TaskInProgress, SessionCancelled, nil, TaskCancelled, true},
		{"stopped at rest", TaskReview, SessionCompleted, nil, TaskReview, false},
		{"another session still works", TaskInProgress, SessionIdle, []SessionState{SessionIdle, SessionRunning}, TaskInProgress, false},
		{"waiting beats working", TaskInProgress, SessionRunning, []SessionState{SessionRunning, SessionWaitingForInput}, TaskWaitingForInput, true},
		{"one fails while another is idle", TaskReview, SessionFailed, []SessionState{SessionIdle}, TaskFailed, true},
		{"queued implies nothing", TaskTodo, SessionQueued, []SessionState{SessionQueued}, TaskTodo, false},
		{"completed task kept at turn end", TaskCompleted, SessionIdle, []SessionState{SessionIdle}, TaskCompleted, false},
		{"cancelled task kept when stopped", TaskCancelled, SessionCancelled, nil, TaskCancelled, false},
		{"completed task reopened by work", TaskCompleted, SessionRunning, []SessionState{SessionRunning}, TaskInProgress, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changes := TaskStateForSessions(tt.current, tt.changed, tt.live)
			if got != tt.want || changes != tt.changes {
				t.Fatalf("got %s %v, want %s %v", got, changes, tt.want, tt.changes)
			}
		})
	}
}

// TestStoppedAs: stopping an agent mid-work cancels the work; stopping
// one at rest is an agent that ended (review); one that never started
// implies nothing. Before, every stop read REVIEW.
func TestStoppedAs(t *testing.T) {
	tests := []struct {
		was  []SessionState
		want SessionState
		task TaskState
	}{
		{[]SessionState{SessionRunning}, SessionCancelled, TaskCancelled},
		{[]SessionState{SessionWaitingForInput}, SessionCancelled, TaskCancelled},
		{[]SessionState{SessionStarting}, SessionCancelled, TaskCancelled},
		{[]SessionState{SessionIdle}, SessionCompleted, TaskReview},
		{[]SessionState{SessionIdle, SessionRunning}, SessionCancelled, TaskCancelled},
		{[]SessionState{SessionQueued}, SessionQueued, TaskInProgress},
	}
	for _, tt := range tests {
		got := StoppedAs(tt.was)
		if got != tt.want {
			t.Fatalf("StoppedAs(%v): got %s, want %s", tt.was, got, tt.want)
		}
		if st, _ := TaskStateForSessions(TaskInProgress, got, nil); st != tt.task {
			t.Fatalf("task state after stopping %v: got %s, want %s", tt.was, st, tt.task)
		}
	}
}
