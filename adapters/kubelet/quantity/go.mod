module numaspec.invalid/quantity-table

go 1.26

require k8s.io/apimachinery v0.30.14

require (
	github.com/gogo/protobuf v1.3.2 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
)
