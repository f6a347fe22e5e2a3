"""bench/bench.py's results: medians, pairwise ratios, markdown, JSON, PNG."""

import json
import os
import statistics

# The goals of issue #9, as ratios of the median pairwise ratio.
GOALS = {"rps": ("k-lo", 10.0), "cps": ("k-lo", 20.0)}
CEILING_GOAL = 0.5
METRIC_TEXT = {"rps": "requests/s", "cps": "connections/s", "gbps": "Gbit/s each way"}


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _pairwise(a_runs, b_runs, ka, kb):
    """Median of a[i][ka] / b[i][kb] over the pairs both have."""
    b_by = {r["pair"]: r[kb] for r in b_runs if r.get(kb)}
    ratios = [r[ka] / b_by[r["pair"]] for r in a_runs if r["pair"] in b_by and r.get(ka)]
    return (_med(ratios), len(ratios))


def summarize(doc):
    runs = doc["runs"]
    ceiling = runs.get("ceiling", [])
    out = {"ceiling_pps": _med([r["pps"] for r in ceiling]), "workloads": {}}
    for wl, (_body, _ka, _conns, metric) in doc["workloads"].items():
        w = {"metric": metric, "systems": {}}
        for key, rs in runs.items():
            if not key.startswith(wl + "/") or key.endswith(":failed"):
                continue
            sysname = key.split("/", 1)[1]
            w["systems"][sysname] = {
                "median": _med([r[metric] for r in rs]), "runs": len(rs),
                "p50_us": _med([r.get("p50") for r in rs]),
                "p99_us": _med([r.get("p99") for r in rs]),
                "errors": sum(r.get("errors") or 0 for r in rs),
                "failed": len(runs.get(key + ":failed", [])),
            }
        ours = runs.get(wl + "/ours", [])
        for k in ("k-lo", "k-veth"):
            if k in w["systems"]:
                w["vs_" + k.replace("-", "_")] = _pairwise(ours, runs[wl + "/" + k],
                                                          metric, metric)
        if metric != "gbps" and ceiling:
            w["vs_ceiling_pps"] = _pairwise(ours, ceiling, "pps", "pps")
            w["ours_pps"] = _med([r.get("pps") for r in ours])
        goal = GOALS.get(metric)
        if goal and w.get("vs_k_lo", (None,))[0] is not None:
            w["goal"] = {"vs": goal[0], "want": goal[1], "met": w["vs_k_lo"][0] >= goal[1]}
        out["workloads"][wl] = w
    return out


def _fmt(x, nd=1):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{nd}f}" if abs(x) >= 1 else f"{x:.3g}"


def _ratio(t):
    return "-" if not t or t[0] is None else f"{t[0]:.2f}x (n={t[1]})"


def markdown(doc):
    m, s = doc["machine"], doc["summary"]
    lines = [f"# userstack benchmark, {m['date']} on {m['host']}", "",
             f"- CPU: {m['cpu']} ({m['cpus']} CPUs, hypervisor {m['hypervisor']}); "
             f"kernel {m['kernel']}; DPDK {m['dpdk']}; {m['wrk']}; commit {m['commit']}",
             f"- {doc['pairs']} alternating pairs of {doc['secs']} s runs; server on core 1, "
             "client on core 0; medians, and the median of the pairwise ratios (n = pairs).",
             "- ours: us-loadgen <-> us-httpecho over net_memif (busy polling); k-lo / k-veth: "
             "wrk -t1 -> bench/kserver (epoll) over loopback / a veth pair; 32 connections "
             "(bulk: 1, 1 MiB POST echoed).",
             f"- ceiling: dpdk-testpmd io-forward fed by testpmd flowgen over memif: "
             f"{_fmt(s['ceiling_pps'])} packets/s each way (median).", "",
             "| workload | metric | ours | k-lo | k-veth | ours/k-lo | ours/k-veth | "
             "ours pkt/s / ceiling | p50 / p99 us (ours) | p50 / p99 us (k-lo) | goal |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for wl, w in s["workloads"].items():
        sy = w["systems"]

        def med(k):
            return _fmt(sy[k]["median"], 2) if k in sy else "-"

        def lat(k):
            return (f"{_fmt(sy[k]['p50_us'])} / {_fmt(sy[k]['p99_us'])}" if k in sy else "-")
        g = w.get("goal")
        goal = "-" if not g else f"{'met' if g['met'] else 'NOT met'} (>= {g['want']:g}x)"
        lines.append(f"| {wl} | {METRIC_TEXT[w['metric']]} | {med('ours')} | {med('k-lo')} | "
                     f"{med('k-veth')} | {_ratio(w.get('vs_k_lo'))} | "
                     f"{_ratio(w.get('vs_k_veth'))} | {_ratio(w.get('vs_ceiling_pps'))} | "
                     f"{lat('ours')} | {lat('k-lo')} | {goal} |")
    wire = doc["runs"].get("ka-64/wire")
    if wire:
        lines += ["", f"testpmd as the wire (OVERSUBSCRIBED: 3 busy pollers on 2 cores), "
                  f"ka-64: {_fmt(_med([r['rps'] for r in wire]))} requests/s median "
                  f"over {len(wire)} runs"]
    failed = {k: len(v) for k, v in doc["runs"].items() if k.endswith(":failed")}
    if failed:
        lines += ["", "Failed runs (not in the medians): " +
                  ", ".join(f"{k[:-7]} x{n}" for k, n in failed.items())]
    lines += ["", f"Packet-rate goal: ours >= {CEILING_GOAL:g} x the ceiling "
              "(pkt/s = the client's (rx+tx)/2 per second, the unit testpmd's io-forward "
              "rate is counted in)."]
    return "\n".join(lines) + "\n"


def plot(doc, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    s = doc["summary"]["workloads"]
    wls = [w for w in s if s[w]["metric"] != "gbps"]
    systems = ["ours", "k-lo", "k-veth"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.25
    for i, sy in enumerate(systems):
        vals = [s[w]["systems"].get(sy, {}).get("median") or 0 for w in wls]
        ax.bar([x + (i - 1) * width for x in range(len(wls))], vals, width, label=sy)
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels([f"{w}\n({METRIC_TEXT[s[w]['metric']]})" for w in wls])
    ax.set_yscale("log")
    ax.set_ylabel("per second (median, log scale)")
    cp = doc["summary"].get("ceiling_pps")
    if cp:
        ax.axhline(cp, color="grey", linestyle="--", label="testpmd ceiling (pkt/s)")
    ax.legend()
    ax.set_title(f"userstack vs kernel, {doc['machine']['host']} {doc['machine']['date'][:10]}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write(doc, outdir):
    os.makedirs(outdir, exist_ok=True)
    m = doc["machine"]
    base = os.path.join(outdir, f"{m['date'][:10]}-{m['host']}")
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    with open(base + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(doc))
    paths = [base + ".md", base + ".json"]
    png = plot(doc, base + ".png")
    if png:
        paths.append(png)
    return paths
