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
		{"stopped", TaskInProgress, SessionCancelled, nil, TaskReview, true},
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
