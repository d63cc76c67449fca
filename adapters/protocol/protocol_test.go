package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

type fake struct{}

func (fake) Implementation() any { return map[string]any{"name": "fake"} }

func (fake) Run(seq int64, op string, c json.RawMessage) any {
	switch op {
	case "panic":
		panic("boom")
	case "skip":
		return Skipped(seq, Skipf("not %s", op))
	case "error":
		return ErroredAt(&seq, Erroredf("bad %s", op))
	}
	return Result(seq, string(c))
}

func TestServeAnswersEachLineOnce(t *testing.T) {
	in := strings.Join([]string{
		`{"cmd":"start","version":1}`,
		``,
		`{"cmd":"run","seq":1,"op":"echo","case":{"a":1}}`,
		`{"cmd":"run","seq":2,"op":"panic","case":{}}`,
		`{"cmd":"run","seq":3,"op":"skip","case":{}}`,
		`{"cmd":"run","seq":4,"op":"error","case":{}}`,
		`{"cmd":"run","seq":0,"op":"echo"}`,
		`not json`,
		`{"cmd":"start","version":2}`,
		`{"cmd":"dance"}`,
		`{"cmd":"stop"}`,
		`{"cmd":"run","seq":5,"op":"echo","case":{}}`,
	}, "\n")
	var out strings.Builder
	if err := ServeAdapter(fake{}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"implementation":{"name":"fake"},"ready":true,"version":1}`,
		`{"seq":1,"result":"{\"a\":1}"}`,
		`"message":"panic while answering the panic case: boom"`,
		`{"seq":3,"skipped":true,"message":"not skip"}`,
		`{"seq":4,"errored":true,"context":{"message":"bad error"}}`,
		`{"seq":null,"errored":true,"context":{"message":"run request without a positive integer seq (0)"}}`,
		`"message":"request line is not a JSON object:`,
		`{"message":"this adapter speaks protocol version 1, not 2","ready":false,"version":1}`,
		`{"seq":null,"errored":true,"context":{"message":"unknown cmd \"dance\" (want start, run or stop)"}}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d answers, want %d (nothing after stop):\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("answer %d = %s, want it to contain %s", i+1, lines[i], w)
		}
	}
}

func TestAnEncodingFailureIsAnsweredInBand(t *testing.T) {
	var out strings.Builder
	err := Serve(strings.NewReader("x\n"), &out, func([]byte) (any, bool) { return Result(1, make(chan int)), false }, EncodeFailed)
	if err != nil || !strings.Contains(out.String(), "could not encode the answer") {
		t.Fatalf("err %v, out %s", err, out.String())
	}
}
