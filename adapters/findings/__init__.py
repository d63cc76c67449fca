"""numaspec's findings about upstream code, one folder each (data only: read by
numaspec.conformance.cases.upstream_findings; adapters/findings/README.md)."""
