"""Data tables the reference reads (JSON; this file only makes them installable)."""
