package release

import (
	"os"

	"k8s.io/klog/v2"
)

// With ORACLE_KLOG set, kubelet's contextual logging goes to klog's output too
// (common.SilenceKlog leaves klog alone then).
func init() {
	if os.Getenv("ORACLE_KLOG") != "" {
		logger = klog.Background()
	}
}
