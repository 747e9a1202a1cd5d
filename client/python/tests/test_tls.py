"""TLS and mutual TLS round trips, certificates made with openssl as tests/e2e/sortd_tls_test.sh."""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import conftest
import sortd


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("certs"))
    p = lambda name: os.path.join(d, name)  # noqa: E731
    ext = p("ext.cnf")
    with open(ext, "w") as f:
        f.write("[server]\nsubjectAltName = DNS:localhost,IP:127.0.0.1\n"
                "extendedKeyUsage = serverAuth\n[client]\nextendedKeyUsage = clientAuth\n")
    for name in ("ca", "server", "client"):
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", p(f"{name}.key"))
    _openssl("req", "-x509", "-new", "-key", p("ca.key"), "-out", p("ca.crt"), "-days", "2",
             "-subj", "/CN=sortd python test CA")
    for name in ("server", "client"):
        _openssl("req", "-new", "-key", p(f"{name}.key"), "-out", p(f"{name}.csr"),
                 "-subj", f"/CN={name}")
        _openssl("x509", "-req", "-in", p(f"{name}.csr"), "-CA", p("ca.crt"), "-CAkey",
                 p("ca.key"), "-CAcreateserial", "-out", p(f"{name}.crt"), "-days", "2",
                 "-extfile", ext, "-extensions", name)
    return p


def _round_trip(server, tls) -> None:
    a = np.array([3.5, -1.0, 2.0], np.float32)
    with sortd.Client(server.target, tls=tls, timeout=30) as client:
        assert list(client.sort(a)) == [-1.0, 2.0, 3.5]
        assert list(client.argsort(a, descending=True)) == [0, 2, 1]


def test_tls(certs):
    server = conftest.start("--engine=cpu", f"--tls_cert_file={certs('server.crt')}",
                            f"--tls_key_file={certs('server.key')}", tcp=True, shm=False,
                            tls=sortd.TLS(ca_file=certs("ca.crt")))
    try:
        _round_trip(server, sortd.TLS(ca_file=certs("ca.crt")))
        _round_trip(server, sortd.TLS(ca_file=certs("ca.crt"), server_name="localhost"))
        with sortd.Client(server.target, timeout=5) as plaintext:
            with pytest.raises(sortd.SortdError) as e:
                plaintext.sort(np.zeros(2, np.uint32))
            assert e.value.code.name == "UNAVAILABLE"
        bad_name = sortd.TLS(ca_file=certs("ca.crt"), server_name="sortd.test")
        with sortd.Client(server.target, tls=bad_name, timeout=5) as client:
            with pytest.raises(sortd.SortdError, match="UNAVAILABLE"):
                client.sort(np.zeros(2, np.uint32))
    finally:
        server.stop()


def test_mutual_tls(certs):
    mtls = sortd.TLS(ca_file=certs("ca.crt"), cert_file=certs("client.crt"),
                     key_file=certs("client.key"))
    server = conftest.start("--engine=cpu", f"--tls_cert_file={certs('server.crt')}",
                            f"--tls_key_file={certs('server.key')}",
                            f"--tls_client_ca_file={certs('ca.crt')}", tcp=True, tls=mtls)
    try:
        _round_trip(server, mtls)
        # shared memory works over TLS too (loopback)
        with sortd.Client(server.target, tls=mtls, shm_dir=server.shm_dir) as client:
            assert list(client.sort(np.array([2, 1], np.int64))) == [1, 2]
            assert client.last_transport == "shm"
        with sortd.Client(server.target, tls=sortd.TLS(ca_file=certs("ca.crt")),
                          timeout=5) as no_cert:
            with pytest.raises(sortd.SortdError, match="UNAVAILABLE"):
                no_cert.sort(np.zeros(2, np.uint32))
    finally:
        server.stop()


def test_tls_files_checked(certs):
    with pytest.raises(ValueError, match="cannot read"):
        sortd.Client("localhost:1", tls=sortd.TLS(ca_file=certs("nope.crt")))
    with pytest.raises(ValueError, match="holds no PEM block"):
        sortd.Client("localhost:1", tls=sortd.TLS(ca_file=certs("ca.key")))
