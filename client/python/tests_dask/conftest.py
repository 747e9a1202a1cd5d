"""The sortd processes of the Dask tests: the Python client tests' Server (../tests/conftest.py),
loaded under a name of its own so that this directory's conftest does not shadow it."""
from __future__ import annotations

import importlib.util
import pathlib

_spec = importlib.util.spec_from_file_location(
    "sortd_test_servers", pathlib.Path(__file__).parent.parent / "tests" / "conftest.py")
servers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(servers)  # type: ignore[union-attr]
