package common

import (
	"flag"
	"io"
	"os"

	"k8s.io/klog/v2"
)

// SilenceKlog keeps kubelet's klog output (e.g. "Creating topology manager")
// off stdout/stderr unless ORACLE_KLOG=1. Every oracle and probe calls it first.
func SilenceKlog() {
	if os.Getenv("ORACLE_KLOG") != "" {
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
