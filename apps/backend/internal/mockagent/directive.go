package mockagent

import (
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// Directive is one "@" line of a prompt: its verb and the rest of the line.
type Directive struct {
	Verb string // one of Directives (or an unknown word)
	Arg  string
}

// Directives the mock agent follows, in the order they appear in a prompt
// (all text blocks of the prompt, line by line; other lines are ignored):
//
//	@say TEXT              an agent message, streamed in several chunks
//	@think TEXT            a thought
//	@tool NAME JSON        call tool NAME (of the MCP servers it was given)
//	                       with the JSON object as arguments (default {})
//	@permission TITLE      ask permission; continue when allowed, else end the turn
//	@plan A | B | C        report a plan with these entries
//	@sleep MS              wait MS milliseconds (≤ 60000; cancellable)
//	@exit CODE             exit the process with CODE
//	@end                   end the turn here
//	@mode                  say the session's ACP mode ("mode: plan")
//	@mode ID               switch to mode ID by itself (default or plan) and
//	                       tell the client (current_mode_update)
//	@model                 say the session's ACP model ("model: mock-fast")
//	@session               say the ACP session id and the prompt's number in it
//	@prompt                say the prompt's text blocks: how many, and the
//	                       first line of each
//	@write PATH TEXT       write TEXT (\n, \t, \\ escapes) to PATH inside the
//	                       working directory, parent directories made
//	                       (≤ MaxWriteBytes; relative, no "..", no link out)
//	@sh COMMAND            run sh -c COMMAND in the working directory
//	                       (≤ Options.ShTimeout, then its process group is
//	                       killed; MaxShOutput of output reported)
//	@usage JSON            add ACP token usage to the turn's prompt response
//	                       ({"inputTokens":100,"outputTokens":20,
//	                       "cachedReadTokens":5,...}; several add up)
//	@cost JSON             send a usage_update notification: the session's
//	                       cumulative cost and context window
//	                       ({"used":1200,"size":200000,
//	                       "cost":{"amount":0.25,"currency":"USD"}})
const Directives = "say think tool permission plan sleep exit end mode model session prompt write sh usage cost"

// Parse returns the directives of a prompt's text blocks.
func Parse(blocks []acp.ContentBlock) []Directive {
	var out []Directive
	for _, b := range blocks {
		if b.Text == nil {
			continue
		}
		for _, line := range strings.Split(b.Text.Text, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "@") || len(line) < 2 {
				continue
			}
			verb, arg, _ := strings.Cut(line[1:], " ")
			out = append(out, Directive{Verb: verb, Arg: strings.TrimSpace(arg)})
		}
	}
	return out
}
