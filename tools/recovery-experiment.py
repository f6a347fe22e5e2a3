#!/usr/bin/python3
"""Pools tests/bench/recovery_experiment CSVs (tools/recovery-experiment.sh).

usage: recovery-experiment.py OUTDIR SCENARIO=TITLE...

Per path scenario (OUTDIR/SCENARIO-seed*.csv) and row, over every seed:
responses, lossy responses, mean / p90 / p99 completion time of the lossy
ones, the median over seeds of each seed's lossy mean, RTOs, retransmitted
segments and spurious ones (D-SACKs the server received); then the ratio of
each row's pooled lossy mean to rfc6675's.  A PNG of the lossy
completion-time CDFs when matplotlib is importable.
"""
import csv
import glob
import math
import os
import statistics
import sys


def pct(v, q):
    if not v:
        return 0.0
    return v[max(0, math.ceil(q * len(v)) - 1)]


def load(outdir, scenario):
    """{row: {seed: [response rows]}} in the program's row order, and
    {row: spurious retransmissions over the seeds} ("#spurious" lines)."""
    runs, spurious = {}, {}
    for path in sorted(glob.glob(os.path.join(outdir, f"{scenario}-seed*.csv"))):
        seed = int(path.rsplit("seed", 1)[1].split(".")[0])
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["alg"] == "#spurious":
                    spurious[row["size"]] = spurious.get(row["size"], 0) + int(row["ms"])
                    continue
                runs.setdefault(row["alg"], {}).setdefault(seed, []).append(row)
    return runs, spurious


def table(title, runs, spurious):
    print(f"### {title}, 100 ms RTT, pooled over seeds {sorted(next(iter(runs.values())).keys())}")
    print()
    print("| row | responses | lossy | lossy mean ms | median of seed means | p90 ms | p99 ms | RTOs | rexmit | spurious | mean vs rfc6675 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    means, lossy = {}, {}
    for alg in runs:
        rows = [r for seed in runs[alg].values() for r in seed]
        v = sorted(float(r["ms"]) for r in rows if r["lossy"] == "1")
        seed_means = [statistics.mean([float(r["ms"]) for r in s if r["lossy"] == "1"] or [0.0])
                      for s in runs[alg].values()]
        means[alg] = statistics.mean(v) if v else 0.0
        lossy[alg] = v
        rtos = sum(int(r["rtos"]) for r in rows)
        rx = sum(int(r["retrans"]) for r in rows)
        print(f"| {alg} | {len(rows)} | {len(v)} | {means[alg]:.1f} | {statistics.median(seed_means):.1f} "
              f"| {pct(v, 0.9):.1f} | {pct(v, 0.99):.1f} | {rtos} | {rx} | {spurious.get(alg, 0)} "
              f"| <RATIO:{alg}> |")
    return means, lossy


def main():
    outdir, scenarios = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
    curves = {}
    for scenario, title in scenarios:
        runs, spurious = load(outdir, scenario)
        if not runs:
            continue
        import io
        import contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            means, lossy = table(title, runs, spurious)
        text = buf.getvalue()
        base = means.get("rfc6675") or 1.0
        for alg, m in means.items():
            text = text.replace(f"<RATIO:{alg}>", f"{m / base:.3f}")
        print(text)
        curves[title] = lossy
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (apt-get install -y python3-matplotlib)")
        return
    fig, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 4.5), squeeze=False)
    for ax, (title, lossy) in zip(axes[0], curves.items()):
        for alg, v in lossy.items():
            if v:
                ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=alg)
        ax.set_xscale("log")
        ax.set_xlabel("completion time of responses that saw loss (ms, virtual)")
        ax.set_ylabel("CDF")
        ax.set_title(f"{title}, 100 ms RTT", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    png = os.path.join(outdir, "recovery-experiment.png")
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")


if __name__ == "__main__":
    main()
