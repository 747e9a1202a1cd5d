"""Channels to sortd: plaintext, TLS or mutual TLS (as sortctl --tls_*), and whether the target is
on this host (what the server itself requires for shared memory: server/tls_options.cc)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class TLS:
    """TLS options, as sortctl's --tls_* flags.

    ca_file: PEM CA bundle the server's certificate must chain to (sortd --tls_cert_file).
    cert_file, key_file: PEM client certificate and its unencrypted key, for a server that
        requires one (sortd --tls_client_ca_file); both or neither.
    server_name: the name to check the server's certificate against instead of the target's host
        (e.g. "localhost" when dialing 127.0.0.1 with a certificate issued to localhost).
    """

    ca_file: str
    cert_file: Optional[str] = None
    key_file: Optional[str] = None
    server_name: Optional[str] = None


def _read_pem(what: str, path: str, marker: bytes) -> bytes:
    try:
        with open(path, "rb") as f:
            pem = f.read()
    except OSError as e:
        raise ValueError(f"tls.{what}: cannot read '{path}': {e.strerror}") from e
    # gRPC does not say which file was wrong; a failed handshake later would not either.
    if marker not in pem:
        raise ValueError(f"tls.{what}: '{path}' holds no PEM block with '{marker.decode()}'")
    return pem


def channel_args(tls: Optional[TLS]) -> tuple[Any, list[tuple[str, Any]]]:
    """gRPC channel credentials (None for plaintext) and options for `tls`."""
    import grpc

    # Responses are as large as the server allows requests; the server, not the client, decides
    # what is too large.
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", -1),
        ("grpc.max_send_message_length", -1),
    ]
    if tls is None:
        return None, options
    if not isinstance(tls, TLS):
        raise TypeError(f"tls: {type(tls).__name__}; give sortd.TLS(ca_file=...) or None")
    if not tls.ca_file:
        raise ValueError("tls.ca_file: empty; give the CA that issued the server's certificate")
    if bool(tls.cert_file) != bool(tls.key_file):
        raise ValueError("tls.cert_file and tls.key_file: give both (the client certificate and "
                         "its key) or neither")
    roots = _read_pem("ca_file", tls.ca_file, b"-----BEGIN CERTIFICATE-----")
    chain = key = None
    if tls.cert_file and tls.key_file:
        chain = _read_pem("cert_file", tls.cert_file, b"-----BEGIN CERTIFICATE-----")
        key = _read_pem("key_file", tls.key_file, b"PRIVATE KEY-----")
    if tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return grpc.ssl_channel_credentials(roots, key, chain), options


def is_local(target: str) -> bool:
    """Whether `target` is a Unix socket or a loopback address: where sortd serves shared memory."""
    if target.startswith("unix:") or target.startswith("unix-abstract:"):
        return True
    host = target
    for prefix in ("dns:///", "ipv4:", "ipv6:"):
        if host.startswith(prefix):
            host = host[len(prefix):]
    if host.startswith("["):
        host = host[1:host.find("]")] if "]" in host else ""
    elif ":" in host:
        host = host[:host.rfind(":")]
    return host == "localhost" or host == "::1" or host.startswith("127.")
