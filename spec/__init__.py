"""The specification's chapters (``topology/*.md`` and the other parts' folders: parts.toml),
installed with numaspec so that an installed wheel reads the same rules as a checkout: a vector
inherits its releases from the rules it cites, and ``numaspec rule ID`` prints a rule from here
(data only)."""
