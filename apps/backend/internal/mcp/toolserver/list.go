package toolserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// ListTools returns the tools/list result's tools array for a profile,
// produced by a real tools/list request through mcp-go so that the CLI and
// the docs print exactly what clients are served.
func ListTools(ctx context.Context, c *Compiled, p catalog.Profile) ([]json.RawMessage, error) {
	s, err := New(Config{Compiled: c, Profile: p})
	if err != nil {
		return nil, err
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kandev-tools","version":"1"}}}`
	s.mcp.HandleMessage(ctx, json.RawMessage(init))
	resp := s.mcp.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	var out struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	if out.Result.Tools == nil {
		out.Result.Tools = []json.RawMessage{}
	}
	return out.Result.Tools, nil
}
