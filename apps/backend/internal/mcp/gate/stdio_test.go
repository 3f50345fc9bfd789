package gate

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// The lines of stdioCases: three that pass, and the reply to a line over
// the limit.
var (
	stdioGood1    = call("1", `{"name":"t","arguments":{}}`)
	stdioGood2    = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	stdioGood3    = call(`"x"`, `{"name":"u"}`) + "\r" // CRLF line ending kept as sent
	stdioTooLarge = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"request too large: limit is 4194304 bytes"}}`
)

// stdioCases are Stdio's inputs, the lines it passes and the error
// responses it writes.
var stdioCases = []struct {
	name string
	in   string
	pass string // what the returned reader yields
	out  string // error responses written to out
}{
	{
		name: "interleaved good and bad lines",
		in: stdioGood1 + "\n" +
			call("2", `{"name":"t","name":"u"}`) + "\n" +
			"\n  \t\n" +
			stdioGood2 + "\n" +
			`{"jsonrpc":"2.0","method":"tools/call","params":{"Name":"t"}}` + "\n" + // notification: no answer
			"not json\n" +
			"[" + stdioGood1 + "]\n" +
			stdioGood3 + "\n",
		pass: stdioGood1 + "\n" + stdioGood2 + "\n" + stdioGood3 + "\n",
		out: `{"jsonrpc":"2.0","id":2,"error":{"code":-32700,"message":"parse error: duplicate object key"}}` + "\n" +
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON"}}` + "\n" +
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batch requests are not supported"}}` + "\n",
	},
	{
		name: "final line without newline",
		in:   stdioGood1 + "\n" + stdioGood2,
		pass: stdioGood1 + "\n" + stdioGood2 + "\n",
	},
	{
		name: "over-long line then a good line",
		in:   strings.Repeat("a", MaxMessageBytes+10) + "\n" + stdioGood1 + "\n",
		pass: stdioGood1 + "\n",
		out:  stdioTooLarge + "\n",
	},
	{
		name: "line one byte over the limit",
		in:   sized(MaxMessageBytes+1) + "\n" + stdioGood1 + "\n",
		pass: stdioGood1 + "\n",
		out:  stdioTooLarge + "\n",
	},
	{
		name: "line at the limit",
		in:   sized(MaxMessageBytes) + "\n" + stdioGood1,
		pass: sized(MaxMessageBytes) + "\n" + stdioGood1 + "\n",
	},
	{
		name: "over-long final line without newline",
		in:   stdioGood1 + "\n" + strings.Repeat("[", MaxMessageBytes+1),
		pass: stdioGood1 + "\n",
		out:  stdioTooLarge + "\n",
	},
	{name: "empty input", in: ""},
}

func TestStdio(t *testing.T) {
	for _, tt := range stdioCases {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			// OneByteReader on the output side checks partial reads of a line;
			// HalfReader on the input side splits lines across reads.
			r := iotest.OneByteReader(Stdio(iotest.HalfReader(strings.NewReader(tt.in)), NewSyncWriter(&out)))
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if string(got) != tt.pass {
				t.Errorf("got passed lines %.200q, want %.200q", got, tt.pass)
			}
			if out.String() != tt.out {
				t.Errorf("got out %.300q, want %.300q", out.String(), tt.out)
			}
		})
	}
}

func TestStdioInputError(t *testing.T) {
	boom := errors.New("boom")
	in := io.MultiReader(strings.NewReader(call("1", `{"name":"t"}`)+"\n"+`{"partial":`), iotest.ErrReader(boom))
	var out bytes.Buffer
	got, err := io.ReadAll(Stdio(in, &out))
	if !errors.Is(err, boom) {
		t.Errorf("got error %v, want %v", err, boom)
	}
	if want := call("1", `{"name":"t"}`) + "\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if out.Len() != 0 {
		t.Errorf("got out %q, want nothing for a dropped partial line", out.String())
	}
}

func TestStdioWriteError(t *testing.T) {
	r := Stdio(strings.NewReader("[]\n"), failWriter{})
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, errWrite) {
		t.Errorf("got error %v, want %v", err, errWrite)
	}
}

var errWrite = errors.New("write failed")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

// TestStdioClose checks that closing the input side of a pipe ends a Read
// that is waiting for the next line.
func TestStdioClose(t *testing.T) {
	pr, pw := io.Pipe()
	r := Stdio(pr, io.Discard)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		done <- err
	}()
	if _, err := pw.Write([]byte("[]\n")); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := pw.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("got error %v, want EOF (nil from ReadAll)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("got a blocked reader after close, want EOF")
	}
}
