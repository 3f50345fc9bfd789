package gate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	msgSyntax    = "parse error: invalid JSON"
	msgTrailing  = "parse error: trailing data after the JSON value"
	msgUTF8      = "parse error: invalid UTF-8"
	msgDepth     = "parse error: nesting deeper than 64"
	msgDup       = "parse error: duplicate object key"
	msgNumber    = "parse error: number longer than 64 characters"
	msgTooLarge  = "request too large: limit is 4194304 bytes"
	msgBatch     = "invalid request: batch requests are not supported"
	msgNotObject = "invalid request: message must be a JSON object"
	msgCase      = "invalid request: member names jsonrpc, id, method, params, result, error must be lower-case"
	msgParams    = "invalid params: tools/call params allow only name, arguments, _meta"
	msgParamsObj = "invalid params: tools/call params must be an object"
	msgSurrogate = "parse error: unpaired UTF-16 surrogate escape"
)

// call builds a tools/call request with the given id and raw params.
func call(id, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
}

// nested returns a request whose params hold n nested arrays (depth n+1).
func nested(n int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"x","params":` +
		strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
}

// Bounds the cases of checkCases sit on: ids of 128 and 129 bytes, a
// number of 64 characters.
var (
	long128 = `"` + strings.Repeat("a", 128) + `"`
	long129 = `"` + strings.Repeat("a", 129) + `"`
	num64   = "1" + strings.Repeat("0", 63)
)

// checkCases are Check's messages and the refusal each gets (code 0:
// accepted), with the id it echoes ("" for null) and whether it is a
// notification.
var checkCases = []struct {
	name   string
	msg    string
	code   int // 0: accepted
	text   string
	id     string // echoed id; "" for null
	notify bool
}{
	{name: "initialize", msg: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
	{name: "tools/call", msg: call(`"a-1"`, `{"name":"list_tasks_kandev","arguments":{"limit":10,"tags":["x","é😀"]},"_meta":{"progressToken":7}}`)},
	{name: "tools/call without arguments", msg: call("1", `{"name":"t"}`)},
	{name: "notification", msg: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{name: "response to server ping", msg: `{"jsonrpc":"2.0","id":5,"result":{}}`},
	{name: "surrounding whitespace", msg: " \t\r\n" + call("1", `{"name":"t"}`) + "\r\n"},
	{name: "escapes and surrogate pair", msg: call("1", `{"name":"t","arguments":{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}`)},
	{name: "distinct keys differing in case", msg: call("1", `{"name":"t","arguments":{"a":1,"A":2}}`)},
	{name: "same key in sibling objects", msg: call("1", `{"name":"t","arguments":{"x":{"a":1},"y":{"a":2}}}`)},
	{name: "depth 64", msg: nested(63)},
	{name: "number of 64 characters", msg: call("1", `{"name":"t","arguments":{"n":`+num64+`}}`)},
	{name: "numbers", msg: call("1", `{"name":"t","arguments":{"n":[0,-0,1.5,-2e10,3E+2,4e-1]}}`)},
	{name: "other method with odd params keys", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"Name":1}}`},

	{name: "too large", msg: call("1", `{"name":"t","arguments":{"s":"`+strings.Repeat("a", MaxMessageBytes)+`"}}`), code: -32700, text: msgTooLarge},
	{name: "invalid UTF-8 in string", msg: call("2", `{"name":"t","arguments":{"s":"a`+"\xff"+`"}}`), code: -32700, text: msgUTF8, id: "2"},
	{name: "invalid UTF-8 in key", msg: call("3", `{"name":"t","arguments":{"k`+"\xc3\x28"+`":1}}`), code: -32700, text: msgUTF8, id: "3"},
	{name: "UTF-8 surrogate bytes", msg: call("1", `{"name":"`+"\xed\xa0\x80"+`"}`), code: -32700, text: msgUTF8, id: "1"},
	{name: "lone surrogate escape", msg: call("1", `{"name":"\ud800"}`), code: -32700, text: msgSurrogate, id: "1"},
	{name: "depth 65", msg: nested(64), code: -32700, text: msgDepth, id: "1"},
	{name: "duplicate key at root", msg: `{"jsonrpc":"2.0","id":1,"method":"a","method":"tools/call"}`, code: -32700, text: msgDup, id: "1"},
	{name: "duplicate id at root", msg: `{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`, code: -32700, text: msgDup},
	{name: "duplicate key nested", msg: `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":[{"k":1,"k":2}]}}`, code: -32700, text: msgDup, id: "1"},
	{name: "duplicate key in arguments", msg: call("4", `{"name":"t","arguments":{"path":"a","path":"b"}}`), code: -32700, text: msgDup, id: "4"},
	{name: "duplicate key escaped equal", msg: call("5", `{"name":"t","arguments":{"a":1,"\u0061":2}}`), code: -32700, text: msgDup, id: "5"},
	{name: "duplicate key among many", msg: call("6", `{"name":"t","arguments":{`+manyKeys(40)+`,"k7":0}}`), code: -32700, text: msgDup, id: "6"},
	{name: "number of 65 characters", msg: call("7", `{"name":"t","arguments":{"n":`+num64+`0}}`), code: -32700, text: msgNumber, id: "7"},
	{name: "long fraction", msg: call("7", `{"name":"t","arguments":{"n":0.`+strings.Repeat("1", 63)+`}}`), code: -32700, text: msgNumber, id: "7"},
	{name: "batch", msg: `[` + call("1", `{"name":"t"}`) + `]`, code: -32600, text: msgBatch},
	{name: "string at top level", msg: `"hello"`, code: -32600, text: msgNotObject},
	{name: "capitalised Name", msg: call("8", `{"Name":"t","arguments":{}}`), code: -32602, text: msgParams, id: "8"},
	{name: "argument instead of arguments", msg: call("9", `{"name":"t","argument":{}}`), code: -32602, text: msgParams, id: "9"},
	{name: "extra key in params", msg: call(`"s"`, `{"name":"t","arguments":{},"extra":1}`), code: -32602, text: msgParams, id: `"s"`},
	{name: "params not an object", msg: call("1", `["t"]`), code: -32602, text: msgParamsObj, id: "1"},
	{name: "params missing", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, code: -32602, text: msgParamsObj, id: "1"},
	{name: "escaped tools/call method", msg: `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"nam\u0065":"t","x":1}}`, code: -32602, text: msgParams, id: "1"},
	{name: "tools/call notification", msg: `{"jsonrpc":"2.0","method":"tools/call","params":{"Name":"t"}}`, code: -32602, text: msgParams, notify: true},
	{name: "capitalised Method", msg: `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"Name":"t"}}`, code: -32600, text: msgCase, id: "1"},
	{name: "long-s params", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"paramſ":{"Name":"t"}}`, code: -32600, text: msgCase, id: "1"},
	{name: "trailing garbage", msg: call("1", `{"name":"t"}`) + `x`, code: -32700, text: msgTrailing, id: "1"},
	{name: "second value", msg: call("1", `{"name":"t"}`) + `{}`, code: -32700, text: msgTrailing, id: "1"},
	{name: "empty", msg: ``, code: -32700, text: "parse error: empty message"},
	{name: "whitespace only", msg: " \n", code: -32700, text: "parse error: empty message"},
	{name: "truncated", msg: `{"jsonrpc":"2.0","id":1,"method":`, code: -32700, text: msgSyntax, id: "1"},
	{name: "trailing comma", msg: `{"jsonrpc":"2.0","id":1,}`, code: -32700, text: msgSyntax, id: "1"},
	{name: "leading zero", msg: `{"id":01}`, code: -32700, text: msgSyntax},
	{name: "control character in string", msg: "{\"id\":1,\"m\":\"a\tb\"}", code: -32700, text: msgSyntax, id: "1"},
	{name: "bad escape", msg: `{"id":1,"m":"\x"}`, code: -32700, text: msgSyntax, id: "1"},
	{name: "single quotes", msg: `{'id':1}`, code: -32700, text: msgSyntax},

	{name: "id string 128 bytes echoed", msg: call(long128, `{"Name":"t"}`), code: -32602, text: msgParams, id: long128},
	{name: "id string 129 bytes not echoed", msg: call(long129, `{"Name":"t"}`), code: -32602, text: msgParams},
	{name: "negative integer id echoed", msg: call("-12", `{"Name":"t"}`), code: -32602, text: msgParams, id: "-12"},
	{name: "fractional id not echoed", msg: call("1.5", `{"Name":"t"}`), code: -32602, text: msgParams},
	{name: "object id refused, not echoed", msg: call(`{"a":1}`, `{"name":"t"}`), code: -32600, text: "invalid request: id must be a string, a number or null"},
	{name: "boolean id refused, not echoed", msg: call("true", `{"name":"t"}`), code: -32600, text: "invalid request: id must be a string, a number or null"},
	{name: "array id refused", msg: call(`[1]`, `{"name":"t"}`), code: -32600, text: "invalid request: id must be a string, a number or null"},
	{name: "float id passes", msg: call(`1.5`, `{"name":"t"}`)},
	{name: "null id is a notification", msg: call("null", `{"Name":"t"}`), code: -32602, text: msgParams, notify: true},
	{name: "id after the error not echoed", msg: `{"jsonrpc":"2.0","method":"x","params":{"a":1,"a":2},"id":9}`, code: -32700, text: msgDup},
}

func TestCheck(t *testing.T) {
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			e := Check([]byte(tt.msg))
			if tt.code == 0 {
				if e != nil {
					t.Fatalf("got %d %q, want accepted", e.Code, e.Message)
				}
				return
			}
			if e == nil {
				t.Fatalf("got accepted, want %d %q", tt.code, tt.text)
			}
			if e.Code != tt.code || e.Message != tt.text {
				t.Errorf("got %d %q, want %d %q", e.Code, e.Message, tt.code, tt.text)
			}
			if string(e.ID) != tt.id {
				t.Errorf("got id %q, want %q", e.ID, tt.id)
			}
			if e.Notification != tt.notify {
				t.Errorf("got notification %v, want %v", e.Notification, tt.notify)
			}
			wantStatus := 400
			if tt.text == msgTooLarge {
				wantStatus = 413
			}
			if e.HTTPStatus != wantStatus {
				t.Errorf("got status %d, want %d", e.HTTPStatus, wantStatus)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('0'+i/10)) + string(rune('0'+i%10)) + `":0`)
	}
	return strings.ReplaceAll(b.String(), `"k07"`, `"k7"`)
}

func TestResponse(t *testing.T) {
	e := Check([]byte(call(`"req-<1>"`, `{"Name":"t"}`)))
	if e == nil {
		t.Fatal("got accepted, want rejected")
	}
	want := `{"jsonrpc":"2.0","id":"req-<1>","error":{"code":-32602,"message":"invalid params: tools/call params allow only name, arguments, _meta"}}`
	if got := string(e.Response()); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	e = Check([]byte(`[]`))
	want = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batch requests are not supported"}}`
	if got := string(e.Response()); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestCheckDoesNotRetainMessage(t *testing.T) {
	msg := []byte(call("42", `{"Name":"t"}`))
	e := Check(msg)
	copy(msg, strings.Repeat("x", len(msg)))
	if string(e.ID) != "42" {
		t.Errorf("got id %q, want 42", e.ID)
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		call("1", `{"name":"t","arguments":{"a":[1,2.5e3,true,null,"x\u00e9"]}}`),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"a":1,"\u0061":2}`, `[{"id":1}]`, `{"id":"\ud83d\ude00"}`, `{"a":{"b":[]}} x`,
		nested(10), "{\"a\":\"\xff\"}", `{"n":-0.0e+0}`, `{"method":"tools\/call","params":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		e := Check(msg)
		if e == nil {
			var m map[string]any
			if err := json.Unmarshal(msg, &m); err != nil {
				t.Fatalf("accepted %q, but encoding/json says %v", msg, err)
			}
			return
		}
		if len(e.Response()) == 0 || !json.Valid(e.Response()) {
			t.Fatalf("invalid response %q", e.Response())
		}
		switch e.Message {
		case msgSyntax, msgTrailing, "parse error: empty message":
			if json.Valid(msg) {
				t.Fatalf("got %q for %q, which encoding/json accepts", e.Message, msg)
			}
		case msgUTF8:
			if utf8.Valid(msg) {
				t.Fatalf("got %q for valid UTF-8 %q", e.Message, msg)
			}
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	args := `{"workspace_id":"ws-0001","workflow_id":"wf-0002","title":"Fix the flaky login test",` +
		`"prompt":"` + strings.Repeat("Investigate the failure and fix it. ", 20) + `",` +
		`"start_agent":true,"blocked_by":["t-1","t-2","t-3"],"limit":25,"meta":{"a":1,"b":[1,2,3]}}`
	msg := []byte(call("17", `{"name":"create_task_kandev","arguments":`+args+`,"_meta":{"progressToken":"p-17"}}`))
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if e := Check(msg); e != nil {
			b.Fatalf("got %q, want accepted", e.Message)
		}
	}
}
