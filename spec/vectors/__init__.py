"""Language-neutral conformance vectors (JSON data; this file only makes them installable)."""
