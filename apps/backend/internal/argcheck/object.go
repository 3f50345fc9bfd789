package argcheck

import (
	"bytes"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/escape"
)

// DecodeObject decodes raw, a call's arguments, into the JSON object the
// validator checks, numbers kept exact (json.Number); omitted or null
// arguments are {}. Anything else is refused with a *Problems whose text
// is "invalid arguments for <name>: /: expected object": every transport
// refuses a non-object alike.
func DecodeObject(name string, raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, NotObject(name)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, NotObject(name)
	}
	return m, nil
}

// NotObject is the refusal of arguments that are not a JSON object.
func NotObject(name string) *Problems {
	list := []Problem{{Path: "/", Text: "/: expected object"}}
	return &Problems{Tool: name, List: list, sorted: list, plain: !escape.Needed(name)}
}
