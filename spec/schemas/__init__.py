"""JSON Schemas of numaspec's case formats (JSON data; this file only makes them installable)."""
