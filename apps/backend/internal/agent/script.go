package agent

// script runs one executor script and records its output.
func (r *run) script(l *launch, name, script string) error {
	env := append(append([]string{}, l.env...), "KANDEV_TASK_ID="+l.task.ID, "KANDEV_SESSION_ID="+r.id, "KANDEV_WORKDIR="+l.workdir)
	var out string
	var err error
	if r.host != nil { // on the SSH host, in the agent's directory there
		env[len(env)-1] = "KANDEV_WORKDIR=" + l.cwd
		out, err = r.host.runScript(r.ctx, env[len(l.env):], script, r.m.cfg.ScriptTimeout, 16<<10)
	} else {
		cmd := scriptCommand(l.workdir, script, env)
		if r.box != nil { // inside the container, with its environment and the session's variables
			cmd = r.box.c.Exec(r.box.id, l.workdir, env[len(l.env):], "sh", "-c", script)
		}
		out, err = runScript(r.ctx, cmd, r.m.cfg.ScriptTimeout, 16<<10)
	}
	text := "The executor's " + name + " script "
	if err != nil {
		text += "failed (" + err.Error() + ")"
	} else {
		text += "succeeded"
	}
	if out != "" {
		text += ". Output:\n" + l.redact.String(out)
	}
	typ := "status"
	if err != nil {
		typ = "error"
	}
	r.rec.note(typ, text)
	return err
}
