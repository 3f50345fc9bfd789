// Package kanban holds Kandev's domain: entity types, their validation rules,
// the error type with codes that every transport maps, pagination, and the
// service interfaces the store implements. Every bound and enum that a tool
// schema, an action and the store share is declared here once and used by
// all three (TestBoundsWrittenOnce keeps it so). So is every action name
// (Action) and every event the backend publishes, with its payload type
// (Event; TestEventsPublishedByDeclaration keeps events from being
// published or spelt by name elsewhere). It imports only the
// standard library; every adapter (store, action, ws, mcp) depends on it,
// never the reverse.
package kanban
