"""Starts real sortd processes for the tests: the binary is $SORTD_BIN (ctest passes the build's)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from typing import Iterator, Optional

import pytest

import sortd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One sortd process; `target` is a Unix socket unless started with tcp=True."""

    def __init__(self, *flags: str, tcp: bool = False, shm: bool = True) -> None:
        binary = os.environ.get("SORTD_BIN")
        if not binary:
            pytest.fail("set SORTD_BIN to the sortd binary (ctest does)")
        self.dir = tempfile.mkdtemp(prefix="sortd-pytest-", dir="/dev/shm")
        self.shm_dir = os.path.join(self.dir, "regions")
        os.mkdir(self.shm_dir)
        self.target = (f"127.0.0.1:{_free_port()}" if tcp
                       else f"unix:{os.path.join(self.dir, 'sortd.sock')}")
        args = [binary, f"--listen={self.target}", "--metrics_listen=", *flags]
        if shm:
            args += ["--shared_memory", f"--shared_memory_dir={self.shm_dir}"]
        self.log_path = os.path.join(self.dir, "sortd.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self, tls: Optional[sortd.TLS] = None, deadline_s: float = 120.0) -> None:
        # Each try waits (in gRPC, not a sleep) until the server answers or a second passes; the
        # loop stops early when the process has exited (a bad flag), showing its log.
        with sortd.Client(self.target, tls=tls) as client:
            for _ in range(int(deadline_s)):
                if self.process.poll() is not None:
                    pytest.fail(f"sortd exited with {self.process.returncode}:\n{self.log()}")
                try:
                    client.wait_for_server(timeout=1.0)
                    return
                except sortd.SortdError:
                    continue
        pytest.fail(f"sortd did not serve within {deadline_s} s:\n{self.log()}")

    def client(self, **kwargs) -> sortd.Client:
        kwargs.setdefault("shm_dir", self.shm_dir)
        kwargs.setdefault("timeout", 60.0)
        return sortd.Client(self.target, **kwargs)

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()[-4000:]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def start(*flags: str, tcp: bool = False, shm: bool = True,
          tls: Optional[sortd.TLS] = None) -> Server:
    server = Server(*flags, tcp=tcp, shm=shm)
    try:
        server.wait_ready(tls)
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="session")
def cpu_server() -> Iterator[Server]:
    """CPU engine, shared memory on, a small --max_request_bytes so streams are exercised."""
    server = start("--engine=cpu", "--max_request_bytes=262144")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def gpu_server() -> Iterator[Server]:
    """The GPU engine's code paths on stand-in GPUs (no CUDA needed)."""
    server = start("--engine=gpu", "--test_stand_in_gpus=2")
    yield server
    server.stop()
