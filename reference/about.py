"""numaspec's own version, in one place: ``numaspec.__version__`` re-exports it, the
distribution's metadata reads it (``pyproject.toml``), and the reference's adapter names it in
its ``start`` answer (PROTO-2), without importing the whole package from inside it."""

__all__ = ["__version__"]

__version__ = "0.2.0"
