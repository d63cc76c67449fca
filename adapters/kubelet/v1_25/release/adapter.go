package release

import (
	"encoding/json"

	"numaspec.invalid/kubelet-oracle/common"
)

// Adapter is this release's numaspec adapter: merge only (no node probe).
type Adapter struct{}

func (Adapter) Implementation() common.Implementation {
	return common.KubeletImplementation(kubeletVersion, []string{"merge"}, false)
}

func (Adapter) Run(op string, raw json.RawMessage) (any, *common.Skip) {
	var head struct {
		KubeletVersion json.RawMessage `json:"kubelet_version"`
	}
	_ = json.Unmarshal(raw, &head)
	if e := common.CaseVersion(head.KubeletVersion, kubeletVersion); e != nil {
		return common.MergeResult{Error: e}, nil
	}
	c, skip := common.DecodeMergeCase(raw)
	if skip != nil {
		return nil, skip
	}
	return Merge(c), nil
}
