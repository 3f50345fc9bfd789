package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schemabudget"
)

var servedName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// tool is an upstream tool compiled and ready to serve.
type tool struct {
	upstream  string // the upstream name
	wire      mcp.Tool
	validator *argcheck.Validator
	// entry is the tool's tools/list entry as advertised (the JSON the
	// agent is sent), which the byte budgets count.
	entry []byte
}

// wireTool is what the gateway reads of one listed tool.
type wireTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *struct {
		Title           string `json:"title"`
		ReadOnlyHint    *bool  `json:"readOnlyHint"`
		DestructiveHint *bool  `json:"destructiveHint"`
		IdempotentHint  *bool  `json:"idempotentHint"`
		OpenWorldHint   *bool  `json:"openWorldHint"`
	} `json:"annotations"`
}

// listTools reads every page of tools/list (bounded in pages and tools)
// and returns the tools (decoded in one pass per page) and a fingerprint
// of the answers.
func listTools(ctx context.Context, c *conn) ([]wireTool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var all []wireTool
	h := sha256.New()
	cursor, seen := "", map[string]bool{}
	for range maxPages {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		resp, _, err := c.request(ctx, string(mcp.MethodToolsList), params)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, "", fmt.Errorf("tools/list did not answer within %s", listTimeout)
		case err != nil:
			return nil, "", errors.New("tools/list failed: the connection was lost")
		case resp.Error != nil:
			return nil, "", fmt.Errorf("tools/list failed (JSON-RPC error %d)", resp.Error.Code)
		}
		h.Write(resp.Result)
		var page struct {
			Tools      []wireTool `json:"tools"`
			NextCursor string     `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &page); err != nil {
			return nil, "", errors.New("tools/list answered with an invalid result")
		}
		all = append(all, page.Tools...)
		if len(all) > MaxTools {
			return all[:MaxTools], hex.EncodeToString(h.Sum(nil)), nil
		}
		if page.NextCursor == "" || seen[page.NextCursor] {
			return all, hex.EncodeToString(h.Sum(nil)), nil
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return all, hex.EncodeToString(h.Sum(nil)), nil
}

// buildTools turns a server's listed tools into served tools and
// refusals: each tool is checked (buildTool), a name listed twice is
// served once, and the byte budgets apply to what is advertised.
func buildTools(server string, b Budget, listed []wireTool) ([]*tool, []kanban.RefusedTool) {
	var fit []*tool
	var refused []kanban.RefusedTool
	names := map[string]bool{}
	for _, w := range listed {
		t, ref := buildTool(server, w)
		switch {
		case ref != nil:
		case names[t.wire.Name]:
			ref = &kanban.RefusedTool{Tool: escape.Excerpt(t.upstream, maxToolExcerpt), Limit: "name_collision", Reason: "the server lists this name twice"}
		case len(t.entry) > b.Tool:
			ref = &kanban.RefusedTool{Tool: escape.Excerpt(t.upstream, maxToolExcerpt), Limit: LimitOverToolBudget,
				Reason: fmt.Sprintf("as advertised the tool is %d bytes; the budget is %d bytes per tool (max_tool_bytes)", len(t.entry), b.Tool)}
		}
		if ref != nil {
			ref.Server = server
			refused = append(refused, *ref)
			continue
		}
		names[t.wire.Name] = true
		fit = append(fit, t)
	}
	return admit(server, b.Server, fit, refused)
}

// admit serves tools in name order while their advertised bytes fit the
// server's budget: the first tool that would take the total past it, and
// every tool after it in name order, is refused. The outcome depends on
// the tools alone, never on the order the server listed them in.
func admit(server string, limit int, tools []*tool, refused []kanban.RefusedTool) ([]*tool, []kanban.RefusedTool) {
	slices.SortFunc(tools, func(a, b *tool) int { return strings.Compare(a.wire.Name, b.wire.Name) })
	held := 0
	for i, t := range tools {
		if held+len(t.entry) <= limit {
			held += len(t.entry)
			continue
		}
		first := fmt.Sprintf("in name order the tools before it take %d bytes and it %d, past the budget of %d bytes per server (max_server_bytes)",
			held, len(t.entry), limit)
		rest := fmt.Sprintf("it comes after %s, the first tool in name order past the budget of %d bytes per server (max_server_bytes)",
			escape.Excerpt(t.upstream, 40), limit)
		for j, r := range tools[i:] {
			reason := rest
			if j == 0 {
				reason = first
			}
			refused = append(refused, kanban.RefusedTool{Server: server, Tool: escape.Excerpt(r.upstream, maxToolExcerpt), Limit: LimitOverServerBudget, Reason: reason})
		}
		return tools[:i], refused
	}
	return tools, refused
}

// buildTool checks one tool: its served name, then its schema (estimate,
// then the secure compiler), then mcp-go's own checks of the declaration.
func buildTool(server string, w wireTool) (*tool, *kanban.RefusedTool) {
	excerpt := escape.Excerpt(w.Name, maxToolExcerpt)
	if excerpt == "" {
		excerpt = "(empty)"
	}
	refuse := func(limit, reason string) (*tool, *kanban.RefusedTool) {
		return nil, &kanban.RefusedTool{Tool: excerpt, Limit: limit, Reason: escape.Excerpt(reason, maxReasonBytes)}
	}
	name := server + "__" + w.Name
	if !servedName.MatchString(name) {
		return refuse("name", fmt.Sprintf("the served name %s__<tool> must be at most %d characters of [A-Za-z0-9_.-]", server, maxServedName))
	}
	if len(w.InputSchema) == 0 || string(w.InputSchema) == "null" {
		return refuse(string(schemabudget.LimitRoot), "the tool has no input schema")
	}
	v, err := argcheck.CompileWith(name, w.InputSchema, argcheck.Options{})
	if err != nil {
		var ref *schemabudget.Refusal
		if errors.As(err, &ref) {
			return refuse(string(ref.Limit), ref.Error())
		}
		// The compiler's last line names the failing keyword; it quotes the
		// schema, so it is shown escaped and clipped.
		lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
		return refuse("compile", "the schema does not compile: "+strings.TrimSpace(lines[len(lines)-1]))
	}
	wt := mcp.Tool{Name: name, Title: escape.Excerpt(w.Title, maxTitleBytes), Description: clip(w.Description, maxDescriptionBytes),
		RawInputSchema: w.InputSchema}
	if a := w.Annotations; a != nil {
		wt.Annotations = mcp.ToolAnnotation{Title: escape.Excerpt(a.Title, maxTitleBytes), ReadOnlyHint: a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
	}
	if err := mcp.ValidateParamHeaderAnnotations(&wt); err != nil {
		return refuse("annotations", "the schema's x-mcp-header annotations are invalid")
	}
	entry, err := json.Marshal(wt) // as mcp-go encodes it in tools/list
	if err != nil {
		return refuse("syntax", "the tool does not encode as JSON")
	}
	return &tool{upstream: w.Name, wire: wt, validator: v, entry: entry}, nil
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
