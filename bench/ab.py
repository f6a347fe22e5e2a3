#!/usr/bin/env python3
"""Two (or more) builds of ours, alternated: A B A B ... (bench/PERF.md).

    sudo bench/ab.py DIR_A DIR_B [--wl close] [--pairs 5] [--secs 1]
    sudo bench/ab.py DIR --wl ka-64,idle --idle 32   # one build, two workloads
    sudo bench/ab.py DIR --wl ka-64 --families 4,6   # the same load over IPv4 and IPv6

Every (DIR, workload) combination is a variant; with several workloads they
must share a metric (ka-64 and idle: requests/s).  --idle N sets the idle
workload's idle connections (default bench.py's quick 20 K).  --families 4,6
makes each family a variant too: both ends have IPv4 and IPv6 addresses in
every run, and the load goes to the server's address of the variant's
family.

Each DIR holds us-loadgen and us-httpecho (a build tree's apps/ layout or
the two binaries side by side).  Runs bench.py's "ours" setup (memif, server
on core 1, client on core 0) for each variant in turn and prints each run,
the medians and the median of the pairwise ratios to the first variant,
with the load average next to each run: other jobs on this 2-core machine
move the numbers far more than most changes do.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def binaries(d):
    """(us-httpecho, us-loadgen) of a build tree or of a flat directory."""
    if os.path.exists(os.path.join(d, "apps", "httpecho", "us-httpecho")):
        return (os.path.join(d, "apps", "httpecho", "us-httpecho"),
                os.path.join(d, "apps", "loadgen", "us-loadgen"))
    return os.path.join(d, "us-httpecho"), os.path.join(d, "us-loadgen")


def name_of(v, wls, fams):
    """A variant as printed: its directory, and its workload and family
    when more than one is compared."""
    d, wl, fam = v
    return " ".join([d] + ([wl] if len(wls) > 1 else []) + ([f"ipv{fam}"] if len(fams) > 1 else []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--wl", default="close",
                    help="workload, or several comma-separated: " + ",".join(bench.WORKLOADS))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--secs", type=float, default=1.0)
    ap.add_argument("--idle", type=int, default=None, help="idle connections of --wl idle")
    ap.add_argument("--families", default="4", help="4, 6 or 4,6: the load's address families")
    a = ap.parse_args()
    # bench.Bench reads these from bench.py's own options: ours as configured.
    a.ours_extra_text, a.ours_extra_entries, a.mtu = "", [], None
    wls = a.wl.split(",")
    for wl in wls:
        if wl not in bench.WORKLOADS:
            ap.error(f"unknown workload {wl}")
    key = bench.WORKLOADS[wls[0]][3]
    if any(bench.WORKLOADS[wl][3] != key for wl in wls):
        ap.error("the workloads must share a metric")
    fams = [int(f) for f in a.families.split(",")]
    if any(f not in (4, 6) for f in fams):
        ap.error("--families takes 4 and 6")
    a.ip6 = 6 in fams
    variants = [(d, wl, f) for d in a.dirs for wl in wls for f in fams]
    res = {v: [] for v in variants}
    for i in range(a.pairs):
        for v in variants:
            d, wl, fam = v
            a.httpecho, a.loadgen = binaries(d)
            b = bench.Bench(a)
            b.idle_n = a.idle or bench.bench_more.IDLE_QUICK
            try:
                r = b.run_ours(wl, a.secs, family=fam)
            except (RuntimeError, OSError) as e:
                print(f"{i} {d} {wl} FAILED {str(e)[-300:]}", flush=True)
                continue
            finally:
                b.close()
            res[v].append(r)
            load = open("/proc/loadavg", encoding="ascii").read().split()[0]
            d = name_of(v, wls, fams)
            print(f"{i} {d} {key}={r[key]:.4g} p50={r['p50']:.4g}us p99={r['p99']:.4g}us p99.9={r['p999']:.4g}us "
                  f"errors={r['errors']} load={load}", flush=True)
    base = res[variants[0]]
    for v in variants:
        if not res[v]:
            continue
        ratios = [x[key] / y[key] for x, y in zip(res[v], base) if y[key]]
        name = name_of(v, wls, fams)
        print(f"median {name} {key}={statistics.median(r[key] for r in res[v]):.4g} "
              f"p99.9={statistics.median(r['p999'] for r in res[v]):.4g}us "
              f"n={len(res[v])} pairwise ratio to the first: "
              f"{statistics.median(ratios) if ratios else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
