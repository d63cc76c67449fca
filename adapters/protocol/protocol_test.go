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
		`{"implementation":{"batch":64,"name":"fake"},"ready":true,"version":1}`,
		`{"seq":1,"result":"{\"a\":1}"}`,
		`"message":"panic while answering the panic case: boom"`,
		`{"seq":3,"skipped":true,"message":"not skip"}`,
		`{"seq":4,"errored":true,"context":{"message":"bad error"}}`,
		`{"seq":null,"errored":true,"context":{"message":"run request without a positive integer seq (0)"}}`,
		`"message":"request line is not a JSON object:`,
		`{"message":"this adapter speaks protocol version 1, not 2","ready":false,"version":1}`,
		`{"seq":null,"errored":true,"context":{"message":"unknown cmd \"dance\" (want start, run, batch or stop)"}}`,
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

func TestABatchIsAnsweredInOneLineInOrder(t *testing.T) {
	in := strings.Join([]string{
		`{"cmd":"batch","runs":[{"cmd":"run","seq":7,"op":"echo","case":{"a":1}},` +
			`{"cmd":"run","seq":8,"op":"panic","case":{}},{"cmd":"run","seq":9,"op":"skip","case":{}},` +
			`{"cmd":"run","seq":0,"op":"echo","case":{}},{"cmd":"stop"}]}`,
		`{"cmd":"batch","runs":[]}`,
		`{"cmd":"run","seq":10,"op":"echo","case":2}`,
	}, "\n")
	var out strings.Builder
	if err := ServeAdapter(fake{}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one a request:\n%s", len(lines), out.String())
	}
	var batch struct{ Answers []map[string]any }
	if err := json.Unmarshal([]byte(lines[0]), &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch.Answers) != 5 {
		t.Fatalf("%d answers in the batch, want 5: %s", len(batch.Answers), lines[0])
	}
	seqs := []any{7.0, 8.0, 9.0, nil, nil}
	kinds := []string{"result", "errored", "skipped", "errored", "errored"}
	for i, answer := range batch.Answers {
		if answer["seq"] != seqs[i] || answer[kinds[i]] == nil {
			t.Errorf("answer %d = %v, want seq %v and %s", i, answer, seqs[i], kinds[i])
		}
	}
	if !strings.Contains(lines[1], "a batch holds 1 to 64 runs, not 0") {
		t.Errorf("empty batch answered %s", lines[1])
	}
	if lines[2] != `{"seq":10,"result":"2"}` {
		t.Errorf("the run after the batches answered %s", lines[2])
	}
}
