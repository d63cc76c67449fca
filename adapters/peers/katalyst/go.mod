module numaspec.invalid/peers/katalyst

go 1.26

require (
	github.com/google/cadvisor v0.44.2
	github.com/kubewharf/katalyst-core v0.5.0
	numaspec.invalid/adapter/protocol v0.0.0 // indirect
	numaspec.invalid/kubelet-oracle/common v0.0.0
	numaspec.invalid/peers/peer v0.0.0
)

require (
	github.com/go-logr/logr v1.2.3 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	golang.org/x/net v0.9.0 // indirect
	golang.org/x/text v0.9.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	k8s.io/api v0.26.1 // indirect
	k8s.io/apimachinery v0.26.1 // indirect
	k8s.io/klog/v2 v2.80.1 // indirect
	k8s.io/utils v0.0.0-20221108210102-8e77b1f39fe2 // indirect
	sigs.k8s.io/json v0.0.0-20220713155537-f223a00ba0e2 // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.2.3 // indirect
)

// numaspec glue: the shared adapter code of this repository.
replace (
	numaspec.invalid/adapter/protocol => ../../protocol
	numaspec.invalid/kubelet-oracle/common => ../../kubelet/common
	numaspec.invalid/peers/peer => ../peer
)

// katalyst-core v0.5.0's own replace block, copied whole: a dependency's replace
// directives do not apply to the module that requires it.
replace (
	k8s.io/api => k8s.io/api v0.24.6
	k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.24.6
	k8s.io/apimachinery => k8s.io/apimachinery v0.24.6
	k8s.io/apiserver => k8s.io/apiserver v0.24.6
	k8s.io/cli-runtime => k8s.io/cli-runtime v0.24.6
	k8s.io/client-go => k8s.io/client-go v0.24.6
	k8s.io/cloud-provider => k8s.io/cloud-provider v0.24.6
	k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.24.6
	k8s.io/code-generator => k8s.io/code-generator v0.24.6
	k8s.io/component-base => k8s.io/component-base v0.24.6
	k8s.io/component-helpers => k8s.io/component-helpers v0.24.6
	k8s.io/controller-manager => k8s.io/controller-manager v0.24.6
	k8s.io/cri-api => k8s.io/cri-api v0.24.6
	k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.24.6
	k8s.io/klog => k8s.io/klog v1.0.0
	k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.24.6
	k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.24.6
	k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20220328201542-3ee0da9b0b42
	k8s.io/kube-proxy => k8s.io/kube-proxy v0.24.6
	k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.24.6
	k8s.io/kubectl => k8s.io/kubectl v0.24.6
	k8s.io/kubelet => github.com/kubewharf/kubelet v1.24.6-kubewharf.8
	k8s.io/kubernetes => k8s.io/kubernetes v1.24.6
	k8s.io/legacy-cloud-providers => k8s.io/legacy-cloud-providers v0.24.6
	k8s.io/metrics => k8s.io/metrics v0.24.6
	k8s.io/mount-utils => k8s.io/mount-utils v0.24.6
	k8s.io/node-api => k8s.io/node-api v0.24.6
	k8s.io/pod-security-admission => k8s.io/pod-security-admission v0.22.8
	k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.24.6
	k8s.io/sample-cli-plugin => k8s.io/sample-cli-plugin v0.24.6
	k8s.io/sample-controller => k8s.io/sample-controller v0.24.6
	sigs.k8s.io/json => sigs.k8s.io/json v0.0.0-20211020170558-c049b76a60c6
)
