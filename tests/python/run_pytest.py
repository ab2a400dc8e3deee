"""Runs the Python package's pytest suite (this directory) for CTest: exit 77, which CTest reports
as skipped, where pytest or NumPy is missing; pytest's own status otherwise."""
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e.name} is not installed for {sys.executable}")
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", sys.argv[1]]))
