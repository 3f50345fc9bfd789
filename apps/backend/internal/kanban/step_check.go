package kanban

import "strconv"

// Check refuses a step whose settings break a step's rules: a required
// single-line name and bounded color and prompt, a wip_limit, an
// auto-archive delay and a heartbeat interval in range, and automations CheckEvents accepts. Fields
// are named under prefix ("document.workflows[0].steps[2]"; "" for a
// top-level payload). It is the one check of steps no payload schema
// holds: those of an imported workflow document, and the step create
// payload's single-line name.
func (st WorkflowStep) Check(prefix string) error {
	name := func(f string) string {
		if prefix == "" {
			return f
		}
		return prefix + "." + f
	}
	if err := CheckLine(name("name"), st.Name, true, MaxNameLen); err != nil {
		return err
	}
	if err := CheckText(name("color"), st.Color, false, MaxNameLen); err != nil {
		return err
	}
	if err := CheckText(name("prompt"), st.Prompt, false, MaxPromptLen); err != nil {
		return err
	}
	if st.WIPLimit < 0 || st.WIPLimit > MaxWIPLimit {
		return FieldError(name("wip_limit"), "must be between 0 (no limit) and %d", MaxWIPLimit)
	}
	if st.AutoArchiveAfterHours < 0 || st.AutoArchiveAfterHours > MaxAutoArchiveHours {
		return FieldError(name("auto_archive_after_hours"), "must be between 0 (never) and %d", MaxAutoArchiveHours)
	}
	if st.HeartbeatMinutes < 0 || st.HeartbeatMinutes > MaxHeartbeatMinutes {
		return FieldError(name("heartbeat_minutes"), "must be between 0 (never) and %d", MaxHeartbeatMinutes)
	}
	if err := CheckApproval(name("approval"), st.Approval); err != nil {
		return err
	}
	return CheckEvents(name("events"), st.Events)
}

// CheckSteps refuses the steps of a new workflow unless there are 1 to
// MaxWorkflowSteps of them, each passes Check (named field[i]), their
// names are distinct and at most one is the start step: the rules across
// a list of steps that a schema cannot express.
func CheckSteps(field string, steps []WorkflowStep) error {
	if len(steps) == 0 || len(steps) > MaxWorkflowSteps {
		return FieldError(field, "must hold between 1 and %d steps", MaxWorkflowSteps)
	}
	names := make(map[string]bool, len(steps))
	starts := 0
	for i, st := range steps {
		if err := st.Check(field + "[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
		if names[st.Name] {
			return FieldError(field, "step names must be unique within a workflow")
		}
		names[st.Name] = true
		if st.IsStartStep {
			starts++
		}
	}
	if starts > 1 {
		return FieldError(field, "at most one step may be the start step")
	}
	return nil
}
