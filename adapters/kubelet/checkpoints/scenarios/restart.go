package scenarios

// The "restart" mode: a fresh Memory Manager of the release (Static policy) is
// started, as a restarting kubelet starts it, on a copy of a directory's
// memory_manager_state, many times over, and the answers are counted. Its
// start-up check ranges over Go maps, whose order changes from one range to
// the next, so one file can be accepted by one start and refused by another
// (finding 59). The Python test (tests/upstream/kubelet/test_kubelet_checkpoints_go.py)
// gives it the files numaspec writes and compares the answers with numaspec's
// restart warning.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

// HugePages is one page size of a NUMA node: its size in KiB and how many pages
// it has.
type HugePages struct {
	PageSizeKiB uint64 `json:"pageSizeKiB"`
	Pages       uint64 `json:"pages"`
}

// RestartNode is a NUMA node of the machine the manager is started on.
type RestartNode struct {
	// Memory is the node's memory in bytes, hugepages included (cadvisor's Node.Memory).
	Memory    uint64      `json:"memory"`
	HugePages []HugePages `json:"hugepages"`
}

// RestartMachine is restart.json: the machine and the reservations kubelet gives
// its Memory Manager.
type RestartMachine struct {
	Nodes           []RestartNode                     `json:"nodes"`
	NodeAllocatable v1.ResourceList                   `json:"nodeAllocatable"`
	ReservedMemory  []kubeletconfig.MemoryReservation `json:"reservedMemory"`
}

// RestartMain is `restart DIR N`: N starts on copies of DIR/memory_manager_state
// with DIR/restart.json's machine, printing {"starts": N, "answers": {answer: count}}
// ("started", or Start's error).
func RestartMain(r Release, dir string, times string) {
	n, err := strconv.Atoi(times)
	Must(err)
	raw, err := os.ReadFile(filepath.Join(dir, "restart.json"))
	Must(err)
	var machine RestartMachine
	Must(json.Unmarshal(raw, &machine))
	state, err := os.ReadFile(filepath.Join(dir, "memory_manager_state"))
	Must(err)
	nodes := make([]uint64, len(machine.Nodes))
	pages := make([][]HugePages, len(machine.Nodes))
	for i, node := range machine.Nodes {
		nodes[i], pages[i] = node.Memory, node.HugePages
	}
	answers := map[string]int{}
	for range n {
		copyDir, err := os.MkdirTemp("", "kubelet-restart-")
		Must(err)
		Must(os.WriteFile(filepath.Join(copyDir, "memory_manager_state"), state, 0o600))
		mm, err := r.NewMemManager(copyDir, nodes, pages, machine.NodeAllocatable,
			machine.ReservedMemory, map[string][]int{})
		answer := "started"
		if err == nil {
			err = mm.Start(func() []*v1.Pod { return nil })
		}
		if err != nil {
			answer = err.Error()
		}
		answers[answer]++
		Must(os.RemoveAll(copyDir))
	}
	out, err := json.Marshal(map[string]any{"starts": n, "answers": answers})
	Must(err)
	fmt.Println(string(out))
}
