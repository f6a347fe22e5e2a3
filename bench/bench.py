#!/usr/bin/env python3
"""userstack against the Linux kernel and against dpdk-testpmd, in one run.

Run it through bench/run.sh (which builds first); see bench/README.md.

Every measurement runs pinned: the server on core 1, the client on core 0.
  ours      us-loadgen <-> us-httpecho over a direct net_memif link
  k-lo      wrk -> bench/kserver (epoll, kernel sockets) over loopback
  k-veth    the same over a veth pair between two network namespaces
  ceiling   dpdk-testpmd io-forward on the memif link's server end, fed by a
            second dpdk-testpmd in flowgen mode (packets/s forwarded)
  wire      (--wire) us-loadgen -> testpmd io-forward -> us-httpecho: three
            busy pollers on two cores, labelled oversubscribed
  idle, flood, memory per idle connection: bench_more.py

The machine is shared and memif rates swing: the systems alternate within
each pair (ours, k-lo, k-veth, ours, ...), and the report gives medians and
the median of the pairwise ratios, never a single run.
"""

import argparse
import datetime
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_more  # noqa: E402
import bench_report  # noqa: E402
import ours_ini  # noqa: E402

SERVER_CPU, CLIENT_CPU = "1", "0"
PORT = 8080
MEMIF_SRV, MEMIF_CLI = "10.79.0.2", "10.79.0.1"
# IPv6 on the same link (bench/ab.py --families 4,6): both ends get it in
# every run of such a comparison, whichever family the run's target uses.
MEMIF_SRV6, MEMIF_CLI6 = "fd00:79::2", "fd00:79::1"
VETH_SRV, VETH_CLI = "10.89.0.2", "10.89.0.1"

# name -> (POST body bytes or 0 for GET, keep-alive, connections, metric)
WORKLOADS = {
    "ka-1": (1, True, 32, "rps"),
    "ka-64": (64, True, 32, "rps"),
    "ka-1k": (1024, True, 32, "rps"),
    "close": (0, False, 32, "cps"),
    "bulk": (1 << 20, True, 1, "gbps"),
    "bulk-4": (1 << 20, True, 4, "gbps"),
    "bulk-16": (1 << 20, True, 16, "gbps"),
    # ka-64 with 100 K (--quick: 20 K) idle connections open (bench_more.py)
    "idle": (64, True, 32, "rps"),
    # ka-64 over af_packet veths on a bridge, with and without junk (bench_more.py)
    "flood": (64, True, 32, "rps"),
}
QUICK_WORKLOADS = ("ka-64", "close", "bulk", "bulk-4", "idle", "flood")


def say(msg):
    print(msg, flush=True)


class Bench:
    """Processes, namespaces and DPDK files of the run; all removed at exit."""

    def __init__(self, args):
        self.a = args
        self.tag = f"usb{os.getpid()}"
        self.tmp = tempfile.mkdtemp(prefix="us-bench-")
        self.procs = []
        self.prefixes = []
        self.ns = []
        self.n = 0
        self.ours_extra = args.ours_extra_entries
        # the MTU of each link, by link: memif = what bench wrote in ours'
        # configs (or the stack's default); the kernel's links as read back
        self.mtus = {"memif": args.mtu or ours_ini.MTU_DEFAULT}

    # -- process plumbing ------------------------------------------------
    def start(self, cmd, log, ns=None, env=None):
        """env: variables added to ours (e.g. LD_PRELOAD, preload_bench.py)."""
        if ns:
            cmd = ["ip", "netns", "exec", ns] + cmd
        f = open(os.path.join(self.tmp, log), "wb")
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env={**os.environ, **env} if env else None)
        self.procs.append((p, f))
        return p

    def log(self, name):
        try:
            with open(os.path.join(self.tmp, name), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    @staticmethod
    def stop(p, sig=signal.SIGTERM, wait=10):
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        return p.returncode

    def wait_log(self, p, log, text, timeout=20):
        t_end = time.monotonic() + timeout
        while time.monotonic() < t_end:
            if text in self.log(log):
                return
            if p.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"{log}: no '{text}': {self.log(log)[-600:]}")

    def prefix(self, what):
        self.n += 1
        p = f"{self.tag}_{what}{self.n}"
        self.prefixes.append(p)
        return p

    def drop_prefixes(self):
        for prefix in self.prefixes:
            for rt in ("/var/run/dpdk", "/run/dpdk"):
                shutil.rmtree(os.path.join(rt, prefix), ignore_errors=True)
            if os.path.isdir("/dev/hugepages"):
                for fn in os.listdir("/dev/hugepages"):
                    if fn.startswith(prefix):
                        os.unlink(os.path.join("/dev/hugepages", fn))
        self.prefixes = []

    def close(self):
        for p, f in self.procs:
            try:
                self.stop(p, signal.SIGKILL, 5)
            except (ProcessLookupError, PermissionError):
                pass
            f.close()
        self.procs = []
        for ns in self.ns:
            subprocess.run(["ip", "netns", "del", ns], check=False, stderr=subprocess.DEVNULL)
        self.drop_prefixes()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def reap(self):
        """Closes finished processes' logs between runs."""
        keep = []
        for p, f in self.procs:
            if p.poll() is None:
                keep.append((p, f))
            else:
                f.close()
        self.procs = keep
        self.drop_prefixes()

    # -- userstack ---------------------------------------------------------
    def us_config(self, name, addr, lcore, device, mtu=None, tcp=None, addr6=None):
        """One end's config file: bench's sections (ours_ini) with the
        --ours-extra fragment merged in."""
        self.last_prefix = self.prefix(name)
        sections = ours_ini.ours_sections(device, lcore, self.last_prefix, addr, mtu=mtu, tcp=tcp,
                                          addr6=addr6)
        path = os.path.join(self.tmp, f"{name}.ini")
        with open(path, "w", encoding="utf-8") as f:
            f.write(ours_ini.config_text(sections, self.ours_extra))
        return path

    def loadgen(self, wl, cfg, secs, target=MEMIF_SRV, ns=None, idle=None, path=None):
        """idle: (n, server process, server prefix): n idle connections
        first, the server's memory sampled around their opening.  path:
        GET it (wl's connections and keep-alive) instead of wl's request."""
        body, keepalive, conns, _ = WORKLOADS[wl]
        if path:
            body = 0
        out = os.path.join(self.tmp, "lg.json")
        cmd = ["taskset", "-c", CLIENT_CPU, self.a.loadgen, "--config", cfg,
               "--target", f"{target}:{PORT}", "--connections", str(conns),
               "--duration", str(secs), "--delay", "1", "--request-size", str(body),
               "--quiet", "--stats", "--json", out] + (["--path", path] if path else [])
        if not keepalive:
            cmd.append("--close")
        if idle:
            cmd += ["--idle", str(idle[0]), "--idle-ports", str(bench_more.IDLE_PORTS),
                    "--idle-wait", "1"]
        p = self.start(cmd, "lg.log", ns=ns)
        mem = bench_more.ours_idle_watch(self, p, idle[1], idle[2], idle[0]) if idle else {}
        try:
            p.wait(secs + 40)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError("us-loadgen did not finish") from e
        text = self.log("lg.log")
        if p.returncode != 0:
            raise RuntimeError(f"us-loadgen exited {p.returncode}: {text[-600:]}")
        with open(out, encoding="utf-8") as f:
            res = json.load(f)
        stats = dict(re.findall(r"^(nic\.\w+) (\d+)", text, re.M))
        pkts = int(stats.get("nic.rx_pkts", 0)) + int(stats.get("nic.tx_pkts", 0))
        return {
            "rps": res["requests_per_s"], "cps": res["connects_per_s"],
            "gbps": res["bytes_received"] * 8 / res["duration_s"] / 1e9,
            "p50": res["latency_us"]["p50"], "p99": res["latency_us"]["p99"],
            "p999": res["latency_us"]["p99.9"], "errors": res["errors"]["total"],
            # packets each way per second: the unit of testpmd's forward rate
            "pps": pkts / 2 / res["duration_s"],
            **mem,
        }

    def run_ours(self, wl, secs, wire=False, family=4):
        """family 6: the load over IPv6 (both ends configured for it, as
        they are for family 4 when a.ip6 is set)."""
        ip6 = family == 6 or getattr(self.a, "ip6", False)
        idle = self.idle_n if wl == "idle" else 0
        tcp = {"max_conns": idle + 8192} if idle else None
        sock = os.path.join(self.tmp, f"m{self.n}.sock")
        srv_sock, tp = sock, None
        if wire:
            srv_sock = sock + ".b"
            tp = self.testpmd_wire(sock, srv_sock)
        mtu = self.a.mtu
        srv = self.us_config("srv", MEMIF_SRV, SERVER_CPU,
                             ours_ini.memif_device("client" if wire else "server", srv_sock, mtu),
                             mtu=mtu, tcp=tcp, addr6=MEMIF_SRV6 if ip6 else None)
        srv_prefix = self.last_prefix
        cli = self.us_config("cli", MEMIF_CLI, CLIENT_CPU,
                             ours_ini.memif_device("client", sock, mtu), mtu=mtu, tcp=tcp,
                             addr6=MEMIF_CLI6 if ip6 else None)
        target = f"[{MEMIF_SRV6}]" if family == 6 else MEMIF_SRV
        ports = ["--ports", str(bench_more.IDLE_PORTS + 1)] if idle else []
        echo = self.start(["taskset", "-c", SERVER_CPU, self.a.httpecho, "--config", srv,
                           "--port", str(PORT)] + ports, "echo.log")
        try:
            self.wait_log(echo, "echo.log", "listening on")
            r = self.loadgen(wl, cli, secs, target=target,
                             idle=(idle, echo, srv_prefix) if idle else None)
            r["mtu"] = self.mtus["memif"]
            return r
        finally:
            self.stop(echo)
            if tp:
                self.stop(tp, signal.SIGINT)
            self.reap()

    def run_ours_flood(self, secs, flood):
        """us-httpecho and us-loadgen on net_af_packet over the flood bridge,
        with (flood) or without the junk sender."""
        ifs = self.flood_ifs
        srv_ip, cli_ip = bench_more.FLOOD_NET["us"]
        afp = f"framecnt={bench_more.FLOOD_AFP_FRAMES}"
        srv = self.us_config("fsrv", srv_ip, SERVER_CPU,
                             f"net_af_packet0,iface=us_s,qpairs=1,{afp}")
        cli = self.us_config("fcli", cli_ip, CLIENT_CPU,
                             f"net_af_packet0,iface=us_c,qpairs=1,{afp}")
        echo = self.start(["taskset", "-c", SERVER_CPU, self.a.httpecho, "--config", srv,
                           "--port", str(PORT)], "echo.log", ns=ifs["us_s"][0])
        junk = None
        try:
            self.wait_log(echo, "echo.log", "listening on")
            if flood:
                junk = bench_more.start_junk(self, ifs, "decoy" if flood == "decoy" else "us_s",
                                             secs + 1.5)
            r = self.loadgen("flood", cli, secs, target=srv_ip, ns=ifs["us_c"][0])
        finally:
            if junk:
                self.stop(junk, wait=30)
            self.stop(echo)
            self.reap()
        ctr = {k: int(v) for k, v in re.findall(r"^([a-z][a-z0-9_.]*) (\d+)", self.log("echo.log"),
                                                 re.M)}
        r["drops"] = {k: v for k, v in ctr.items() if v and bench_more.OURS_DROP_RE.search(k)}
        r["mtu"] = self.mtus["flood-us"]
        if junk:
            r["junk_sent"], r["junk_secs"] = bench_more.junk_sent(self.log("junk.log"))
        return r

    # -- kernel ------------------------------------------------------------
    def make_veth(self):
        base = f"usb{os.getpid() % 100000}{secrets.token_hex(2)}"
        ns_s, ns_c = base + "s", base + "c"
        for ns in (ns_s, ns_c):
            subprocess.run(["ip", "netns", "add", ns], check=True)
            self.ns.append(ns)
            subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        va, vb = f"vs{base[-8:]}", f"vc{base[-8:]}"
        subprocess.run(["ip", "link", "add", va, "netns", ns_s, "type", "veth", "peer", "name",
                        vb, "netns", ns_c], check=True)
        for ns, dev, addr in ((ns_s, va, VETH_SRV), (ns_c, vb, VETH_CLI)):
            subprocess.run(["ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev], check=True)
            if self.a.mtu:
                subprocess.run(["ip", "-n", ns, "link", "set", "dev", dev, "mtu",
                                str(self.a.mtu)], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        self.veth = (ns_s, ns_c)
        # a path takes the smaller of its two ends
        self.mtus["veth"] = min(link_mtu(va, ns_s), link_mtu(vb, ns_c))

    def wrk_script(self, body):
        path = os.path.join(self.tmp, f"post{body}.lua")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(f'wrk.method = "POST"\nwrk.body = string.rep("x", {body})\n')
        return path

    def run_kernel(self, wl, secs, link):
        """link: lo, veth, or flood / flood-clean (the flood bridge, with or
        without junk); wl idle: the idle connections held first (lo)."""
        body, keepalive, conns, _ = WORKLOADS[wl]
        ns_s, ns_c, addr = None, None, "127.0.0.1"
        if link == "veth":
            (ns_s, ns_c), addr = self.veth, VETH_SRV
        elif link.startswith("flood"):
            ns_s, ns_c = self.flood_ifs["k_s"][0], self.flood_ifs["k_c"][0]
            addr = bench_more.FLOOD_NET["k"][0]
        idle = self.idle_n if wl == "idle" else 0
        port = PORT + 1 + self.n % 1000
        self.n += 1
        cmd = ["taskset", "-c", SERVER_CPU, self.a.kserver, "--port", str(port)]
        srv = self.start(cmd, "ks.log", ns=ns_s)
        holder = junk = None
        extra = {}
        try:
            self.wait_log(srv, "ks.log", "listening on")
            if idle:
                holder, extra = bench_more.kernel_idle_open(self, self.a.kserver, idle)
            if link == "flood":
                snmp0 = bench_more.snmp(ns_s)
                junk = bench_more.start_junk(self, self.flood_ifs, "k_s", secs + 1.5)
                time.sleep(0.5)
            cmd = ["taskset", "-c", CLIENT_CPU, "wrk", "-t1", f"-c{conns}", f"-d{max(1, round(secs))}s",
                   "--latency", "--timeout", "5s"]
            if body:
                cmd += ["-s", self.wrk_script(body)]
            if not keepalive:
                cmd += ["-H", "Connection: close"]
            p = self.start(cmd + [f"http://{addr}:{port}/"], "wrk.log", ns=ns_c)
            p.wait(secs + 30)
            r = parse_wrk(self.log("wrk.log"), body)
        finally:
            if holder:
                bench_more.kernel_idle_close(self, holder)
            if junk:
                self.stop(junk, wait=30)
            self.stop(srv)
            self.reap()
        r.update(extra)
        r["mtu"] = self.mtus["flood-k" if link.startswith("flood") else link]
        if junk:
            snmp1 = bench_more.snmp(ns_s)
            r["drops"] = {k: snmp1.get(k, 0) - snmp0.get(k, 0)
                          for k in bench_more.KERNEL_DROP_KEYS
                          if snmp1.get(k, 0) - snmp0.get(k, 0)}
            r["junk_sent"], r["junk_secs"] = bench_more.junk_sent(self.log("junk.log"))
        return r

    # -- testpmd -----------------------------------------------------------
    def testpmd(self, cpu, vdevs, mode, log):
        cmd = ["dpdk-testpmd", "--lcores", f"(0,1)@{cpu}", "--no-huge", "-m", "256",
               "--file-prefix", self.prefix("tp"), "--no-pci", "--log-level", "warning"]
        for v in vdevs:
            cmd += ["--vdev", v]
        cmd += ["--", f"--forward-mode={mode}", "--auto-start", "--stats-period", "1",
                "--nb-cores=1", "--total-num-mbufs=8192", "--rxq=1", "--txq=1"]
        return self.start(cmd, log)

    def run_ceiling(self, secs, tries=2):
        """testpmd io-forward's rate; a second try when the memif link came
        up too late for a measurement (seen on the loaded machine)."""
        for attempt in range(tries):
            sock = os.path.join(self.tmp, f"tp{self.n}.sock")
            fwd = self.testpmd(SERVER_CPU, [f"net_memif0,role=server,socket={sock},"
                                            "socket-abstract=no"], "io", "tpa.log")
            try:
                time.sleep(1.0)
                gen = self.testpmd(CLIENT_CPU, [f"net_memif0,role=client,socket={sock},"
                                                "socket-abstract=no"], "flowgen", "tpb.log")
                time.sleep(secs + 2.5)
                self.stop(gen, signal.SIGINT)
            finally:
                self.stop(fwd, signal.SIGINT)
                self.reap()
            rates = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", self.log("tpa.log"))]
            rates = [r for r in rates if r > 0]
            if len(rates) >= 3:
                rates = rates[1:-1]  # drop the partial first and last second
            if rates:
                return {"pps": statistics.median(rates), "tries": attempt + 1}
        raise RuntimeError(f"testpmd forwarded nothing: {self.log('tpa.log')[-600:]}")

    def testpmd_wire(self, sock_a, sock_b):
        """io-forward between two memif server ports; us-loadgen joins a, us-httpecho b."""
        tp = self.testpmd(SERVER_CPU, [f"net_memif0,role=server,socket={sock_a},"
                                       "socket-abstract=no,id=0",
                                       f"net_memif1,role=server,socket={sock_b},"
                                       "socket-abstract=no,id=0"], "io", "wire.log")
        time.sleep(1.0)
        return tp


def link_mtu(dev, ns=None):
    """The MTU of a kernel link, as `ip link show` gives it."""
    cmd = ["ip"] + (["-n", ns] if ns else []) + ["-o", "link", "show", "dev", dev]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"\bmtu (\d+)", out)
    if not m:
        raise RuntimeError(f"{' '.join(cmd)}: no MTU in {out!r}")
    return int(m.group(1))


def parse_wrk(text, body):
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not m:
        raise RuntimeError(f"wrk: no result: {text[-600:]}")
    rps = float(m.group(1))

    def lat(pct):
        m2 = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\b", text, re.M)
        if not m2:
            return None
        return float(m2.group(1)) * {"us": 1, "ms": 1e3, "s": 1e6}[m2.group(2)]

    errs = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
    m3 = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errs += int(m3.group(1)) if m3 else 0
    return {"rps": rps, "cps": rps, "gbps": rps * body * 8 / 1e9, "p50": lat(50),
            "p99": lat(99), "p999": None, "errors": errs}


def machine():
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""
    lscpu = dict(re.findall(r"^([^:]+):\s+(.*)$", out(["lscpu"]), re.M))
    return {
        "host": socket.gethostname(),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "cpu": lscpu.get("Model name", "?"),
        "cpus": lscpu.get("CPU(s)", "?"),
        "hypervisor": lscpu.get("Hypervisor vendor", "none"),
        "kernel": out(["uname", "-r"]),
        "dpdk": out(["pkg-config", "--modversion", "libdpdk"]),
        "wrk": out(["wrk", "-v"]).splitlines()[0] if out(["wrk", "-v"]) else "?",
        "commit": out(["git", "-C", HERE, "rev-parse", "--short", "HEAD"]),
        # the machine is shared: its load when the run ended, next to the numbers
        "loadavg": open("/proc/loadavg", encoding="utf-8").read().split(" ", 3)[:3],
    }


def attempt(runs, key, fn, pair):
    try:
        r = fn()
        r["pair"] = pair
        runs.setdefault(key, []).append(r)
        say(f"  {key:<16} " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                        for k, v in r.items() if isinstance(v, (int, float))))
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        runs.setdefault(key + ":failed", []).append(str(e)[-300:])
        say(f"  {key:<16} FAILED: {str(e)[-300:]}")


def run_flood_pair(b, runs, secs, i):
    """Ours and the kernel on the flood bridge, each without and with junk."""
    attempt(runs, "flood/ours-clean", lambda: b.run_ours_flood(secs, False), i)
    attempt(runs, "flood/ours", lambda: b.run_ours_flood(secs, True), i)
    if b.a.flood_decoy:
        attempt(runs, "flood/ours-decoy", lambda: b.run_ours_flood(secs, "decoy"), i)
    attempt(runs, "flood/k-veth-clean", lambda: b.run_kernel("flood", secs, "flood-clean"), i)
    attempt(runs, "flood/k-veth", lambda: b.run_kernel("flood", secs, "flood"), i)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See bench/README.md.")
    ap.add_argument("--build", help="build dir with apps/ and bench/kserver (run.sh gives it)")
    ap.add_argument("--quick", action="store_true",
                    help=f"{', '.join(QUICK_WORKLOADS)}; 1 s runs, idle "
                    f"{bench_more.IDLE_QUICK} connections")
    ap.add_argument("--pairs", type=int, default=5, help="alternating pairs (default 5)")
    ap.add_argument("--secs", type=float, default=None,
                    help="seconds per run (default 3, --quick 1)")
    ap.add_argument("--workloads", default=None, help="comma-separated: " + ",".join(WORKLOADS))
    ap.add_argument("--no-veth", action="store_true", help="no kernel veth rows")
    ap.add_argument("--no-ceiling", action="store_true", help="no testpmd ceiling run")
    ap.add_argument("--wire", action="store_true", help="also testpmd as the wire (ka-64)")
    ap.add_argument("--idle", type=int, default=None,
                    help=f"idle connections of the idle workload (default {bench_more.IDLE_FULL}, "
                    f"--quick {bench_more.IDLE_QUICK})")
    ap.add_argument("--flood-pps", type=int, default=bench_more.FLOOD_PPS,
                    help="junk frames per second of the flood workload")
    ap.add_argument("--flood-decoy", action="store_true",
                    help="flood: also ours with the junk sent to no server (the client's share)")
    ap.add_argument("--afp-frames", type=int, default=bench_more.FLOOD_AFP_FRAMES,
                    help="af_packet RX ring frames of ours in the flood (PMD framecnt)")
    ap.add_argument("--mtu", type=int, default=None, metavar="N",
                    help="ours: [port] mtu = N and memif buffers (bsize=) for the frame; "
                    "k-veth: both veth ends at N; loopback keeps its own (65536)")
    ap.add_argument("--ours-extra", metavar="FILE", default=None,
                    help="an INI fragment merged into ours' configs (A/B runs of settings)")
    ap.add_argument("--print-config", action="store_true",
                    help="print ours' two memif configs as a run writes them, and exit")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), metavar="DIR",
                    help="where the .md, .json and .png go (default bench/results)")
    a = ap.parse_args()
    if a.mtu is not None and ours_ini.mtu_problem(a.mtu):
        ap.error(f"--mtu {a.mtu}: {ours_ini.mtu_problem(a.mtu)}")
    if a.mtu and a.wire:
        ap.error("--mtu with --wire: testpmd's io-forward between the memif ports keeps "
                 "its 2048-byte buffers")
    a.ours_extra_text, a.ours_extra_entries = "", []
    if a.ours_extra:
        try:
            with open(a.ours_extra, encoding="utf-8") as f:
                a.ours_extra_text = f.read()
            a.ours_extra_entries = ours_ini.parse_fragment(a.ours_extra_text, a.ours_extra)
        except (OSError, ValueError) as e:
            ap.error(f"--ours-extra: {e}")
    if not a.build and not a.print_config:
        ap.error("--build DIR is required (bench/run.sh gives it)")
    return a


def print_configs(a):
    """--print-config: ours' server and client configs over memif, as run_ours
    writes them (SOCK and PREFIX stand for the run's own)."""
    for what, role, addr, cpu in (("us-httpecho", "server", MEMIF_SRV, SERVER_CPU),
                                  ("us-loadgen", "client", MEMIF_CLI, CLIENT_CPU)):
        sections = ours_ini.ours_sections(ours_ini.memif_device(role, "SOCK", a.mtu), cpu,
                                          "PREFIX", addr, mtu=a.mtu)
        say(f"# {what}\n" + ours_ini.config_text(sections, a.ours_extra_entries))


def set_up_links(b, a, wls):
    """The kernel's links (veth, the flood bridge) and every link's MTU."""
    b.mtus["lo"] = link_mtu("lo")
    if not a.no_veth:
        b.make_veth()
    if "flood" in wls:
        b.flood_ifs = ifs = bench_more.make_flood_net(b)
        for key, srv, cli in (("flood-us", "us_s", "us_c"), ("flood-k", "k_s", "k_c")):
            b.mtus[key] = min(link_mtu(srv, ifs[srv][0]), link_mtu(cli, ifs[cli][0]))


def main():
    a = parse_args()
    if a.print_config:
        print_configs(a)
        return 0
    a.httpecho = os.path.join(a.build, "apps", "httpecho", "us-httpecho")
    a.loadgen = os.path.join(a.build, "apps", "loadgen", "us-loadgen")
    a.kserver = os.path.join(a.build, "bench", "kserver")
    secs = a.secs or (1.0 if a.quick else 3.0)
    wls = a.workloads.split(",") if a.workloads else (QUICK_WORKLOADS if a.quick
                                                      else tuple(WORKLOADS))
    links = ["lo"] + ([] if a.no_veth else ["veth"])
    b = Bench(a)
    bench_more.FLOOD_PPS = a.flood_pps
    bench_more.FLOOD_AFP_FRAMES = a.afp_frames
    b.idle_n = a.idle or (bench_more.IDLE_QUICK if a.quick else bench_more.IDLE_FULL)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    runs = {}
    try:
        set_up_links(b, a, wls)
        for i in range(a.pairs):
            say(f"== pair {i + 1}/{a.pairs}")
            for wl in wls:
                if wl == "flood":
                    run_flood_pair(b, runs, secs, i)
                    continue
                attempt(runs, f"{wl}/ours", lambda: b.run_ours(wl, secs), i)
                for link in (["lo"] if wl == "idle" else links):
                    attempt(runs, f"{wl}/k-{link}", lambda: b.run_kernel(wl, secs, link), i)
            if a.wire:
                attempt(runs, "ka-64/wire", lambda: b.run_ours("ka-64", secs, wire=True), i)
            if not a.no_ceiling:
                attempt(runs, "ceiling", lambda: b.run_ceiling(max(secs, 2.0)), i)
    finally:
        b.close()
    doc = {"machine": machine(), "secs": secs, "pairs": a.pairs, "idle_n": b.idle_n,
           "quick": a.quick,
           "flood_pps": bench_more.FLOOD_PPS,
           # ours_mtu_written: --mtu given ([port] mtu in ours' configs, memif bsize)
           "mtu": dict(b.mtus), "ours_mtu_written": bool(a.mtu),
           "memif_bsize": ours_ini.memif_bsize(a.mtu) if a.mtu else ours_ini.MEMIF_BSIZE_DEFAULT,
           "ours_extra": {"file": a.ours_extra, "text": a.ours_extra_text} if a.ours_extra
           else None,
           "workloads": {w: WORKLOADS[w] for w in wls}, "runs": runs}
    doc["summary"] = bench_report.summarize(doc)
    paths = bench_report.write(doc, a.out)
    say(bench_report.markdown(doc))
    say("written: " + " ".join(paths))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        say(f"interrupted ({e}): cleaned up")
        sys.exit(130)
