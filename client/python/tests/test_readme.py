"""The README's Python section, run as written against a started sortd."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "..", "..", "README.md")


def _section() -> str:
    with open(README) as f:
        text = f.read()
    m = re.search(r"^## Python client.*?(?=^## )", text, re.S | re.M)
    assert m, "README has no '## Python client' section"
    return m.group(0)


def _run(code: str, server, extra_env: dict) -> subprocess.CompletedProcess:
    env = dict(os.environ, SORTD_TARGET=server.target, PYTHONPATH=os.pathsep.join(sys.path),
               **extra_env)
    return subprocess.run(code, shell=True, env=env, capture_output=True, text=True, timeout=60)


def test_python_blocks(cpu_server):
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    assert blocks
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block], capture_output=True, text=True, timeout=60,
            env=dict(os.environ, SORTD_TARGET=cpu_server.target,
                     PYTHONPATH=os.pathsep.join(sys.path)))
        assert done.returncode == 0, done.stderr
        assert "[-1.  -0.   0.   2.   3.5  nan]" in done.stdout
        assert "StatusCode.INVALID_ARGUMENT" in done.stdout and "--transposition_cap" in done.stdout


def test_one_liner(cpu_server):
    line = re.search(r"^PYTHONPATH=build/python (python3 -c .*)$", _section(), re.M)
    assert line
    command = line.group(1).replace("localhost:50051", cpu_server.target)
    command = command.replace("python3", sys.executable, 1)
    done = _run(command, cpu_server, {})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1 2 3]"
