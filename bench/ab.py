#!/usr/bin/env python3
"""Two (or more) builds of ours, alternated: A B A B ... (bench/PERF.md).

    sudo bench/ab.py DIR_A DIR_B [--wl close] [--pairs 5] [--secs 1]

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--wl", default="close", choices=sorted(bench.WORKLOADS))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--secs", type=float, default=1.0)
    a = ap.parse_args()
    key = bench.WORKLOADS[a.wl][3]
    res = {d: [] for d in a.dirs}
    for i in range(a.pairs):
        for d in a.dirs:
            a.httpecho, a.loadgen = binaries(d)
            b = bench.Bench(a)
            try:
                r = b.run_ours(a.wl, a.secs)
            except (RuntimeError, OSError) as e:
                print(f"{i} {d} FAILED {str(e)[-300:]}", flush=True)
                continue
            finally:
                b.close()
            res[d].append(r)
            load = open("/proc/loadavg", encoding="ascii").read().split()[0]
            print(f"{i} {d} {key}={r[key]:.4g} p50={r['p50']:.4g}us p99={r['p99']:.4g}us "
                  f"errors={r['errors']} load={load}", flush=True)
    base = res[a.dirs[0]]
    for d in a.dirs:
        if not res[d]:
            continue
        ratios = [x[key] / y[key] for x, y in zip(res[d], base) if y[key]]
        print(f"median {d} {key}={statistics.median(r[key] for r in res[d]):.4g} "
              f"n={len(res[d])} pairwise ratio to the first: "
              f"{statistics.median(ratios) if ratios else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
