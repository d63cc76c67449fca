//go:build kubelet1.36

package resize

// 1.36 on: the API server's PodResizeValidator admission plugin
// (plugin/pkg/admission/podresize, on by default) sees a resize before
// kubelet does (RESIZE-2). The probe runs the release's own plugin over a
// node lister that holds the probe's node.

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	admissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/plugin/pkg/admission/podresize"
)

// AdmitResize runs PodResizeValidator on the resize of old to desired on
// node: the refusal's text ("" when it lets the resize through), or an
// error when the plugin could not be run.
func (Kubelet) AdmitResize(old, desired *v1.Pod, node *v1.Node) (string, error) {
	plugin, err := podresize.NewPlugin()
	if err != nil {
		return "", err
	}
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(node.DeepCopy()), 0)
	plugin.SetExternalKubeInformerFactory(factory)
	// The API server's plugin initializer hands the feature gates to a
	// plugin that wants them: 1.36-1.37's does (InPlacePodVerticalScaling),
	// 1.38's no longer (the gate is gone).
	if wants, ok := any(plugin).(admissioninitializer.WantsFeatures); ok {
		wants.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	}
	if err := plugin.ValidateInitialization(); err != nil {
		return "", err
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	var before, after core.Pod
	if err := corev1.Convert_v1_Pod_To_core_Pod(old, &before, nil); err != nil {
		return "", err
	}
	if err := corev1.Convert_v1_Pod_To_core_Pod(desired, &after, nil); err != nil {
		return "", err
	}
	// The pod is bound to the node; the resize changed its spec, so the
	// registry raised its generation.
	before.Spec.NodeName, after.Spec.NodeName = node.Name, node.Name
	after.Generation = before.Generation + 1
	attrs := admission.NewAttributesRecord(&after, &before, core.Kind("Pod").WithVersion(""),
		after.Namespace, after.Name, core.Resource("pods").WithVersion(""), "resize",
		admission.Update, &metav1.UpdateOptions{}, false, nil)
	err = plugin.Validate(context.Background(), attrs, nil)
	if err == nil {
		return "", nil
	}
	var status *apierrors.StatusError
	if errors.As(err, &status) && apierrors.IsForbidden(err) {
		return status.Error(), nil
	}
	return "", fmt.Errorf("PodResizeValidator: %w", err)
}
