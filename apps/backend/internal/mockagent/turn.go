package mockagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// maxSleep bounds @sleep.
const maxSleep = 60 * time.Second

// turn runs the directives of one prompt.
type turn struct {
	a      *agent
	s      *session
	ctx    context.Context
	prompt []acp.ContentBlock
	number int // the prompt's number in its session, from 1
	calls  int
	usage  *acp.Usage // the turn's token usage, as @usage reported it
}

// run performs one directive; done ends the turn with stop.
func (t *turn) run(d Directive) (stop acp.StopReason, done bool) {
	if t.ctx.Err() != nil {
		return acp.StopReasonCancelled, true
	}
	switch d.Verb {
	case "say":
		for _, c := range chunks(d.Arg, 3) {
			t.update(acp.UpdateAgentMessageText(c))
		}
	case "think":
		t.update(acp.UpdateAgentThoughtText(d.Arg))
	case "tool":
		t.tool(d.Arg)
	case "permission":
		if !t.permission(d.Arg) {
			return acp.StopReasonEndTurn, true
		}
	case "plan":
		var entries []acp.PlanEntry
		for _, e := range strings.Split(d.Arg, "|") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, acp.PlanEntry{Content: e, Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusPending})
			}
		}
		t.update(acp.UpdatePlan(entries...))
	case "sleep":
		return t.sleep(d.Arg)
	case "exit":
		code, err := strconv.Atoi(d.Arg)
		if err != nil || code < 0 || code > 255 {
			t.say("mock agent: @exit needs a code from 0 to 255")
			return "", false
		}
		t.a.opts.Exit(code)
	case "end":
		return acp.StopReasonEndTurn, true
	case "mode":
		t.mode(d.Arg)
	case "model":
		t.say("model: " + t.s.currentModel() + "\n")
	case "session":
		t.say(fmt.Sprintf("session: %s, prompt %d\n", t.s.id, t.number))
	case "prompt":
		t.say(describePrompt(t.prompt) + "\n")
	case "write":
		t.write(d.Arg)
	case "sh":
		t.sh(d.Arg)
	case "usage":
		t.addUsage(d.Arg)
	case "cost":
		t.cost(d.Arg)
	default:
		t.say("mock agent: unknown directive @" + clip(d.Verb, 40) + " (known: " + Directives + ")")
	}
	return "", false
}

func (t *turn) update(u acp.SessionUpdate) {
	_ = t.a.conn.SessionUpdate(t.ctx, acp.SessionNotification{SessionId: t.s.id, Update: u})
}

func (t *turn) say(text string) { t.update(acp.UpdateAgentMessageText(text)) }

func (t *turn) sleep(arg string) (acp.StopReason, bool) {
	ms, err := strconv.Atoi(arg)
	if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > maxSleep {
		t.say("mock agent: @sleep needs milliseconds from 0 to 60000")
		return "", false
	}
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return "", false
	case <-t.ctx.Done():
		return acp.StopReasonCancelled, true
	}
}

// callID returns a new tool call id of the turn.
func (t *turn) callID(kind string) acp.ToolCallId {
	t.calls++
	return acp.ToolCallId(fmt.Sprintf("mock-%s-%d-%d", kind, time.Now().UnixNano(), t.calls))
}

// tool calls an MCP tool and reports the call and its result.
func (t *turn) tool(arg string) {
	name, rawArgs, _ := strings.Cut(arg, " ")
	id := t.callID("call")
	var args map[string]any
	if rawArgs = strings.TrimSpace(rawArgs); rawArgs != "" {
		if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
			t.say("mock agent: @tool " + clip(name, 100) + ": the arguments are not a JSON object")
			return
		}
	}
	t.update(acp.StartToolCall(id, name, acp.WithStartKind(acp.ToolKindOther),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartRawInput(args)))
	text, isErr, err := t.s.tools.call(t.ctx, name, args)
	status := acp.ToolCallStatusCompleted
	if err != nil {
		text, status = err.Error(), acp.ToolCallStatusFailed
	} else if isErr {
		status = acp.ToolCallStatusFailed
	}
	t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(status), acp.WithUpdateRawOutput(text)))
}

// permission asks the client; true when an allow option was chosen.
func (t *turn) permission(title string) bool {
	t.calls++
	id := acp.ToolCallId(fmt.Sprintf("mock-permission-%d-%d", time.Now().UnixNano(), t.calls))
	if title == "" {
		title = "Mock action"
	}
	resp, err := t.a.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: t.s.id,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: id, Title: acp.Ptr(title), Kind: acp.Ptr(acp.ToolKindOther), Status: acp.Ptr(acp.ToolCallStatusPending)},
		Options: []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject"},
		},
	})
	allowed := err == nil && resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "allow"
	if allowed {
		t.say("Permission granted: " + title)
	} else {
		t.say("Permission not granted: " + title)
	}
	return allowed
}

// describePrompt says how many text blocks a prompt has and the first
// line of each (at most 100 bytes).
func describePrompt(blocks []acp.ContentBlock) string {
	var b strings.Builder
	n := 0
	for _, c := range blocks {
		if c.Text == nil {
			continue
		}
		n++
		first, _, _ := strings.Cut(c.Text.Text, "\n")
		fmt.Fprintf(&b, "\n%d: %s", n, clip(strings.TrimSpace(first), 100))
	}
	noun := "blocks"
	if n == 1 {
		noun = "block"
	}
	return fmt.Sprintf("prompt: %d text %s", n, noun) + b.String()
}

// chunks splits s into about n pieces (a streamed message).
func chunks(s string, n int) []string {
	if len(s) < n*2 {
		return []string{s}
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && !utf8Boundary(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func utf8Boundary(b byte) bool { return b < 0x80 || b >= 0xC0 }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
