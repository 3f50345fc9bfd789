// Package action is the one registry of dotted `noun.verb` actions shared by
// every transport (WebSocket, CLI, board, the in-process MCP endpoint).
// Each action owns its contract: one declaration (Def) holds its name, the
// principals allowed to call it, its payload type, the JSON Schema of that
// payload (written with package schema's builders and kanban's bounds; its
// shape is proven against the payload type when it compiles), its legacy
// aliases and its handler. The registry compiles every contract once with
// argcheck's secure compiler and checks it before the handler on every
// call, whatever the transport — so this package's own tests run validated
// too. Business rules live here and in the store, never in a transport.
//
// Adding an action is one declaration in the file of its noun:
//
//	var _ = declare(Def[FooIn, *kanban.Foo]{
//		Name:   kanban.ActionFoo,   // the name, declared once in kanban
//		Tool:   "foo_kandev",       // only if an MCP tool serves it unchanged
//		Effect: Writes,             // Reads, Writes (audited) or External
//		Allow:  all,
//		Schema: schema.Obj("", schema.P{"id": idProp("The foo.")}, "id"),
//		Run:    (*Service).foo,
//	})
//
// It is then validated on every transport; a tool that serves it is
// declared from it in package catalog (title, description, output and the
// mode group; input, aliases and — for Tool — name come from here, or
// Drop/Require narrow the contract), and the generated tool reference
// (`kandev tools --markdown`, docs/public/mcp-tool-reference.md) documents
// it. Declaration errors — a duplicate name, a schema that does not fit
// the payload type or does not compile — stop the backend at start (New).
//
// It imports kanban, schema, argcheck, fsguard, redact, taskdir, worktree
// and the standard library; it must not import the MCP packages, the store or the
// WebSocket package.
package action
