//go:build kubelet1.34

package release

// 1.34 on: the config file loader's Load takes a context.

import (
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
)

func load(loader configfiles.Loader) (*kubeletconfig.KubeletConfiguration, error) {
	return loader.Load(Context())
}
