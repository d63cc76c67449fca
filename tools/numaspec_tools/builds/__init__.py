"""The Go builds of the test run: the kubelet adapters, the peers, the DRA allocator."""

__all__ = ["NO_DWARF"]

#: The compiler flag of every Go build of the test run (the build.sh scripts pass it too):
#: no DWARF, which the stripped binaries (``-s -w``) never keep, about 14% less CPU for a
#: first build; one flag everywhere, so that the builds share one cache.
NO_DWARF = "-gcflags=all=-dwarf=false"
