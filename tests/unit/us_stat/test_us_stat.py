#!/usr/bin/env python3
"""tools/us-stat against a telemetry socket played here: the connection
listing of a dual-stack stack, IPv4 and IPv6 endpoints in the form
stack/engine/telemetry.c sends them ("a.b.c.d:port", "[addr]:port"),
over two pages, must come out one row per connection with each endpoint
whole in its column and the columns aligned under the header.

    test_us_stat.py PATH/TO/us-stat
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

PREFIX = "usstat_test"

ROW = {"state": "ESTABLISHED", "cc": "cubic", "mss": 1428, "cwnd": 10, "ssthresh": 0xFFFFFFFF,
       "rtt_us": 1200, "rttvar_us": 300, "rto_ms": 201, "snd_wnd": 65535, "rcv_wnd": 65535,
       "rcvbuf": 262144, "unacked": 0, "sndq": 0, "rcvq": 0, "bytes_acked": 1,
       "bytes_received": 0, "retrans": 0, "backoff": 0, "sacked": 0, "lost": 0,
       "delivery_rate": 0, "in_recovery": 0, "fast_retransmits": 0}

# (state, local, remote): what telemetry.c writes for listeners on
# 0.0.0.0 and [::] and for connections of both families, the longest IPv6
# endpoint among them.
CONNS = [
    ("LISTEN", "0.0.0.0:80", "0.0.0.0:0"),
    ("LISTEN", "[::]:8080", "[::]:0"),
    ("ESTABLISHED", "10.0.0.2:80", "10.0.0.1:40000"),
    ("ESTABLISHED", "[fd00:77::2]:8080", "[fd00:77::1]:40001"),
    ("ESTABLISHED", "[2001:db8:aaaa:bbbb:cccc:dddd:eeee:2]:8080",
     "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"),
    ("SYN-SENT", "[fd00:77::2]:40002", "[fd00:77::9]:443"),
]
PAGE = 4  # rows per reply: the listing takes two


def conns_page(start):
    rows = {}
    for i, (state, local, remote) in enumerate(CONNS[start:start + PAGE], start):
        rows[str(i)] = dict(ROW, state=state, local=local, remote=remote,
                            sndq=i, rcvq=10 * i)
    page = {"engine": 0, "total": len(CONNS), "start": start, "rows": rows}
    if start + PAGE < len(CONNS):
        page["next"] = start + PAGE
    return page


def serve(listener, asked):
    """DPDK telemetry v2: a hello, then one JSON reply per command."""
    conn, _ = listener.accept()
    with conn:
        conn.send(json.dumps({"version": "DPDK 22.11.0", "pid": os.getpid(),
                              "max_output_len": 16384}).encode())
        while True:
            cmd = conn.recv(1024).decode()
            if not cmd:
                return
            asked.append(cmd)
            name, _, params = cmd.partition(",")
            engine, _, start = params.partition(",")
            reply = conns_page(int(start or 0)) if name == "/userstack/conns" else None
            conn.send(json.dumps({name: reply}).encode())


def run_us_stat(tool, rundir):
    sock_dir = os.path.join(rundir, "dpdk", PREFIX)
    os.makedirs(sock_dir)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(os.path.join(sock_dir, "dpdk_telemetry.v2"))
    listener.listen(1)
    asked = []
    server = threading.Thread(target=serve, args=(listener, asked), daemon=True)
    server.start()
    env = dict(os.environ, RUNTIME_DIRECTORY=rundir)
    p = subprocess.run([sys.executable, tool, "-f", PREFIX], env=env, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    server.join(10)
    listener.close()
    return p, asked


def expect(what, ok, failures):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as rundir:
        p, asked = run_us_stat(sys.argv[1], rundir)
    print(p.stdout, end="")
    print(p.stderr, end="", file=sys.stderr)
    expect("us-stat exits 0", p.returncode == 0, failures)
    expect("both pages asked for", asked == ["/userstack/conns,0,0", "/userstack/conns,0,4"],
           failures)
    lines = p.stdout.splitlines()
    header = lines[0] if lines else ""
    rows = [ln for ln in lines[1:] if not ln.startswith("\t")]
    expect(f"one row per connection ({len(rows)} of {len(CONNS)})", len(rows) == len(CONNS),
           failures)
    local_col = header.find("Local Address:Port")
    peer_col = header.find("Peer Address:Port")
    for i, (row, (state, local, remote)) in enumerate(zip(rows, CONNS)):
        f = row.split()
        expect(f"row {i}: {local} and {remote} whole in columns 4 and 5",
               len(f) == 5 and f[3] == local and f[4] == remote and f[1] == str(10 * i)
               and f[2] == str(i), failures)
        expect(f"row {i}: each endpoint under its header",
               row.find(local) == local_col and row.find(remote, local_col + len(local))
               == peer_col, failures)
    details = [ln for ln in lines if ln.startswith("\t")]
    expect("a detail line per connection that is not a listener",
           len(details) == sum(1 for c in CONNS if c[0] != "LISTEN"), failures)
    if failures:
        print(f"{len(failures)} failed")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
