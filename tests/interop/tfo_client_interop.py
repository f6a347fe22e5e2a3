#!/usr/bin/env python3
"""TCP Fast Open (RFC 7413), our client against Linux's own TFO server.

Case:
  tfo-linux-server  In a fresh namespace the kernel runs a Python HTTP/1.1
                    server whose listener has setsockopt(IPPROTO_TCP,
                    TCP_FASTOPEN, 256), with `sysctl net.ipv4.tcp_fastopen=3`
                    in the namespace.  us-loadgen --close --fastopen runs on
                    the tap (one connection per request, the request given
                    to us_sendto(US_MSG_FASTOPEN)).  Passes when: zero
                    errors, a few hundred requests, most of them sent in
                    the SYN; a dumpcap capture shows a SYN from us carrying
                    the cookie Linux granted and the request bytes
                    (tcp.options.tfo.cookie, tcp.len > 0), acknowledged in
                    full by Linux's SYN-ACK; our counters show client SYN
                    data acknowledged (tfo_cli_syn_data_acked).

    tfo_client_interop.py --loadgen build/apps/loadgen/us-loadgen \
        --config config/tap.ini tfo-linux-server

Everything made (namespace, processes, temp dir, DPDK files of the unique
--file-prefix) is removed, pass or fail.  Exit: 0 passed, 1 failed, 77
skipped (not root).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402
import loadgen_interop as li  # noqa: E402

PORT = 8000
SECS = 2

# The kernel's HTTP server with Fast Open on its listener (RFC 7413 5.1 qlen).
KERNEL_TFO_SERVER = r'''
import http.server, socket, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"tfo " + self.path.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 256)
        super().server_bind()
S(("0.0.0.0", int(sys.argv[1])), H).serve_forever()
'''


def start_kernel_server(run):
    run.make_ns()
    # Client and server bits (RFC 7413 is off by default in Linux too).
    ei.run(run.ns_cmd(["sysctl", "-qw", "net.ipv4.tcp_fastopen=3"]))
    script = os.path.join(run.tmp, "kernel_tfo_server.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(KERNEL_TFO_SERVER)
    run.start(run.ns_cmd([sys.executable, script, str(PORT)]), "kernel_server.log")


def run_loadgen_with_capture(args, run, cfg, iface):
    """us-loadgen in the namespace; dumpcap on its tap from before the first
    SYN to after the last FIN.  (JSON summary, capture, loadgen log)."""
    out = os.path.join(run.tmp, "loadgen.json")
    cmd = [args.loadgen, "--config", cfg, "--target", f"{ei.KERNEL_ADDR}:{PORT}",
           "--connections", "2", "--duration", str(SECS), "--delay", "4",
           "--timeout-ms", "2000", "--close", "--fastopen", "--path", "/tfo",
           "--stats", "--quiet", "--json", out]
    p = run.start(run.ns_cmd(cmd), "loadgen.log")
    li.wait_for(lambda: ei.run(run.ns_cmd(["ip", "link", "show", iface]),
                               check_rc=False).returncode == 0 or p.poll() is not None,
                20, f"interface {iface}")
    ei.run(run.ns_cmd(["ip", "addr", "add", f"{ei.KERNEL_ADDR}/{ei.KERNEL_PREFIX}",
                       "dev", iface]))
    ei.run(run.ns_cmd(["ip", "link", "set", iface, "up"]))
    env = types.SimpleNamespace(tmpdir=run.tmp, ns_cmd=run.ns_cmd, iface=iface)
    with ei.Capture(env, f"tcp port {PORT}") as cap:
        try:
            p.wait(SECS + 40)
        except subprocess.TimeoutExpired as e:
            raise ei.CaseFailed("us-loadgen did not finish") from e
        time.sleep(0.3)
    log = run.log("loadgen.log")
    ei.say("\n".join("  " + ln for ln in log.splitlines()
                     if ln.startswith(("target", "requests", "fastopen", "latency", "  error"))))
    ei.check(p.returncode == 0, f"us-loadgen exited {p.returncode}: {log[-800:]}")
    with open(out, encoding="utf-8") as f:
        return json.load(f), cap, log


def syn_rows(tshark, cap):
    """SYNs and SYN-ACKs: (frame, src, is_synack, stream, len, cookie, ack)."""
    p = ei.run([tshark, "-n", "-r", cap.path, "-Y", "tcp.flags.syn == 1", "-T", "fields",
                "-E", "separator=;", "-e", "frame.number", "-e", "ip.src",
                "-e", "tcp.flags.ack", "-e", "tcp.stream", "-e", "tcp.len",
                "-e", "tcp.options.tfo.cookie", "-e", "tcp.ack"], timeout=120)
    rows = []
    for ln in p.stdout.splitlines():
        f = ln.split(";")
        if len(f) == 7:
            rows.append((f[0], f[1], f[2] in ("1", "True"), f[3], int(f[4] or 0), f[5],
                         int(f[6] or 0)))
    return rows


def check_capture(cap, stack_ip):
    """A SYN of ours with the cookie and the request, acked in full by Linux."""
    tshark = ei.tool("tshark")
    ei.check(tshark, "tshark not found (Debian package tshark)")
    rows = syn_rows(tshark, cap)
    synacks = {r[3]: r for r in rows if r[2] and r[1] == ei.KERNEL_ADDR}
    granted = {r[5] for r in synacks.values() if r[5]}
    ei.check(granted, "Linux granted no cookie (no SYN-ACK with a TFO cookie)")
    data_syns = [r for r in rows if not r[2] and r[1] == stack_ip and r[4] > 0 and r[5]]
    ei.check(data_syns, "no SYN from us carried a cookie and data")
    acked = [r for r in data_syns
             if r[3] in synacks and synacks[r[3]][6] == r[4] + 1 and r[5] in granted]
    ei.say(f"capture: {len(rows)} SYN/SYN-ACK frames, {len(data_syns)} SYNs of ours with "
           f"cookie + data, {len(acked)} acked in full by Linux")
    ei.check(acked, "no SYN data of ours acknowledged by Linux's SYN-ACK")
    first = acked[0]
    fields = ["frame.number", "ip.src", "ip.dst", "tcp.flags.str", "tcp.len",
              "tcp.options.tfo.cookie", "http.request.method", "http.request.uri"]
    cmd = [tshark, "-n", "-r", cap.path, "-T", "fields", "-E", "separator= "]
    for f in fields:
        cmd += ["-e", f]
    line = ei.run(cmd + ["-Y", f"frame.number == {first[0]}"], timeout=60).stdout.strip()
    ack = ei.run(cmd[:-len(fields) * 2] + ["-e", "frame.number", "-e", "ip.src",
                 "-e", "tcp.flags.str", "-e", "tcp.ack", "-Y",
                 f"frame.number == {synacks[first[3]][0]}"], timeout=60).stdout.strip()
    ei.say(f"tshark (our SYN with data): {line!r}")
    ei.say(f"tshark (Linux's SYN-ACK):   {ack!r}")
    return len(data_syns), len(acked)


def counter(log, name):
    m = re.search(rf"^{re.escape(name)} (\d+)", log, re.M)
    ei.check(m, f"counter {name} not in us-loadgen's --stats output")
    return int(m.group(1))


def case_tfo_linux_server(args, run):
    with open(args.config, encoding="utf-8") as f:
        base = f.read()
    cfg = run.config("tap", base)
    dev = ei.ini_read(cfg).get("port", {}).get("device", "")
    iface = dev.split("iface=")[1].split(",")[0] if "iface=" in dev else "ustap0"
    stack_ip = ei.ini_read(cfg).get("ip", {}).get("addr", "10.77.0.2").split("/")[0]
    start_kernel_server(run)
    res, cap, log = run_loadgen_with_capture(args, run, cfg, iface)
    li.check_clean(res, 200)
    tfo = res.get("fastopen", {})
    ei.say(f"loadgen: {res['requests']} requests, {res['connects']} connections, "
           f"{tfo.get('syn_requests')} requests given to the SYN, "
           f"{tfo.get('cookie_requests')} cookie requests")
    ei.check(tfo.get("syn_requests", 0) >= res["requests"] // 2,
             f"only {tfo.get('syn_requests')} of {res['requests']} requests in the SYN")
    acked = counter(log, "tfo_cli_syn_data_acked")
    sent = counter(log, "tfo_cli_syn_data_sent")
    ei.say(f"counters: tfo_cli_syn_data_sent {sent}, tfo_cli_syn_data_acked {acked}, "
           f"tfo_cli_cookies_stored {counter(log, 'tfo_cli_cookies_stored')}")
    ei.check(acked > 0 and acked >= sent * 9 // 10,
             f"SYN data acked {acked} of {sent} sent")
    check_capture(cap, stack_ip)


CASES = {"tfo-linux-server": case_tfo_linux_server}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--config", required=True, help="tap config to copy")
    ap.add_argument("cases", nargs="+", help="case names: " + " ".join(CASES))
    args = ap.parse_args()
    ei.case_names(ap, args.cases, CASES, allow_all=False)
    if os.geteuid() != 0:
        ei.say("SKIP: needs root (namespaces, hugepage files)")
        return ei.SKIP
    ei.trap_signals(sigint=False)
    failed = 0
    for name in args.cases:
        ei.say(f"== {name}")
        try:
            with li.Run(name) as run:
                CASES[name](args, run)
        except ei.CaseFailed as e:
            ei.say(f"FAIL {name}: {e}")
            failed += 1
            continue
        ei.say(f"PASS {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    ei.run_main(main)
