module numaspec.invalid/dra-adapter/v0_38

go 1.27.0

require (
	k8s.io/api v0.38.0-beta.0
	k8s.io/dynamic-resource-allocation v0.38.0-beta.0
	numaspec.invalid/dra-adapter/v1alloc v0.0.0
)

require (
	cel.dev/cel-go v0.33.2 // indirect
	cel.dev/expr v0.25.3 // indirect
	github.com/antlr4-go/antlr/v4 v4.13.1 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/blang/semver/v4 v4.0.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/fxamacker/cbor/v2 v2.9.4 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-openapi/jsonpointer v1.0.2 // indirect
	github.com/go-openapi/jsonreference v1.0.2 // indirect
	github.com/go-openapi/swag/conv v0.29.2 // indirect
	github.com/go-openapi/swag/jsonutils v0.29.2 // indirect
	github.com/go-openapi/swag/pools v0.29.2 // indirect
	github.com/go-openapi/swag/typeutils v0.29.2 // indirect
	github.com/google/gnostic-models v0.7.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pandatix/go-abnf v0.5.5 // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.73.1 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp v0.0.0-20260908205506-85c1c2202aba // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/evanphx/json-patch.v4 v4.13.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	k8s.io/apimachinery v0.38.0-beta.0 // indirect
	k8s.io/apiserver v0.38.0-beta.0 // indirect
	k8s.io/client-go v0.38.0-beta.0 // indirect
	k8s.io/component-base v0.38.0-beta.0 // indirect
	k8s.io/component-helpers v0.38.0-beta.0 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/kube-openapi v0.0.0-20261014044854-ca3452a79603 // indirect
	k8s.io/utils v0.0.0-20260626114624-be93311217bd // indirect
	numaspec.invalid/adapter/protocol v0.0.0 // indirect
	numaspec.invalid/dra-adapter/common v0.0.0 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
	sigs.k8s.io/randfill v1.0.0 // indirect
	sigs.k8s.io/structured-merge-diff/v7 v7.0.1 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

replace (
	numaspec.invalid/adapter/protocol => ../../protocol
	numaspec.invalid/dra-adapter/common => ../common
	numaspec.invalid/dra-adapter/v1alloc => ../v1alloc
)

// Requirements of the v0.38.0-beta.0 module graph the Go module proxy does not
// serve (403 "not available"), replaced by what it serves:
// - sigs.k8s.io/structured-merge-diff/v7 v7.0.1, required by k8s.io/api and
//   k8s.io/apimachinery v0.38.0-beta.0: v7.0.0, which the proxy serves and
//   which builds with them, is linked instead (as the kubelet 1.38 adapter
//   does, ../../kubelet/v1_38/extra.gomod).
replace sigs.k8s.io/structured-merge-diff/v7 v7.0.1 => sigs.k8s.io/structured-merge-diff/v7 v7.0.0

// - k8s.io/ktesting, a staging module from 1.38 pinned to v0.38.0-beta.0,
//   which the proxy does not serve: imported only by the tests of
//   k8s.io/dynamic-resource-allocation/cel (go mod tidy loads them), so the
//   empty stand-in ../../stubs/ktesting; nothing built compiles it.
replace k8s.io/ktesting => ../../stubs/ktesting
