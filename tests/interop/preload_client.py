#!/usr/bin/env python3
"""Python's own socket module as an unmodified client on userstack: run
under LD_PRELOAD=libuserstack-preload.so by preload_interop.py (case
python-client) against kernel servers at KERNEL_ADDR.

    preload_client.py KERNEL_ADDR DIR

Makes a UDP socket first (the stack starts, the tap appears), prints
"stack up", waits for DIR/go (the harness has configured the kernel side),
then runs each check and prints one line "check NAME ok|FAILED: why".
Exit status 0 when every check passed.  Single-threaded: userstack
sockets belong to the thread that started the stack.
"""

import fcntl
import hashlib
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback

K = sys.argv[1]
DIR = sys.argv[2]
ECHO, RST, UDP = 7000, 7001, 7002
MB = 1 << 20


def echo_exact(s, data, chunk=65536):
    """Send data in chunks, reading the echo of each back: bytes equal."""
    back = bytearray()
    for i in range(0, len(data), chunk):
        part = data[i:i + chunk]
        s.sendall(part)
        want = len(back) + len(part)
        while len(back) < want:
            got = s.recv(want - len(back))
            assert got, "the echo server closed early"
            back += got
    assert bytes(back) == data, "echoed bytes differ"


def check_blocking_echo():
    s = socket.create_connection((K, ECHO))  # blocking: connect waits
    assert s.getblocking()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    assert s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) == socket.SOCK_STREAM
    assert s.getpeername() == (K, ECHO), s.getpeername()
    assert s.getsockname()[0] != K
    echo_exact(s, os.urandom(MB))
    s.close()


def check_timeout_echo():
    # a timeout makes Python use a non-blocking socket and poll()
    s = socket.create_connection((K, ECHO), timeout=10)
    assert fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK
    echo_exact(s, os.urandom(MB // 2), chunk=100000)
    s.settimeout(0.3)
    t = time.monotonic()
    try:
        s.recv(10)
        raise AssertionError("recv with nothing to read returned")
    except socket.timeout:
        pass
    assert 0.25 < time.monotonic() - t < 3, "poll's timeout was not kept"
    s.close()


def check_sendfile():
    data = os.urandom(MB + 12345)
    with tempfile.NamedTemporaryFile(dir=DIR) as f:
        f.write(data)
        f.flush()
        s = socket.create_connection((K, ECHO))
        with open(f.name, "rb") as src:
            sent = s.sendfile(src, offset=1000)  # os.sendfile with an offset
            assert sent == len(data) - 1000, sent
            assert src.tell() == len(data)
        back = bytearray()
        while len(back) < sent:
            got = s.recv(MB)
            assert got
            back += got
        assert hashlib.sha256(back).digest() == hashlib.sha256(data[1000:]).digest()
        s.close()


def check_udp():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(5)
    for i in range(5):
        msg = b"ping %d " % i + os.urandom(100 * i)
        u.sendto(msg, (K, UDP))
        got, addr = u.recvfrom(4096)
        assert got == msg and addr == (K, UDP), (got[:20], addr)
    u.close()


def check_select():
    """select.select over a userstack connection and a kernel pipe."""
    s = socket.create_connection((K, ECHO))
    r, w = os.pipe()
    try:
        t = time.monotonic()
        ready = select.select([s, r], [], [], 0.2)
        assert ready == ([], [], []), ready
        assert 0.15 < time.monotonic() - t < 3, "select's timeout was not kept"
        assert select.select([r], [s], [], 5) == ([], [s], []), "connected, not writable"
        s.sendall(b"select me")
        ready = select.select([s, r], [], [], 5)
        assert ready == ([s], [], []), ready
        os.write(w, b"k")
        ready = select.select([r, s], [], [], 5)
        assert sorted(map(id, ready[0])) == sorted(map(id, [r, s])), ready
        assert s.recv(100) == b"select me"
        assert os.read(r, 1) == b"k"
        assert select.select([s, r], [], [], 0) == ([], [], [])
    finally:
        os.close(r)
        os.close(w)
        s.close()


def check_socket_timeouts():
    """SO_RCVTIMEO ends a blocking recv with EAGAIN; SO_SNDTIMEO a blocking
    send once the echo server, whose answers are not read, takes no more."""
    s = socket.create_connection((K, ECHO))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 200000))
    t = time.monotonic()
    try:
        s.recv(10)
        raise AssertionError("recv with nothing to read returned")
    except BlockingIOError:
        pass
    assert time.monotonic() - t >= 0.19, "SO_RCVTIMEO cut the wait short"
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 300000))
    chunk, sent, deadline = os.urandom(65536), 0, time.monotonic() + 60
    while True:
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            break
        assert time.monotonic() < deadline, f"send still taking data after {sent} bytes"
    assert sent > 0
    s.close()


def check_waitall():
    """recv(MSG_WAITALL) on a blocking socket waits for the whole length
    (the echo comes back in pieces), or returns what came at the end of
    the stream."""
    s = socket.create_connection((K, ECHO))
    data = os.urandom(100000)
    s.sendall(data)
    got = s.recv(len(data), socket.MSG_WAITALL)
    assert got == data, f"MSG_WAITALL returned {len(got)} of {len(data)} bytes"
    s.sendall(b"abc")
    s.shutdown(socket.SHUT_WR)  # the echo server answers, then closes
    got = s.recv(10, socket.MSG_WAITALL)
    assert got == b"abc", f"at the end of the stream: {got!r}"
    s.close()


def check_dup_and_fork():
    s = socket.create_connection((K, ECHO))
    d = s.dup()
    s.close()  # the connection lives on through d
    echo_exact(d, b"after dup")
    pid = os.fork()
    if pid == 0:
        # the child: the stack is inert; closing is silent, new sockets
        # are the kernel's
        code = 0
        try:
            d.close()
            k = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            k.bind(("127.0.0.1", 0))
            k.close()
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            code = 1
        os._exit(code)
    _, st = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(st) == 0, "the child failed"
    echo_exact(d, b"the parent's connection is intact")
    d.close()


def rst_then_send(flags):
    """Connect to the server that resets; send until EPIPE."""
    s = socket.create_connection((K, RST))
    try:
        s.recv(1)
    except ConnectionResetError:
        pass
    for _ in range(3):
        try:
            s.send(b"x", flags)
        except ConnectionResetError:
            continue
        except BrokenPipeError:
            s.close()
            return
    raise AssertionError("no EPIPE after the reset")


def check_sigpipe():
    got = []
    old = signal.signal(signal.SIGPIPE, lambda *a: got.append(1))
    try:
        rst_then_send(0)
        assert got == [1], f"SIGPIPE raised {len(got)} times (want once)"
        rst_then_send(socket.MSG_NOSIGNAL)
        assert got == [1], "MSG_NOSIGNAL did not keep SIGPIPE away"
    finally:
        signal.signal(signal.SIGPIPE, old)


CHECKS = [check_blocking_echo, check_timeout_echo, check_sendfile, check_udp, check_select,
          check_socket_timeouts, check_waitall, check_dup_and_fork, check_sigpipe]


def main():
    first = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # starts the stack
    print("stack up", flush=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(DIR, "go")):
        if time.monotonic() > deadline:
            print("no go file within 30 s", flush=True)
            return 1
        time.sleep(0.05)
    failed = 0
    for c in CHECKS:
        try:
            c()
            print(f"check {c.__name__} ok", flush=True)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"check {c.__name__} FAILED: {e!r}", flush=True)
            traceback.print_exc()
    first.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
