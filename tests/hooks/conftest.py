"""The hook tests' fixtures (see hooks_harness.py)."""

from hooks_harness import user_config

__all__ = ["user_config"]
