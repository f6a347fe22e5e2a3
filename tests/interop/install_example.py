#!/usr/bin/env python3
"""The installed library works: install, build the example out of tree, serve.

1. `meson install -C BUILD --destdir D` (a temp dir),
2. builds examples/echo with its own Makefile against D, through
   `pkg-config --cflags --libs libuserstack` only (PKG_CONFIG_PATH pointing
   into D; the .pc file is relocatable, so no build-tree path leaks in),
3. checks the binary resolves libuserstack.so from D, not from the build,
4. runs it in a namespace over net_tap (echo_interop.EchoEnv: same set-up
   and teardown as the us-httpecho cases) and has a kernel client send
   1 MiB of random bytes, half-close and get exactly them back, then EOF.

    install_example.py --build build --source . --config config/tap.ini

Exit status: 0 passed, 1 failed, 77 skipped (not root, no make/cc).
"""

import argparse
import glob
import json
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402

ECHO_BYTES = 1 << 20


def sanitize_cflags(build):
    """[CFLAGS=...] matching the build directory's b_sanitize, or []."""
    opts = json.loads(ei.run(["meson", "introspect", "--buildoptions", build]).stdout)
    san = next((o["value"] for o in opts if o["name"] == "b_sanitize"), "none")
    if san in ("none", ""):
        return []
    return [f"CFLAGS=-O2 -g -Wall -Wextra -Werror -fsanitize={san}"]


def install_and_build(args, destdir):
    ei.run(["meson", "install", "-C", args.build, "--destdir", destdir, "--no-rebuild",
            "--quiet"], timeout=300)
    pcs = glob.glob(os.path.join(destdir, "**", "libuserstack.pc"), recursive=True)
    ei.check(len(pcs) == 1, f"libuserstack.pc not installed (found {pcs})")
    pcdir = os.path.dirname(pcs[0])
    libdir = os.path.normpath(os.path.join(pcdir, ".."))
    for name in ("libuserstack.so", "libuserstack.a", "libuserstack-preload.so"):
        ei.check(os.path.exists(os.path.join(libdir, name)), f"{name} not installed")
    for h in ("userstack.h", "us_socket.h"):
        ei.check(glob.glob(os.path.join(destdir, "**", "include", h), recursive=True),
                 f"header {h} not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    env.pop("PKG_CONFIG_LIBDIR", None)
    flags = ei.run(["env", f"PKG_CONFIG_PATH={pcdir}", "pkg-config", "--cflags", "--libs",
                    "libuserstack"]).stdout
    ei.check(os.path.abspath(args.build) not in flags,
             f"pkg-config flags point into the build tree: {flags}")
    ei.say(f"pkg-config --cflags --libs libuserstack: {flags.strip()}")
    # A sanitizer build installs an instrumented library: the example must
    # then be built with the same sanitizers (ASan's runtime must come first).
    p = subprocess.run(["make", "-C", os.path.join(args.source, "examples", "echo"),
                        f"OUT={destdir}"] + sanitize_cflags(args.build), env=env,
                       stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    ei.check(p.returncode == 0, f"example build failed:\n{p.stdout[-2000:]}")
    exe = os.path.join(destdir, "us-echo")
    ldd = ei.run(["env", f"LD_LIBRARY_PATH={libdir}", "ldd", exe]).stdout
    line = [ln for ln in ldd.splitlines() if "libuserstack" in ln]
    ei.check(line and destdir in line[0], f"us-echo does not use D's library: {line}")
    return exe, libdir


def echo_case(env):
    data = os.urandom(ECHO_BYTES)
    got = bytearray()
    with env.netns():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with sock:
        sock.settimeout(20)
        sock.connect((env.stack_ip, env.port))

        def reader():
            while True:
                b = sock.recv(65536)
                if not b:
                    return
                got.extend(b)

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        t.join(30)
        ei.check(not t.is_alive(), f"no EOF after {len(got)} of {len(data)} bytes")
    ei.say(f"echo: sent {len(data)}, got {len(got)} bytes back, "
           f"{'byte-exact' if bytes(got) == data else 'DIFFERENT'} "
           f"(sha256 {hashlib.sha256(got).hexdigest()[:16]})")
    ei.check(bytes(got) == data, "the echo differs from what was sent")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--port", type=int, default=7007)
    args = ap.parse_args()
    if os.geteuid() != 0:
        ei.say("SKIP: needs root (network namespaces)")
        return ei.SKIP
    missing = [t for t in ("make", "cc", "pkg-config", "ip") if not ei.tool(t)]
    if missing:
        ei.say(f"SKIP: missing tools {missing}")
        return ei.SKIP
    destdir = tempfile.mkdtemp(prefix="us-install-")
    try:
        exe, libdir = install_and_build(args, destdir)
        ns_args = argparse.Namespace(server=f"env LD_LIBRARY_PATH={libdir} {exe}",
                                     config=args.config, port=args.port)
        env = ei.EchoEnv(ns_args)
        try:
            with env:
                echo_case(env)
                ei.check(env.server_alive(), "us-echo died during the case")
            ei.check(not env.stop_problem, env.stop_problem or "")
            ei.check("connections served" in env.log_text(), "no summary from us-echo")
        finally:
            env.cleanup_files()
    except ei.CaseFailed as e:
        ei.say(f"FAIL install-example: {e}")
        return 1
    finally:
        shutil.rmtree(destdir, ignore_errors=True)
    ei.say("PASS install-example")
    return 0


if __name__ == "__main__":
    ei.run_main(main)
