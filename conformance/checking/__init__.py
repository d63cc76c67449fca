"""Exhaustive bounded exploration of the node (spec/conformance/checking.md): ``bounds`` (the
initial nodes and the pod alphabet) and ``explorer`` (breadth-first, distinct states, the
invariants after every step, the shortest counterexample)."""
