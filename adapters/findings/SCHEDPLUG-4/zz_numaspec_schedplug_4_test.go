/*
numaspec SCHEDPLUG-4 (adapters/peers/scheduler-plugins/FINDINGS.md, rule DEV-4 of
spec/node/devices.md): a container that lists a device plugin resource with quantity 0 is
refused when the resource has no healthy device, although it asks for nothing.

What kubelet does: allocateContainerResources hands every device plugin resource a container
lists to devicesToAllocate, whatever the quantity. devicesToAllocate checks that the resource
is registered and has at least one healthy device before it looks at how many are needed, so
a request of 0 for a resource whose devices are all unhealthy fails with "no healthy devices
present; cannot allocate unhealthy devices <resource>", and the pod is rejected at admission
(UnexpectedAdmissionError). The same request is admitted while a healthy device exists, and
the scheduler's NodeResourcesFit and NodeResourceTopologyMatch ignore zero quantities.

What it should do: a request of 0 asks for no device, so there is nothing to check and
nothing to allocate; the container must be admitted with no device, as when the resource
has healthy devices. A positive request must still be refused without a healthy device.
Reported upstream as kubernetes/kubernetes#128854.

Written by numaspec (https://github.com/numaspec/numaspec).
*/

package devicemanager

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecSCHEDPLUG4(t *testing.T) {
	const gpu = "example.com/gpu"

	testCases := []struct {
		description string
		healthy     []string
		unhealthy   []string
		request     int64
		// expErr is a substring of the error Allocate must return; empty when the
		// container must be admitted.
		expErr string
	}{
		{
			description: "0 devices asked, the only device unhealthy: admitted with no device",
			unhealthy:   []string{"gpu0"},
			request:     0,
		},
		{
			description: "0 devices asked, a healthy device present: admitted with no device",
			healthy:     []string{"gpu0"},
			request:     0,
		},
		{
			description: "1 device asked, the only device unhealthy: refused",
			unhealthy:   []string{"gpu0"},
			request:     1,
			expErr:      "no healthy devices present; cannot allocate unhealthy devices " + gpu,
		},
	}

	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			logger, tCtx := ktesting.NewTestContext(t)
			tmpDir, err := os.MkdirTemp("", "checkpoint")
			require.NoError(t, err)
			t.Cleanup(func() {
				require.NoErrorf(t, os.RemoveAll(tmpDir), "unable to remove dir %s", tmpDir)
			})

			podsStub := activePodsStub{activePods: []*v1.Pod{}}
			testManager, err := getTestManager(logger, tmpDir, podsStub.getActivePods, nil)
			require.NoError(t, err)

			// The plugin registered the resource and reported its devices, on NUMA node 0.
			all := append(append([]string{}, tc.healthy...), tc.unhealthy...)
			testManager.healthyDevices[gpu] = sets.New[string](tc.healthy...)
			testManager.unhealthyDevices[gpu] = sets.New[string](tc.unhealthy...)
			testManager.allDevices[gpu] = makeDevice(checkpoint.DevicesPerNUMA{0: all}, true)
			testManager.endpoints[gpu] = endpointInfo{
				e:    &MockEndpoint{allocateFunc: allocateStubFunc()},
				opts: nil,
			}

			pod := makePod(v1.ResourceList{
				v1.ResourceName(gpu): *resource.NewQuantity(tc.request, resource.DecimalSI),
			})
			pod.Spec.Containers[0].Name = "app0"
			podsStub.updateActivePods([]*v1.Pod{pod})
			container := &pod.Spec.Containers[0]

			err = testManager.Allocate(tCtx, pod, container, lifecycle.AddOperation)
			if tc.expErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.expErr) {
					t.Fatalf("Allocate of %d %s: expected error containing %q, got %v", tc.request, gpu, tc.expErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("SCHEDPLUG-4: Allocate refused a container asking for 0 devices of %s (healthy %v, unhealthy %v): %v",
					gpu, tc.healthy, tc.unhealthy, err)
			}

			got := testManager.podDevices.containerDevices(string(pod.UID), container.Name, gpu)
			require.Zerof(t, got.Len(), "a container asking for 0 %s was given devices %v", gpu, sets.List(got))
			require.Zerof(t, testManager.allocatedDevices[gpu].Len(), "devices of %s marked in use: %v", gpu, sets.List(testManager.allocatedDevices[gpu]))
		})
	}
}
