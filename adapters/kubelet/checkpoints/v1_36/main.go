// Command checkpoints writes kubelet's own state files for a few scenarios with
// this release's code; the scenarios are ../scenarios, release.go holds what
// differs between releases. Usage: go run . OUTDIR   (writes OUTDIR/<scenario>/...)
package main

import "numaspec.invalid/kubelet-checkpoints/scenarios"

func main() { scenarios.Main(&release{}) }
