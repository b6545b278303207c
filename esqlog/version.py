"""esqlog's version, in one place: the package metadata (pyproject's dynamic version) reads it."""

__version__ = "0.1.0"
