package common

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// ReleaseMain is the main of a kubelet release's one binary
// (bin/kubelet-adapter-<version>). The first argument picks the protocol:
//
//	(none)  the numaspec adapter protocol (spec/protocols/adapter-protocol.md)
//	node    the node probe's line protocol (newProbe; nil: the release has none)
//	merge   the merge oracle's line format (flags -repeat N)
//
// and -version (after the mode, or alone) prints the pinned k8s.io/kubernetes
// version.
//
// A binary stamped with a version (PinnedVersion) other than the
// k8s.io/kubernetes it links exits at once (status 2).
func ReleaseMain(adapter Release, oracle Evaluator, newProbe func() NodeProbe) {
	checkPinnedVersion()
	args := os.Args[1:]
	mode := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		mode, args = args[0], args[1:]
	}
	switch mode {
	case "":
		fs := flag.NewFlagSet("adapter", flag.ExitOnError)
		version := fs.Bool("version", false, "print the pinned k8s.io/kubernetes version and exit")
		_ = fs.Parse(args)
		if *version {
			fmt.Println(oracle.Version())
			return
		}
		AdapterMain(adapter)
	case "node":
		if newProbe == nil {
			fmt.Fprintf(os.Stderr, "kubelet %s: no node probe for this release\n", oracle.Version())
			os.Exit(2)
		}
		nodeMain(newProbe(), args)
	case "merge":
		oracleMain(oracle, args)
	default:
		if run := registeredMode(mode); run != nil {
			run(args)
			return
		}
		fmt.Fprintf(os.Stderr, "unknown mode %q: give none (adapter protocol), \"node\" or \"merge\"\n", mode)
		os.Exit(2)
	}
}
