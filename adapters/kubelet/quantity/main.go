// Command quantity reads quantity strings, one JSON string per line on stdin, parses each
// with k8s.io/apimachinery's resource.ParseQuantity (the version go.mod pins) and writes the
// table numaspec's tests/node/test_quantity_table.py checks the reference against (QTY-1): a JSON
// object whose "entries" hold, one per line, either the exact parsed value, the canonical
// String() and the format, or the error text.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
)

type entry struct {
	In     string `json:"in"`
	Value  string `json:"value,omitempty"`
	String string `json:"string,omitempty"`
	Format string `json:"format,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintln(out, `{"apimachinery": "v0.30.14", "function": "resource.ParseQuantity", "entries": [`)
	first := true
	for scanner.Scan() {
		var text string
		if err := json.Unmarshal(scanner.Bytes(), &text); err != nil {
			fmt.Fprintln(os.Stderr, "not a JSON string:", scanner.Text())
			os.Exit(2)
		}
		e := entry{In: text}
		q, err := resource.ParseQuantity(text)
		if err != nil {
			e.Error = err.Error()
		} else {
			e.Value = q.AsDec().String()
			e.String = q.String()
			e.Format = string(q.Format)
		}
		line, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		if !first {
			fmt.Fprintln(out, ",")
		}
		first = false
		out.Write(line)
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Fprintln(out, "\n]}")
}
