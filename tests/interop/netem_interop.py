#!/usr/bin/env python3
"""us-netem as a program: the Linux kernel and us-httpecho through it.

    netem_interop.py --netem build/tools/netem/us-netem \\
                     --server build/apps/httpecho/us-httpecho CASE [CASE...]

The path of every case but bad-spec:

    kernel (netns, 10.78.0.1) -- tap -- us-netem -- memif -- us-httpecho (10.78.0.2)
                                        a2b: memif -> tap (stack -> kernel)
                                        b2a: tap -> memif (kernel -> stack)

us-httpecho is the memif server (socket-abstract=no, the socket in a temp
dir), us-netem the client; both run inside the case's own namespace with
their own --file-prefix, us-httpecho on core 1 and us-netem on core 0 (both
busy-poll).  us-netem's counters are read from what it prints on SIGTERM.
Everything is torn down pass or fail (processes, namespace, memif socket,
temp dir, DPDK runtime and hugepage files of both prefixes), also on Ctrl-C
or SIGTERM (meson's timeout).

No timing assertion is a throughput: delay asserts a lower bound (an RTT
through two 20 ms delays cannot be shorter than 40 ms), rate only prints
the throughput and checks the bottleneck's books balance.
Exit status: 0 all passed, 1 a case failed, 77 skipped (not root).
"""

import argparse
import hashlib
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402 - helpers shared with the echo cases
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))
import ops_test  # noqa: E402 - its telemetry client

KERNEL_ADDR = "10.78.0.1"
STACK_ADDR = "10.78.0.2"
NS_PREFIX = "usn-"          # namespaces are usn-<harness pid>-<random>
PORT = 8080
WAIT_S = 20.0

check, say, CaseFailed = ei.check, ei.say, ei.CaseFailed


class NetemEnv(ei.TcpPeer):
    """Namespace, us-httpecho on memif, us-netem between memif and a tap;
    IPv4 (echo_interop's http helpers talk to it as a TcpPeer)."""

    def __init__(self, args, a2b, b2a, echo_impair=None):
        self.args, self.a2b, self.b2a = args, a2b, b2a
        self.echo_impair = echo_impair or {}                 # us-httpecho's own [impair]
        self.ip = ei.tool("ip")
        tag = f"{os.getpid()}-{secrets.token_hex(3)}"
        self.ns = NS_PREFIX + tag
        self.iface = "usn" + secrets.token_hex(4)           # 11 characters
        self.prefixes = [f"usnetem_{tag}_echo".replace("-", "_"),
                         f"usnetem_{tag}_netem".replace("-", "_")]
        self.prefix = self.prefixes[0]                       # us-httpecho's (telemetry)
        self.tmpdir = None
        self.ns_made = False
        self.procs = {}                                      # name -> Popen
        self.logs = {}                                       # name -> path
        self.netem_rc = None
        self.echo_rc = None
        self.stack_ip, self.port = STACK_ADDR, PORT

    # -- used by cases (and by echo_interop's http helpers)
    def netns(self):
        return ei.in_netns(self.ns)

    def ns_cmd(self, cmd):
        return [self.ip, "netns", "exec", self.ns] + list(cmd)

    def ns_run(self, cmd, timeout=30, check_rc=True):
        return ei.run(self.ns_cmd(cmd), timeout=timeout, check_rc=check_rc)

    def log(self, name):
        try:
            with open(self.logs[name], errors="replace") as f:
                return f.read()
        except (KeyError, OSError):
            return ""

    # -- set up
    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self._teardown(failed=True)
            raise
        return self

    def _echo_config(self):
        path = os.path.join(self.tmpdir, "echo.ini")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"[eal]\nlcores = 1\nhugepages = off\nno_huge_mem_mb = 512\n"
                    f"file_prefix = {self.prefixes[0]}\n"
                    f"[port]\ndevice = net_memif0,role=server,socket={self.sock},"
                    f"socket-abstract=no\n[ip]\naddr = {STACK_ADDR}/24\n")
            if self.echo_impair:
                f.write("[impair]\n" + "".join(f"{k} = {v}\n"
                                                for k, v in self.echo_impair.items()))
        return path

    def _start(self, name, cmd):
        self.logs[name] = os.path.join(self.tmpdir, f"{name}.log")
        say(f"{name}: {shlex.join(cmd)}")
        with open(self.logs[name], "wb") as logf:
            self.procs[name] = subprocess.Popen(
                self.ns_cmd(cmd), stdout=logf, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)

    def _wait(self, pred, what, timeout=WAIT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise CaseFailed(f"{name} exited ({p.returncode}) before {what}")
            time.sleep(0.1)
        raise CaseFailed(f"timed out after {timeout:.0f}s waiting for {what}")

    def _setup(self):
        self.tmpdir = tempfile.mkdtemp(prefix="us-netem-test-")
        self.sock = os.path.join(self.tmpdir, "memif.sock")
        ei.run([self.ip, "netns", "add", self.ns])
        self.ns_made = True
        self.ns_run(["ip", "link", "set", "lo", "up"])
        self.ns_run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1"], check_rc=False)
        self._start("echo", shlex.split(self.args.server) + [
            "--config", self._echo_config(), "--port", str(PORT)])
        self._wait(lambda: "listening on" in self.log("echo"), "us-httpecho's 'listening on'")
        memif = f"net_memif0,role=client,socket={self.sock},socket-abstract=no"
        cmd = [self.args.netem, "--port0", memif, "--port1", f"net_tap0,iface={self.iface}",
               "--a2b", self.a2b, "--b2a", self.b2a, "--",
               "--file-prefix", self.prefixes[1]]  # core 0: us-netem's -l
        self._start("netem", cmd)
        self._wait(lambda: "us-netem: " in self.log("netem") and "<->" in self.log("netem"),
                   "us-netem's start line")
        self.ns_run(["ip", "addr", "add", f"{KERNEL_ADDR}/24", "dev", self.iface])
        self.ns_run(["ip", "link", "set", self.iface, "up"])
        # memif connects and ARP resolves through the bridge: one ping answered.
        self._wait(lambda: self.ns_run(["ping", "-n", "-c", "1", "-W", "1", STACK_ADDR],
                                       check_rc=False).returncode == 0,
                   f"a ping reply from {STACK_ADDR} through us-netem")

    # -- tear down
    def __exit__(self, exc_type, exc, tb):
        self._teardown(failed=exc_type is not None)
        return False

    def stop_netem(self):
        """SIGTERM us-netem (it prints its counters and exits 0); its log."""
        p = self.procs.get("netem")
        if p is not None and self.netem_rc is None:
            self.netem_rc = stop(p)
        return self.log("netem")

    def _teardown(self, failed):
        sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
        steps = [self.stop_netem, self.stop_echo, self._del_ns]
        try:
            for step in steps + ([self.dump_logs] if failed else []) + [self._rm_files]:
                try:
                    step()
                except Exception as e:  # noqa: BLE001 - teardown must go on
                    say(f"teardown: {step.__name__}: {e}")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def stop_echo(self):
        """SIGTERM us-httpecho (it prints its counters); its exit status."""
        if "echo" in self.procs and self.echo_rc is None:
            self.echo_rc = stop(self.procs["echo"])
        return self.echo_rc

    def _del_ns(self):
        if self.ns_made:
            ei.run([self.ip, "netns", "del", self.ns], check_rc=False)
            self.ns_made = False

    def _rm_files(self):
        for prefix in self.prefixes:
            for rt in ("/var/run/dpdk", "/run/dpdk"):
                shutil.rmtree(os.path.join(rt, prefix), ignore_errors=True)
            for mnt in hugetlbfs_mounts():
                for name in os.listdir(mnt):
                    if name.startswith(prefix):
                        os.unlink(os.path.join(mnt, name))
        if self.tmpdir and not os.environ.get("US_INTEROP_KEEP"):
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        elif self.tmpdir:
            say(f"kept {self.tmpdir}")

    def dump_logs(self, lines=25):
        for name in self.logs:
            text = self.log(name).splitlines()
            say(f"---- {name} log, last {min(lines, len(text))} lines ----")
            for line in text[-lines:]:
                say("  " + line)


def hugetlbfs_mounts():
    out = set()
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 2 and parts[2] == "hugetlbfs":
                out.add(parts[1])
    return sorted(out)


def stop(p, wait_s=10):
    """SIGTERM, SIGKILL after wait_s; the exit status (negative if killed)."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(wait_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    try:
        os.killpg(p.pid, signal.SIGKILL)  # anything left in its group
    except (ProcessLookupError, PermissionError):
        pass
    return p.returncode


def netem_counters(text):
    """{"a2b": {counter: value}, "b2a": {...}} from us-netem's report."""
    out = {"a2b": {}, "b2a": {}}
    for m in re.finditer(r"^(a2b|b2a)\.(\w+)\s+(\d+)\s+#", text, re.M):
        out[m.group(1)][m.group(2)] = int(m.group(3))
    return out


def stopped_counters(env):
    """Stop us-netem, demand exit 0 and a full report; its counters."""
    text = env.stop_netem()
    check(env.netem_rc == 0, f"us-netem exited {env.netem_rc} on SIGTERM (want 0)")
    c = netem_counters(text)
    for d in ("a2b", "b2a"):
        check("enqueued" in c[d] and "pending" in c[d], f"no {d} counters in: {text[-800:]!r}")
        say(f"us-netem {d}: " + ", ".join(f"{k} {v}" for k, v in c[d].items() if v))
    return c


def post(env, size, timeout=60):
    """A POST of size random bytes on a fresh connection: echoed byte-exact."""
    payload = os.urandom(size)
    req = (f"POST /netem HTTP/1.1\r\nHost: {STACK_ADDR}\r\n"
           f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
    t0 = time.monotonic()
    code, status, _, body = ei.http_exchange(env, req, timeout=timeout)
    dt = time.monotonic() - t0
    same = hashlib.sha256(body).digest() == hashlib.sha256(req).digest()
    say(f"{size} byte POST: {status!r}, {len(body)} bytes echoed in {dt:.2f}s "
        f"({len(body) * 8 / dt / 1e6:.1f} Mbit/s back), {'byte-exact' if same else 'DIFFERENT'}")
    check(code == 200, f"status {status!r}")
    check(len(body) == len(req) and same, f"echo differs: {len(body)} bytes for {len(req)}")
    return dt


def connect_ms(env, n=5):
    """TCP connect() times to the stack, in ms: SYN out, SYN-ACK back."""
    out = []
    for _ in range(n):
        with env.netns():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with s:
            s.settimeout(10)
            t0 = time.monotonic()
            s.connect((STACK_ADDR, PORT))
            out.append((time.monotonic() - t0) * 1000)
    return out


def balanced(c, d):
    """Every packet offered to a direction (and every copy made) was either
    dropped for a counted reason, delivered, or is still pending."""
    x = c[d]
    out = (x["dropped_random"] + x["dropped_burst"] + x["dropped_queue_full"] +
           x["dropped_limit"] + x["passed"] + x["pending"])
    check(x["enqueued"] + x["duplicated"] == out,
          f"{d}: enqueued {x['enqueued']} + duplicated {x['duplicated']} != drops + passed + "
          f"pending = {out}: {x}")


# ----------------------------------------------------------------------------
# Cases

def case_delay(env):
    """20 ms each way: no RTT below 40 ms (ping and TCP handshake), a POST
    comes back byte-exact."""
    p = env.ns_run(["ping", "-n", "-c", "5", "-i", "0.2", STACK_ADDR], timeout=30)
    rtt = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)", p.stdout)
    check(rtt, f"no ping summary: {p.stdout}")
    conn = connect_ms(env)
    say(f"ping rtt min/avg/max {rtt.group(1)}/{rtt.group(2)}/{rtt.group(3)} ms; TCP connect "
        + ", ".join(f"{t:.1f}" for t in conn) + " ms")
    check(float(rtt.group(1)) >= 40.0, f"ping RTT {rtt.group(1)} ms through 2 x 20 ms delay")
    check(min(conn) >= 40.0, f"TCP connect in {min(conn):.1f} ms through 2 x 20 ms delay")
    post(env, 256 << 10)
    c = stopped_counters(env)
    for d in ("a2b", "b2a"):
        check(c[d]["delayed"] > 0 and c[d]["passed"] > 0, f"{d}: nothing delayed: {c[d]}")
        check(c[d]["dropped_random"] == 0, f"{d}: drops without loss: {c[d]}")
        balanced(c, d)


def case_loss(env):
    """2% loss each way: a 1 MiB POST still echoes byte-exact; us-netem
    counted drops (each way that carried enough packets to expect some: at
    2%, 500 packets without a drop has odds of 4e-5)."""
    post(env, 1 << 20, timeout=120)
    c = stopped_counters(env)
    for d in ("a2b", "b2a"):
        balanced(c, d)
        if c[d]["enqueued"] >= 500:
            check(c[d]["dropped_random"] > 0, f"{d}: no drop in {c[d]['enqueued']} packets")
    check(c["a2b"]["dropped_random"] + c["b2a"]["dropped_random"] > 0, "no drop at all")


def case_rate(env):
    """A 20 Mbit/s bottleneck with a 64 KiB queue towards the kernel: a 4 MiB
    POST completes; the throughput is printed, not asserted; the books of the
    bottleneck balance."""
    dt = post(env, 4 << 20, timeout=120)
    c = stopped_counters(env)
    say(f"echo through rate=20mbit: {(4 << 20) * 8 / dt / 1e6:.1f} Mbit/s (printed only); "
        f"tail drops at the bottleneck: {c['a2b']['dropped_queue_full']}")
    for d in ("a2b", "b2a"):
        balanced(c, d)
    check(c["b2a"]["dropped_queue_full"] == 0, f"b2a has no bottleneck but dropped: {c['b2a']}")


def case_inplace_memif(env):
    """The stack's own [impair] on its memif port (us-netem passes frames
    untouched): a 1 MiB POST echoes byte-exact, the stack's stage counted
    drops and delays both ways, us-netem none."""
    post(env, 1 << 20, timeout=120)
    tel = ops_test.TelConn(env)
    try:
        st = tel.query("/userstack/stats")
    finally:
        tel.close()
    for d in ("rx", "tx"):
        t = st.get(f"impair_{d}")
        check(isinstance(t, dict) and t.get("enqueued", 0) > 0,
              f"/userstack/stats has no impair_{d} with packets: {t}")
    say(f"telemetry: impair_rx {st['impair_rx']}")
    c = stopped_counters(env)
    check(env.stop_echo() == 0, f"us-httpecho exited {env.echo_rc} on SIGTERM")
    text = env.log("echo")
    got = {k: int(v) for k, v in re.findall(r"^(impair_[rt]x_\w+) (\d+)  #", text, re.M)}
    say("us-httpecho: " + ", ".join(f"{k} {v}" for k, v in got.items() if v))
    for d in ("rx", "tx"):
        check(got.get(f"impair_{d}_dropped_random", 0) > 0, f"no {d} drop counted: {got}")
        check(got.get(f"impair_{d}_delayed", 0) > 0, f"no {d} delay counted: {got}")
    for d in ("a2b", "b2a"):
        check(c[d]["dropped_random"] == 0 and c[d]["delayed"] == 0, f"us-netem {d}: {c[d]}")


def case_bad_spec(args):
    """Bad specs on the command line: exit 2 before EAL starts, with the
    option and the reason on stderr."""
    bad = [(["--a2b", "delay=20ms,loss=2"],
            "us-netem: --a2b: impairment item 2 'loss=2': expected a percentage"),
           (["--b2a", "jitter=1ms,bogus=1"],
            "us-netem: --b2a: impairment item 2 'bogus=1': unknown key"),
           (["--a2b", "queue=64kb"], "us-netem: --a2b: impairment: 'queue' needs 'rate'")]
    for opts, want in bad:
        p = subprocess.run([args.netem] + opts, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30, stdin=subprocess.DEVNULL)
        say(f"us-netem {shlex.join(opts)}: exit {p.returncode}: {p.stderr.strip()}")
        check(p.returncode == 2, f"exit {p.returncode}, want 2")
        check(want in p.stderr, f"stderr lacks {want!r}")
        check("EAL" not in p.stderr + p.stdout, "EAL started before the spec was checked")


# name -> (function, a2b, b2a[, us-httpecho's [impair]]); a2b None: no environment
CASES = {
    "delay": (case_delay, "delay=20ms", "delay=20ms"),
    "loss": (case_loss, "loss=2%,seed=11", "loss=2%,seed=12"),
    "rate": (case_rate, "rate=20mbit,queue=64kb", "none"),
    "bad-spec": (case_bad_spec, None, None),
    "inplace-memif": (case_inplace_memif, "none", "none",
                      {"rx": "loss=2%,delay=5ms,seed=21", "tx": '"loss=2%,delay=5ms,seed=22"'}),
}


def run_case(args, name):
    fn, a2b, b2a, *echo_impair = CASES[name]
    say(f"== {name}")
    t0 = time.monotonic()
    try:
        if a2b is None:
            fn(args)
        else:
            with NetemEnv(args, a2b, b2a, *echo_impair) as env:
                fn(env)
    except CaseFailed as e:
        say(f"FAIL {name}: {e}")
        return 1
    except Exception:  # noqa: BLE001 - a harness bug fails the case, not the run
        say(f"FAIL {name}: unexpected error\n{traceback.format_exc()}")
        return 1
    say(f"PASS {name} ({time.monotonic() - t0:.1f}s)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--netem", required=True, help="the us-netem binary")
    ap.add_argument("--server", required=True, help="us-httpecho command line")
    ap.add_argument("cases", nargs="+", help="case names, or 'all': " + " ".join(CASES))
    args = ap.parse_args()
    names = ei.case_names(ap, args.cases, CASES)
    if os.geteuid() != 0:
        say("SKIP: needs root (network namespaces, tap)")
        return ei.SKIP
    for exe in (args.netem, shlex.split(args.server)[0]):
        if not os.access(exe, os.X_OK):
            say(f"FAIL: {exe} not found or not executable (build it first)")
            return 1
    ei.trap_signals()
    sweep_stale(ei.tool("ip"))
    failed = sum(run_case(args, n) for n in names)
    if len(names) > 1:
        say(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


def sweep_stale(ip):
    """usn-<pid>-* namespaces whose harness is gone (e.g. after SIGKILL)."""
    p = ei.run([ip, "netns", "list"], check_rc=False)
    for line in p.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(rf"^{NS_PREFIX}(\d+)-", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            say(f"note: deleting stale namespace {name}")
            ei.run([ip, "netns", "del", name], check_rc=False)


if __name__ == "__main__":
    ei.run_main(main)
