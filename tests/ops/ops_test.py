#!/usr/bin/env python3
"""Operations tests: us-httpecho in a namespace (the interop harness's
EchoEnv: tap, kernel peer, unique --file-prefix, full teardown) observed
with the tools an operator uses:

  telemetry         /userstack/* over the telemetry socket, dpdk-telemetry.py
                    and tools/us-stat; counters move after traffic
  telemetry-nohuge  the same with hugepages = off (--no-huge)
  telemetry-load    three telemetry readers at once while wrk loads the server
  capture-pcap      [capture] pcap = FILE: the handshake and the HTTP request
                    are in the file (read with tshark), --no-huge
  pdump             [capture] pdump = on on hugepages: dpdk-dumpcap attaches
                    as a secondary and captures the HTTP request

    ops_test.py --server build/apps/httpecho/us-httpecho \
                --config config/tap.ini --tools-dir tools CASE [CASE...]
Exit status: 0 passed, 1 failed, 77 skipped.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import echo_interop as ei  # noqa: E402
from echo_interop import CaseFailed, check, say  # noqa: E402

SKIP = 77


class OpsEnv(ei.EchoEnv):
    """EchoEnv with keys of more sections replaced or added in the server's
    config: {"capture": {"pcap": "@TMP@/us.pcap"}} (@TMP@: the run's tmpdir)."""

    def __init__(self, args, sections=None, **kw):
        super().__init__(args, **kw)
        self.sections = sections or {}

    def _write_config(self):
        super()._write_config()
        with open(self.cfgpath, encoding="utf-8") as f:
            text = f.read()
        for sect, keys in self.sections.items():
            keys = {k: v.replace("@TMP@", self.tmpdir) for k, v in keys.items()}
            text = ei.ini_with_overrides(text, sect, keys)
        with open(self.cfgpath, "w", encoding="utf-8") as f:
            f.write(text)


# ---------------------------------------------------------------------------
# A telemetry client written from the protocol (independent of us-stat)

class TelConn:
    """One telemetry v2 connection (DPDK listens with a backlog of 1, so
    busy readers keep theirs open rather than reconnecting)."""

    def __init__(self, env):
        path = f"/var/run/dpdk/{env.prefix}/dpdk_telemetry.v2"
        for attempt in range(100):
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.s.settimeout(10)
            try:
                self.s.connect(path)
                break
            except BlockingIOError:  # EAGAIN: the backlog of 1 is taken
                self.s.close()
                if attempt == 99:
                    raise
                time.sleep(0.02)
        self.max_len = int(json.loads(self.s.recv(1 << 16).decode())["max_output_len"])

    def query(self, cmd):
        self.s.send(cmd.encode())
        return json.loads(self.s.recv(self.max_len).decode())[cmd.split(",", 1)[0]]

    def close(self):
        self.s.close()


def tel_query(env, cmd):
    conn = TelConn(env)
    try:
        return conn.query(cmd)
    finally:
        conn.close()


def keepalive_request(env, sock, tag):
    req = (f"GET /ops/{tag} HTTP/1.1\r\nHost: x\r\nX-Tag: {tag}\r\n\r\n").encode()
    sock.sendall(req)
    code, _, _, body = ei.read_response(sock)
    check(code == 200 and body == req, f"echo of {tag}: HTTP {code}, {len(body)} bytes")
    return len(req)


def check_stats_shape(st):
    for group, keys in (("stack", ("eth_rx_frames", "ip_drop_bad_csum", "udp_drop_no_port")),
                        ("mib", ("tcpActiveOpens", "tcpPassiveOpens", "tcpCurrEstab",
                                 "tcpInErrs", "tcpOutRsts")),
                        ("tcp", ("rx_segs", "passive_opens", "drop_bad_csum", "retrans_segs")),
                        ("tcbs", ("listen", "syn_received", "established", "time_wait")),
                        ("nic", ("rx_pkts", "tx_pkts", "tx_dropped_full"))):
        check(isinstance(st.get(group), dict), f"/userstack/stats has no '{group}': {st}")
        missing = [k for k in keys if k not in st[group]]
        check(not missing, f"/userstack/stats {group} lacks {missing}")


def find_conn(rows, peer):
    return [r for r in rows if r["remote"] == peer]


def check_conn_listing(env, peer, sent):
    page = tel_query(env, "/userstack/conns,0")
    say(f"conns page: {json.dumps(page)[:600]}")
    rows = list(page["rows"].values())
    listen = [r for r in rows if r["state"] == "LISTEN"]
    check(listen and listen[0]["local"].endswith(f":{env.port}"),
          f"no listener on {env.port} in {rows}")
    mine = find_conn(rows, peer)
    check(len(mine) == 1, f"connection from {peer} not listed once: {rows}")
    r = mine[0]
    say(f"conn row: {json.dumps(r)}")
    check(r["state"] == "ESTABLISHED", f"state {r['state']}")
    check(r["local"] == f"{env.stack_ip}:{env.port}", f"local {r['local']}")
    check(r["bytes_received"] == sent, f"bytes_received {r['bytes_received']} != {sent}")
    check(r["bytes_acked"] > sent, f"bytes_acked {r['bytes_acked']} (echo > {sent})")
    check(r["cwnd"] >= r["mss"] > 0 and r["rto_ms"] >= 200 and r["rtt_us"] > 0,
          f"cwnd/mss/rto/rtt implausible: {r}")
    check(page["total"] >= 2, f"total {page['total']}")


def check_paging(env, n=40):
    """More connections than one reply holds: "next" pages, us-stat lists all."""
    socks = []
    try:
        for _ in range(n):
            with env.netns():
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.settimeout(20)
            s.connect((env.stack_ip, env.port))
        peers = {"%s:%d" % s.getsockname() for s in socks}
        time.sleep(0.2)  # the handshakes' last ACKs reach the stack
        first = tel_query(env, "/userstack/conns,0,0")
        check(first["total"] >= n + 1 and first.get("next") == len(first["rows"]),
              f"first page: total {first['total']}, next {first.get('next')}")
        out = run_us_stat(env)
        listed = {ln.split()[4] for ln in out.splitlines() if ln.startswith("ESTAB")}
        check(peers <= listed, f"us-stat misses {len(peers - listed)} of {n} connections")
    finally:
        for s in socks:
            s.close()


def run_us_stat(env, *extra):
    p = ei.run([sys.executable, os.path.join(env.args.tools_dir, "us-stat"),
                "-f", env.prefix] + list(extra), timeout=30)
    return p.stdout


def run_dpdk_telemetry(env, cmds):
    tool = ei.tool("dpdk-telemetry.py")
    if not tool:
        raise CaseFailed("dpdk-telemetry.py not found (Debian package dpdk)")
    p = subprocess.run([sys.executable, tool, "-f", env.prefix], input="\n".join(cmds) + "\n",
                       capture_output=True, text=True, timeout=30)
    replies = {}
    for line in p.stdout.splitlines():
        line = line.strip().lstrip("-> ").strip()
        if line.startswith("{"):
            with_cmd = json.loads(line)
            replies.update(with_cmd)
    check(all(c.split(",")[0] in replies for c in cmds),
          f"dpdk-telemetry.py answered {list(replies)} for {cmds}: "
          f"{p.stdout[-500:]} {p.stderr[-500:]}")
    return replies


def case_telemetry(env):
    before = tel_query(env, "/userstack/stats,0")
    check_stats_shape(before)
    port0 = tel_query(env, "/userstack/port")
    check("ipackets" in port0 and "nic_tx_dropped_full" in port0, f"/userstack/port: {port0}")
    with env.netns():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with sock:
        sock.settimeout(20)
        sock.connect((env.stack_ip, env.port))
        peer = "%s:%d" % sock.getsockname()
        sent = sum(keepalive_request(env, sock, f"t{i}") for i in range(3))
        check_conn_listing(env, peer, sent)
        st = tel_query(env, "/userstack/stats")
        mib, tcbs = st["mib"], st["tcbs"]
        check(mib["tcpCurrEstab"] == 1, f"tcpCurrEstab with one connection open: {mib}")
        # The gauges against the walk behind tcpCurrEstab, from one snapshot.
        check(tcbs["established"] + tcbs["close_wait"] == mib["tcpCurrEstab"]
              and tcbs["listen"] == mib["listeners"], f"tcbs {tcbs} disagree with mib {mib}")
        out = run_us_stat(env)
        say("us-stat:\n" + out)
        line = [ln for ln in out.splitlines() if peer in ln]
        check(line and line[0].startswith("ESTAB"), f"us-stat has no ESTAB line for {peer}")
        check(f"bytes_received:{sent}" in out, "us-stat lacks the connection's detail line")
    check_paging(env)
    after = tel_query(env, "/userstack/stats")
    check_stats_shape(after)
    for grp, key, least in (("tcp", "passive_opens", 1), ("tcp", "rx_segs", 4),
                            ("stack", "eth_rx_frames", 4), ("nic", "tx_pkts", 4)):
        d = after[grp][key] - before[grp][key]
        check(d >= least, f"{grp}.{key} moved by {d} (want >= {least})")
    mib = after["mib"]
    check(mib["tcpPassiveOpens"] == after["tcp"]["passive_opens"] and mib["listeners"] == 1
          and mib["tcpInSegs"] == after["tcp"]["rx_segs"], f"mib: {mib}")
    port1 = tel_query(env, "/userstack/port,0")
    check(port1["ipackets"] > port0["ipackets"] and port1["opackets"] > port0["opackets"],
          f"port counters did not move: {port0} -> {port1}")
    replies = run_dpdk_telemetry(env, ["/userstack/drops", "/userstack/stats,0"])
    drops = replies["/userstack/drops"]
    check("total" in drops and "tcp_drop_bad_csum" in drops and "ip_drop_bad_csum" in drops,
          f"/userstack/drops: {drops}")
    check(replies["/userstack/stats"]["tcp"]["passive_opens"] >= 1, "dpdk-telemetry.py stats")
    check(tel_query(env, "/userstack/stats,7") is None, "engine 7 answered (there is none)")
    env.expect_server = {"requests": 3, "connections": 41}


def case_telemetry_2q(env, conns=8):
    """Two engines (two queues of the tap): /userstack/port counts the whole
    port (the queues summed, not the zeros of the single-queue field) and
    shows each queue under "queues"."""
    socks = []
    for i in range(conns):
        with env.netns():
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(20)
        sock.connect((env.stack_ip, env.port))
        socks.append(sock)
        keepalive_request(env, sock, f"q{i}")
    for sock in socks:
        sock.close()
    time.sleep(0.5)  # the FINs and their ACKs: the counters settle
    for eng in (0, 1):
        port = tel_query(env, f"/userstack/port,{eng}")
        say(f"/userstack/port,{eng}: {json.dumps(port)[:700]}")
        qs = port.get("queues")
        check(isinstance(qs, dict) and sorted(qs) == ["0", "1"], f"no per-queue stats: {port}")
        for key in ("nic_rx_pkts", "nic_tx_pkts"):
            total = sum(q[key] for q in qs.values())
            check(port[key] >= conns * 3 and port[key] == total,
                  f"{key} {port[key]} is not the queues' sum {total} (or too small)")
    env.expect_server = {"requests": conns, "connections": conns}


def case_telemetry_load(env, secs=4, readers=3):
    """Readers on several telemetry connections at once while wrk loads the
    engine: every reply complete, every counter monotonic reader by reader
    (a torn or half-written snapshot would show as a step back or a hole)."""
    import threading
    errors, replies = [], [0] * readers
    stop = threading.Event()

    def reader(i):
        last, conn = None, None
        try:
            conn = TelConn(env)
            while not stop.is_set():
                cmd = ("/userstack/stats", "/userstack/conns,0", "/userstack/drops")[i % 3]
                r = conn.query(cmd)
                if r is None:
                    raise CaseFailed(f"{cmd}: null reply under load")
                replies[i] += 1
                if cmd == "/userstack/stats":
                    check_stats_shape(r)
                    cur = (r["tcp"]["rx_segs"], r["tcp"]["tx_segs"],
                           r["stack"]["eth_rx_frames"], r["nic"]["tx_pkts"], r["time_ns"])
                    if last and any(c < p for c, p in zip(cur, last)):
                        raise CaseFailed(f"counters went back: {last} -> {cur}")
                    last = cur
                elif cmd == "/userstack/conns,0":
                    want = min(r["total"] - r["start"], 16)
                    if len(r["rows"]) != want:
                        raise CaseFailed(f"conns page has {len(r['rows'])} rows, want {want}")
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            if conn:
                conn.close()

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(readers)]
    for t in threads:
        t.start()
    p = env.ns_run(["wrk", "-c", "32", "-d", str(secs), "-t", "2", "--timeout", "2s",
                    env.url("/load")], timeout=60, check_rc=False)
    stop.set()
    for t in threads:
        t.join(15)
    say(f"telemetry replies per reader under load: {replies}")
    check(p.returncode == 0 and "requests in" in p.stdout, f"wrk failed: {p.stderr[-300:]}")
    check(not errors, f"reader failed: {errors[0] if errors else ''}")
    check(all(n >= 20 for n in replies), f"too few replies under load: {replies}")


# ---------------------------------------------------------------------------
# Capture

def tshark_fields(path, flt, fields):
    cmd = [ei.tool("tshark"), "-r", path, "-Y", flt, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    p = ei.run(cmd, timeout=60)
    return [ln.split("\t") for ln in p.stdout.splitlines() if ln.strip()]


def check_http_capture(path, env, tag):
    syn = tshark_fields(path, "tcp.flags.syn == 1 && tcp.flags.ack == 0", ["ip.src", "ip.dst"])
    synack = tshark_fields(path, "tcp.flags.syn == 1 && tcp.flags.ack == 1",
                           ["ip.src", "ip.dst"])
    req = tshark_fields(path, "http.request", ["http.request.uri", "ip.src"])
    resp = tshark_fields(path, "http.response", ["http.response.code", "ip.src"])
    say(f"{os.path.basename(path)}: SYN {syn[:2]}, SYN-ACK {synack[:2]}, "
        f"requests {req[:2]}, responses {resp[:2]}")
    check([ei.KERNEL_ADDR, env.stack_ip] in syn, "no SYN from the kernel to the stack")
    check([env.stack_ip, ei.KERNEL_ADDR] in synack, "no SYN-ACK from the stack")
    check([f"/ops/{tag}", ei.KERNEL_ADDR] in req, f"no HTTP request for /ops/{tag}")
    check(["200", env.stack_ip] in resp, "no HTTP 200 from the stack")


def curl_once(env, tag):
    p = env.ns_run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                    env.url(f"/ops/{tag}")], check_rc=False)
    check(p.stdout == "200", f"curl got {p.stdout!r} {p.stderr.strip()}")


def case_capture_pcap(env):
    curl_once(env, "pcap")
    cap = tel_query(env, "/userstack/stats")["capture"]
    check(cap["frames"] >= 8 and cap["truncated"] >= 1 and cap["write_errors"] == 0,
          f"capture counters: {cap}")
    env.pcap_path = os.path.join(env.tmpdir, "us.pcap")
    env.expect_server = {"requests": 1, "connections": 1}


def after_capture_pcap(env):
    """After the server stopped (the file is complete then)."""
    path = env.pcap_path
    check(os.path.exists(path) and os.path.getsize(path) > 24, f"no capture in {path}")
    check_http_capture(path, env, "pcap")
    # snaplen = 96: every record cut there, the original length kept.
    lens = tshark_fields(path, "frame", ["frame.cap_len", "frame.len"])
    check(lens and all(int(c) <= 96 for c, _ in lens), f"snaplen not applied: {lens[:5]}")
    check(any(int(n) > 96 for _, n in lens), "no frame longer than the snaplen?")


def case_pdump(env):
    dumpcap = ei.tool("dpdk-dumpcap")
    if not dumpcap:
        raise CaseFailed("dpdk-dumpcap not found (Debian package dpdk)")
    path = os.path.join(env.tmpdir, "pdump.pcapng")
    log = open(path + ".log", "w")
    # stdbuf: its progress is stdio-buffered (no newline) into a file otherwise.
    proc = subprocess.Popen(["stdbuf", "-o0", "-e0", dumpcap, "--file-prefix", env.prefix,
                             "-i", "0", "-w", path],
                            stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        # "Capturing on" comes before rte_pdump_enable; "Packets captured"
        # (its running count, without -q) after the primary has answered.
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            with open(path + ".log") as f:
                if "Packets captured" in f.read():
                    break
            time.sleep(0.1)
        check(proc.poll() is None, f"dpdk-dumpcap exited {proc.returncode}: "
              f"{open(path + '.log').read()[-800:]}")
        with open(path + ".log") as f:
            check("Packets captured" in f.read(), "dpdk-dumpcap did not start capturing in 30 s")
        curl_once(env, "pdump")
        time.sleep(1)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
    say(open(path + ".log").read().strip()[-400:])
    check(os.path.exists(path), "dpdk-dumpcap wrote nothing")
    check_http_capture(path, env, "pdump")
    env.expect_server = {"requests": 1, "connections": 1}


CAPTURE_INI = {"capture": {"pcap": "@TMP@/us.pcap", "snaplen": "96"}}
CASES = {
    "telemetry": (case_telemetry, None, {}),
    "telemetry-nohuge": (case_telemetry, None, {"hugepages": "off"}),
    "telemetry-load": (case_telemetry_load, None, {}),
    "telemetry-2q": (case_telemetry_2q, None, {"server_args": ["--lcores", "0-1"]}),
    "capture-pcap": (case_capture_pcap, after_capture_pcap,
                     {"hugepages": "off", "sections": CAPTURE_INI}),
    "pdump": (case_pdump, None, {"hugepages": "on", "sections": {"capture": {"pdump": "on"}}}),
}


def free_hugepages():
    """HugePages_Free, 0 without a mounted hugetlbfs (what nic/eal.c probes)."""
    with open("/proc/mounts") as f:
        if not any(ln.split()[2:3] == ["hugetlbfs"] for ln in f):
            return 0
    with open("/proc/meminfo") as f:
        for ln in f:
            if ln.startswith("HugePages_Free:"):
                return int(ln.split()[1])
    return 0


def run_case(args, name):
    fn, after, kwargs = CASES[name]
    say(f"== {name}")
    if kwargs.get("hugepages") == "on" and free_hugepages() < 64:
        say(f"SKIP {name}: needs free hugepages (dpdk-dumpcap attaches only to a primary "
            "on hugepages; tools/setup.sh reserves them)")
        return SKIP
    if name == "pdump" and ei.sanitized(args.server):
        # ASan's shadow reservations move the primary's hugepage mapping to
        # addresses a secondary (dpdk-dumpcap) may not get: EAL init fails
        # in it at random.  The normal build runs this case.
        say("SKIP pdump: the server is ASan-instrumented (a DPDK secondary cannot always "
            "map its memory layout)")
        return SKIP
    env = OpsEnv(args, **kwargs)
    try:
        with env:
            fn(env)
            check(env.server_alive(), "server died during the case")
        check(not env.stop_problem, env.stop_problem or "")
        ei.check_served(env)
        if after:
            after(env)
        check(not os.path.exists(f"/var/run/dpdk/{env.prefix}"), "runtime dir left behind")
    except CaseFailed as e:
        say(f"FAIL {name}: {e}")
        return 1
    except Exception:  # noqa: BLE001
        say(f"FAIL {name}: unexpected error\n{traceback.format_exc()}")
        return 1
    finally:
        env.cleanup_files()
    say(f"PASS {name}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--tools-dir", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    ei.case_names(ap, args.cases, CASES, allow_all=False)
    if os.geteuid() != 0:
        say("SKIP: needs root (network namespaces)")
        return SKIP
    missing = [t for t in ("ip", "curl", "tshark") if not ei.tool(t)]
    if missing:
        say(f"FAIL: missing tools {missing}")
        return 1
    ei.trap_signals(sigint=False)
    ei.sweep_stale_namespaces(ei.tool("ip"))
    results = [run_case(args, n) for n in args.cases]
    if any(r not in (0, SKIP) for r in results):
        return 1
    return SKIP if all(r == SKIP for r in results) else 0


if __name__ == "__main__":
    ei.run_main(main)
