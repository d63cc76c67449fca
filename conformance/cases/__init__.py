"""What an implementation is judged on: the spec's vectors and their instances per release
(``vectors``), when two merge answers agree (``agreement``), the spec's rules as data
(``rules``), expectations manifests (``expectations``) and interchangeable devices
(``device_equivalence``)."""
