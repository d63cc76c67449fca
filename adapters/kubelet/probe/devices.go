package probe

// Kubelet's real Device Manager in the node probe (spec/node/devices.md DEV-1..7,
// DEV-10, DEV-11): the machine's devices are registered by in-process fake
// device plugins, one per resource, that answer Allocate with an empty
// response, never offer PreStartContainer, and offer GetPreferredAllocation
// only for the resources machine.devicePlugins names (answering as DEV-10's
// plugin does). The manager is built with its socket and checkpoint directory
// inside the node's state directory (never /var/lib/kubelet), registered as
// the Topology Manager's first hint provider (NewContainerManager does so
// before the CPU and Memory Managers: NODE-5), started after them with the
// probe's active pods, and then told about each plugin and its devices as a
// plugin's registration and first ListAndWatch answer would.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"unsafe"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	plugin "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"numaspec.invalid/kubelet-oracle/common"
)

// DeviceKubelet is the part of Kubelet that drives the Device Manager: each
// method is one devicemanager call whose signature differs between releases
// (1.29-1.34: no logger; 1.35-1.36: a logger or context on the constructor,
// Start, Stop and the plugin callbacks; 1.37: also on UpdateAllocatedDevices
// and GetAllocatableDevices). The shims implement it in v1_XX/release/devices.go.
type DeviceKubelet interface {
	// NewDeviceManager is devicemanager's unexported newManagerImpl (reached
	// with go:linkname, as kubelet's own unit tests call it): the manager
	// for m's NUMA nodes whose registration socket is socketPath; its
	// checkpoint goes into the socket's directory.
	NewDeviceManager(m *common.Machine, socketPath string, tm topologymanager.Manager) (*devicemanager.ManagerImpl, error)
	// StartDeviceManager is dm.Start with SourcesReady, an empty container
	// map and no running containers.
	StartDeviceManager(dm *devicemanager.ManagerImpl, active devicemanager.ActivePodsFunc) error
	// StopDeviceManager is dm.Stop (closes the registration socket).
	StopDeviceManager(dm *devicemanager.ManagerImpl) error
	// PluginConnected is dm.PluginConnected: a plugin registered resource.
	PluginConnected(dm *devicemanager.ManagerImpl, resource string, p plugin.DevicePlugin) error
	// PluginListAndWatchReceiver is dm.PluginListAndWatchReceiver: the
	// plugin's device list arrived.
	PluginListAndWatchReceiver(dm *devicemanager.ManagerImpl, resource string, resp *pluginapi.ListAndWatchResponse)
	// UpdateAllocatedDevices is dm.UpdateAllocatedDevices.
	UpdateAllocatedDevices(dm *devicemanager.ManagerImpl)
	// HealthyDevices is dm.GetAllocatableDevices as resource -> device ids
	// (use DeviceIDs).
	HealthyDevices(dm *devicemanager.ManagerImpl) map[string][]string
	// DeviceCapacity is dm.GetCapacity: the plugins' resources as the
	// node's status publishes them (capacity, allocatable).
	DeviceCapacity(dm *devicemanager.ManagerImpl) (v1.ResourceList, v1.ResourceList)
}

// fitNode is the node object the fit handler reads now: nodeObject's, with
// the Device Manager's resources as the status setter adds them (capacity
// and allocatable from GetCapacity).
func (p *probe) fitNode() *v1.Node {
	node := p.node.DeepCopy()
	if p.devs == nil || p.devs.dm == nil {
		return node
	}
	capacity, allocatable := p.k.DeviceCapacity(p.devs.dm)
	for name, q := range capacity {
		node.Status.Capacity[name] = q
	}
	for name, q := range allocatable {
		node.Status.Allocatable[name] = q
	}
	return node
}

// pluginResources is the update the fit handler runs first: the Device
// Manager's UpdatePluginResources (same signature in every release), or
// nothing without one.
func (p *probe) pluginResources(node *schedulerframework.NodeInfo, attrs *lifecycle.PodAdmitAttributes) error {
	if p.devs == nil || p.devs.dm == nil {
		return nil
	}
	return p.devs.dm.UpdatePluginResources(node, attrs)
}

// DeviceIDs turns a devicemanager.ResourceDeviceInstances (resource -> id ->
// device; the device is a value or a pointer depending on the release) into
// resource -> sorted ids, leaving out resources without a device.
func DeviceIDs[M ~map[string]D, D ~map[string]V, V any](r M) map[string][]string {
	out := map[string][]string{}
	for res, devs := range r {
		if len(devs) == 0 {
			continue
		}
		ids := make([]string, 0, len(devs))
		for id := range devs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		out[res] = ids
	}
	return out
}

// ---- the machine's devices ----

// deviceSpec is one device of the create request (NWIRE-1).
type deviceSpec struct {
	ID      *string         `json:"id"`
	NUMA    json.RawMessage `json:"numa"`    // absent: no topology; null is refused
	Healthy json.RawMessage `json:"healthy"` // absent: healthy; null is refused
}

// parseDevices decodes and checks machine.devices as numaspec does
// (reference/protocols/node_protocol.py decode_machine, reference/node/machine.py): a resource
// is an extended resource name (the registration server's check), ids are
// unique within a resource, a device's NUMA nodes are the machine's.
func parseDevices(raw map[string]json.RawMessage, m *common.Machine) (map[string][]*pluginapi.Device, *common.NodeError) {
	nodes := map[int]bool{}
	for _, n := range m.Topology {
		nodes[n.ID] = true
	}
	out := map[string][]*pluginapi.Device{}
	for _, res := range sortedKeys(raw) {
		where := "machine.devices." + res
		if !v1helper.IsExtendedResourceName(v1.ResourceName(res)) {
			return nil, common.ErrNS("invalid-field", "invalid", "create", "%s: %q is not an extended resource name (domain/name outside kubernetes.io): kubelet accepts no device plugin for it", where, res)
		}
		var specs []deviceSpec
		if err := common.DecodeStrict(raw[res], &specs); err != nil {
			return nil, common.ErrNS("invalid-field", "invalid", "create", "%s: %v", where, err)
		}
		seen := map[string]bool{}
		devs := make([]*pluginapi.Device, 0, len(specs))
		for i, s := range specs {
			if s.ID == nil {
				return nil, common.ErrNS("invalid-field", "invalid", "create", "%s[%d].id is missing", where, i)
			}
			if seen[*s.ID] {
				return nil, common.ErrNS("invalid-field", "invalid", "create", "%s: device id %q is listed twice", where, *s.ID)
			}
			seen[*s.ID] = true
			healthy, numa := true, []int{}
			if s.Healthy != nil && (string(s.Healthy) == "null" || json.Unmarshal(s.Healthy, &healthy) != nil) {
				return nil, common.ErrNS("invalid-field", "invalid", "create", "%s[%d].healthy: not a boolean", where, i)
			}
			if s.NUMA != nil && (string(s.NUMA) == "null" || json.Unmarshal(s.NUMA, &numa) != nil) {
				return nil, common.ErrNS("invalid-field", "invalid", "create", "%s[%d].numa: not a list of NUMA node ids", where, i)
			}
			d := &pluginapi.Device{ID: *s.ID, Health: pluginapi.Healthy}
			if !healthy {
				d.Health = pluginapi.Unhealthy
			}
			if len(numa) > 0 {
				d.Topology = &pluginapi.TopologyInfo{}
				for _, n := range numa {
					if !nodes[n] {
						return nil, common.ErrNS("invalid-numa-id", "invalid", "create", "%s[%d].numa: device %q reports NUMA node %d, which the machine does not have", where, i, *s.ID, n)
					}
					d.Topology.Nodes = append(d.Topology.Nodes, &pluginapi.NUMANode{ID: int64(n)})
				}
			}
			devs = append(devs, d)
		}
		out[res] = devs
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- the fake device plugin ----

// pluginSpec is one resource's entry of machine.devicePlugins (DEV-10).
type pluginSpec struct {
	Preferred   *[]string `json:"preferredAllocation"`
	OfferedOnly *bool     `json:"offeredOnly"`
}

// parsePlugins decodes machine.devicePlugins as numaspec does: each names a
// resource with devices, lists no id twice.
func parsePlugins(raw map[string]json.RawMessage, devs map[string][]*pluginapi.Device) (map[string]*pluginSpec, *common.NodeError) {
	out := map[string]*pluginSpec{}
	for _, res := range sortedKeys(raw) {
		where := "machine.devicePlugins." + res
		var spec pluginSpec
		if err := common.DecodeStrict(raw[res], &spec); err != nil || spec.Preferred == nil {
			return nil, common.ErrNS("invalid-field", "invalid", "create", "%s: want {\"preferredAllocation\": [ids], \"offeredOnly\"?: bool} (%v)", where, err)
		}
		if _, ok := devs[res]; !ok {
			return nil, common.ErrNS("invalid-field", "invalid", "create", "%s: the machine lists no devices of this resource", where)
		}
		seen := map[string]bool{}
		for _, id := range *spec.Preferred {
			if seen[id] {
				return nil, common.ErrNS("invalid-field", "invalid", "create", "%s.preferredAllocation: device id %q is listed twice", where, id)
			}
			seen[id] = true
		}
		out[res] = &spec
	}
	return out, nil
}

// fakePlugin is a device plugin reached in process (plugin.DevicePlugin): no
// gRPC connection, no socket of its own (SocketPath names one for the
// manager's bookkeeping only).
type fakePlugin struct {
	resource, socket string
	pref             *pluginSpec // nil: no GetPreferredAllocation
}

func (p fakePlugin) API() pluginapi.DevicePluginClient { return pluginClient{pref: p.pref} }
func (p fakePlugin) Resource() string                  { return p.resource }
func (p fakePlugin) SocketPath() string                { return p.socket }

// pluginClient answers the Device Manager's calls: GetPreferredAllocationAvailable
// only with a preference (PreStartContainer is never called), and an Allocate
// that grants every request with an empty container response.
type pluginClient struct{ pref *pluginSpec }

var errNotServed = errors.New("the probe's in-process device plugin does not serve this call")

func (c pluginClient) GetDevicePluginOptions(context.Context, *pluginapi.Empty, ...grpc.CallOption) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: c.pref != nil}, nil
}

func (pluginClient) ListAndWatch(context.Context, *pluginapi.Empty, ...grpc.CallOption) (pluginapi.DevicePlugin_ListAndWatchClient, error) {
	return nil, errNotServed
}

// GetPreferredAllocation answers as DEV-10's plugin: the must-include ids
// (sorted), then the preference's ids in order (those offered only, unless
// offeredOnly is false), until the allocation size.
func (c pluginClient) GetPreferredAllocation(_ context.Context, in *pluginapi.PreferredAllocationRequest, _ ...grpc.CallOption) (*pluginapi.PreferredAllocationResponse, error) {
	if c.pref == nil {
		return nil, errNotServed
	}
	offeredOnly := c.pref.OfferedOnly == nil || *c.pref.OfferedOnly
	out := &pluginapi.PreferredAllocationResponse{}
	for _, req := range in.ContainerRequests {
		offered, must := map[string]bool{}, map[string]bool{}
		for _, id := range req.AvailableDeviceIDs {
			offered[id] = true
		}
		ids := append([]string{}, req.MustIncludeDeviceIDs...)
		sort.Strings(ids)
		for _, id := range ids {
			must[id] = true
		}
		for _, id := range *c.pref.Preferred {
			if len(ids) >= int(req.AllocationSize) {
				break
			}
			if must[id] || (offeredOnly && !offered[id]) {
				continue
			}
			ids = append(ids, id)
		}
		out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return out, nil
}

func (pluginClient) Allocate(_ context.Context, in *pluginapi.AllocateRequest, _ ...grpc.CallOption) (*pluginapi.AllocateResponse, error) {
	out := &pluginapi.AllocateResponse{}
	for range in.ContainerRequests {
		out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerAllocateResponse{})
	}
	return out, nil
}

func (pluginClient) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest, ...grpc.CallOption) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// ---- the manager in the node's lifecycle ----

// devices is the probe's Device Manager and the resources its plugins serve.
type devices struct {
	dm        *devicemanager.ManagerImpl
	resources []string                       // sorted
	pending   map[string][]*pluginapi.Device // registered by startDevices
	started   bool
	dirFile   *os.File // the open socket directory, when the socket path goes through it

	// For restarts (DEV-11): the machine's devices and plugins, the manager's
	// socket and Topology Manager, the plugins not registered since the last
	// restart, and how many plugins have registered (their socket names).
	machine      *common.Machine
	all          map[string][]*pluginapi.Device
	prefs        map[string]*pluginSpec
	sock         string
	tm           topologymanager.Manager
	unregistered map[string]bool
	plugins      int
}

// newDevices builds the Device Manager (kubelet does it before the CPU
// Manager) with its socket directory inside dir, and registers it with tm.
func (p *probe) newDevices(m *common.Machine, raw, rawPlugins map[string]json.RawMessage, dir string, tm topologymanager.Manager) *common.NodeResponse {
	devs, e := parseDevices(raw, m)
	if e != nil {
		r := common.ErrResponse(e)
		return &r
	}
	prefs, e := parsePlugins(rawPlugins, devs)
	if e != nil {
		r := common.ErrResponse(e)
		return &r
	}
	p.devs = &devices{resources: sortedKeys(devs), pending: devs, machine: m, all: devs, prefs: prefs, tm: tm, unregistered: map[string]bool{}}
	sock, err := p.devs.socketPath(dir)
	if err != nil {
		r := common.ErrResponse(common.Errf("probe", "tempdir", "%v", err))
		return &r
	}
	p.devs.sock = sock
	dm, err := p.k.NewDeviceManager(m, sock, tm)
	if err != nil {
		r := startupErr("devicemanager.NewManagerImpl", err)
		return &r
	}
	p.k.AddHintProvider(tm, dm)
	p.devs.dm = dm
	return nil
}

// socketPath makes the manager's directory, dir/device-plugins, and names
// its registration socket there. A unix socket's path holds at most 107
// bytes; under a long TMPDIR the directory is named through an open
// descriptor of it (/proc/self/fd/N), which the kernel resolves to the same
// directory, so the socket and the checkpoint still live in dir.
func (d *devices) socketPath(dir string) (string, error) {
	pluginDir := filepath.Join(dir, "device-plugins")
	if err := os.MkdirAll(pluginDir, 0o750); err != nil {
		return "", err
	}
	if sock := filepath.Join(pluginDir, "kubelet.sock"); len(sock) < 108 {
		return sock, nil
	}
	f, err := os.Open(pluginDir)
	if err != nil {
		return "", err
	}
	d.dirFile = f
	return fmt.Sprintf("/proc/self/fd/%d/kubelet.sock", f.Fd()), nil
}

// startDevices is ContainerManager.Start's deviceManager.Start (after the CPU
// and Memory Managers'), then each plugin's registration and device list, in
// resource order.
func (p *probe) startDevices() *common.NodeResponse {
	d := p.devs
	if err := p.k.StartDeviceManager(d.dm, p.activePods); err != nil {
		r := startupErr("devicemanager.Start", err)
		return &r
	}
	d.started = true
	for _, res := range d.resources {
		if err := p.registerPlugin(res); err != nil {
			r := startupErr("devicemanager.PluginConnected", err)
			return &r
		}
	}
	d.pending = nil
	return nil
}

// registerPlugin is a plugin's registration and its first device list (the
// machine's devices of res).
func (p *probe) registerPlugin(res string) error {
	d := p.devs
	// The name only identifies the plugin to the manager: nothing listens there.
	fp := fakePlugin{resource: res, socket: filepath.Join(p.dir, "device-plugins", fmt.Sprintf("numaspec-plugin-%d.sock", d.plugins)), pref: d.prefs[res]}
	d.plugins++
	if err := p.k.PluginConnected(d.dm, res, fp); err != nil {
		return err
	}
	p.k.PluginListAndWatchReceiver(d.dm, res, &pluginapi.ListAndWatchResponse{Devices: d.all[res]})
	delete(d.unregistered, res)
	return nil
}

// Restart is kubelet's restart as the Device Manager sees it (DEV-11): the
// manager stops, a new one is built over the same socket and checkpoint
// directory and started (it reads the checkpoint: the pods' devices, and every
// resource registered with no device), and every plugin but those of
// unregistered registers again. The new manager takes the old one's place
// (its fields are copied over the old value), so the Topology Manager, which
// holds the old pointer as a hint provider, asks the new one. The CPU and
// Memory Managers keep their state, as their state files would. Before any
// request, the manager frees the devices of pods no longer active (kubelet's
// next hint request would: a removed pod's devices may still be in the
// checkpoint).
func (p *probe) Restart(unregistered []string) common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	d := p.devs
	known := map[string]bool{}
	for _, res := range d.resources {
		known[res] = true
	}
	seen := map[string]bool{}
	for i, res := range unregistered {
		if !known[res] || seen[res] {
			return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "restart", "unregistered[%d]: %q is not a device resource of the node, or is listed twice", i, res))
		}
		seen[res] = true
	}
	if err := p.k.StopDeviceManager(d.dm); err != nil {
		return startupErr("devicemanager.Stop", err)
	}
	dm, err := p.k.NewDeviceManager(d.machine, d.sock, d.tm)
	if err != nil {
		return startupErr("devicemanager.NewManagerImpl", err)
	}
	if err := p.k.StartDeviceManager(dm, p.activePods); err != nil {
		return startupErr("devicemanager.Start", err)
	}
	reflect.ValueOf(d.dm).Elem().Set(reflect.ValueOf(dm).Elem())
	d.unregistered = seen
	for _, res := range d.resources {
		if seen[res] {
			continue
		}
		if err := p.registerPlugin(res); err != nil {
			return startupErr("devicemanager.PluginConnected", err)
		}
	}
	p.k.UpdateAllocatedDevices(d.dm)
	return common.OKResponse()
}

// Register is the registration of a plugin that stayed away at the last
// restart (DEV-11).
func (p *probe) Register(res string) common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	if !p.devs.unregistered[res] {
		return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "register", "resource: %q is not a device resource whose plugin is away", res))
	}
	if err := p.registerPlugin(res); err != nil {
		return startupErr("devicemanager.PluginConnected", err)
	}
	return common.OKResponse()
}

// stopDevices closes the manager's registration socket (before the state
// directory goes).
func (p *probe) stopDevices() {
	if p.devs != nil && p.devs.started {
		_ = p.k.StopDeviceManager(p.devs.dm)
	}
	if p.devs != nil && p.devs.dirFile != nil {
		_ = p.devs.dirFile.Close()
	}
	p.devs = nil
}

// containerDevices is a decision's devices of one container
// (dm.GetDevices): resource -> sorted ids, only resources it holds.
func (p *probe) containerDevices(uid, name string) map[string]interface{} {
	out := map[string]interface{}{}
	if p.devs == nil {
		return out
	}
	for res, ids := range DeviceIDs(p.devs.dm.GetDevices(uid, name)) {
		out[res] = ids
	}
	return out
}

// deviceState is NODE-8's devices: every registered resource's allocated and
// healthy device ids, and who holds what (pods on the node with devices).
// The allocated sets are the manager's own bookkeeping (its unexported
// allocatedDevices, read by reflection: no exported call returns it, and
// the union of the pods' devices would hide a device the manager failed to
// free).
func (p *probe) deviceState(uids []string) (map[string]any, error) {
	allocated, healthy, assignments := map[string]any{}, map[string]any{}, map[string]any{}
	out := map[string]any{"allocated": allocated, "healthy": healthy, "assignments": assignments}
	if p.devs == nil {
		return out, nil
	}
	held, err := allocatedDevices(p.devs.dm)
	if err != nil {
		return nil, err
	}
	good := p.k.HealthyDevices(p.devs.dm)
	for _, res := range p.devs.resources {
		allocated[res] = nonNil(held[res])
		healthy[res] = nonNil(good[res])
	}
	for _, uid := range uids {
		pod := p.pods[uid]
		containers := map[string]any{}
		for _, c := range allContainers(pod) {
			if got := DeviceIDs(p.devs.dm.GetDevices(uid, c.Name)); len(got) > 0 {
				containers[c.Name] = got
			}
		}
		if len(containers) > 0 {
			assignments[uid] = containers
		}
	}
	return out, nil
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// allocatedDevices reads the manager's allocatedDevices (resource -> set of
// ids) as resource -> sorted ids.
func allocatedDevices(dm *devicemanager.ManagerImpl) (map[string][]string, error) {
	f := reflect.ValueOf(dm).Elem().FieldByName("allocatedDevices")
	if !f.IsValid() || f.Kind() != reflect.Map || f.Type().Key().Kind() != reflect.String ||
		f.Type().Elem().Kind() != reflect.Map || f.Type().Elem().Key().Kind() != reflect.String {
		return nil, fmt.Errorf("devicemanager.ManagerImpl has no allocatedDevices map[string]set of this shape in this release")
	}
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	out := map[string][]string{}
	iter := f.MapRange()
	for iter.Next() {
		ids := []string{}
		for _, k := range iter.Value().MapKeys() {
			ids = append(ids, k.String())
		}
		sort.Strings(ids)
		out[iter.Key().String()] = ids
	}
	return out, nil
}
