"""bench/bench.py's results: medians, pairwise ratios, markdown, JSON, PNG."""

import json
import os
import statistics

# The benchmark goals, as ratios of the median pairwise ratio.
GOALS = {"rps": ("k-lo", 10.0), "cps": ("k-lo", 20.0)}
CEILING_GOAL = 0.5
METRIC_TEXT = {"rps": "requests/s", "cps": "connections/s", "gbps": "Gbit/s each way"}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _same(xs):
    """The one value the runs share; a sorted list when they differ."""
    xs = sorted({x for x in xs if x is not None})
    return xs[0] if len(xs) == 1 else (xs or None)


def pairwise(a_runs, b_runs, ka, kb):
    """Median of a[i][ka] / b[i][kb] over the pairs both have."""
    b_by = {r["pair"]: r[kb] for r in b_runs if r.get(kb)}
    # A run that measured 0 (e.g. flooded to a standstill) is a result, not
    # a missing value: only None is left out.
    ratios = [r[ka] / b_by[r["pair"]] for r in a_runs
              if r["pair"] in b_by and r.get(ka) is not None]
    return (median(ratios), len(ratios))


def summarize(doc):
    runs = doc["runs"]
    ceiling = runs.get("ceiling", [])
    out = {"ceiling_pps": median([r["pps"] for r in ceiling]), "workloads": {}}
    for wl, (_body, _ka, _conns, metric) in doc["workloads"].items():
        w = {"metric": metric, "systems": {}}
        for key, rs in runs.items():
            if not key.startswith(wl + "/") or key.endswith(":failed"):
                continue
            sysname = key.split("/", 1)[1]
            w["systems"][sysname] = {
                "median": median([r[metric] for r in rs]), "runs": len(rs),
                "p50_us": median([r.get("p50") for r in rs]),
                "p99_us": median([r.get("p99") for r in rs]),
                "errors": sum(r.get("errors") or 0 for r in rs),
                "mtu": _same([r.get("mtu") for r in rs]),
                "failed": len(runs.get(key + ":failed", [])),
            }
        ours = runs.get(wl + "/ours", [])
        for k in ("k-lo", "k-veth"):
            if k in w["systems"]:
                w["vs_" + k.replace("-", "_")] = pairwise(ours, runs[wl + "/" + k],
                                                          metric, metric)
        if metric != "gbps" and ceiling and wl not in ("idle", "flood"):
            w["vs_ceiling_pps"] = pairwise(ours, ceiling, "pps", "pps")
            w["ours_pps"] = median([r.get("pps") for r in ours])
        if wl == "idle":
            _summarize_idle(runs, w)
        if wl == "flood":
            _summarize_flood(runs, w)
        goal = GOALS.get(metric)
        if goal and wl not in ("idle", "flood") and w.get("vs_k_lo", (None,))[0] is not None:
            w["goal"] = {"vs": goal[0], "want": goal[1], "met": w["vs_k_lo"][0] >= goal[1]}
        out["workloads"][wl] = w
    return out


def _summarize_idle(runs, w):
    """Rate with the idle connections open against ka-64 in the same pair
    (the same load without them), and memory per idle connection."""
    for sy, base in (("ours", "ours"), ("k-lo", "k-lo")):
        rs = runs.get("idle/" + sy, [])
        if not rs or sy not in w["systems"]:
            continue
        w["systems"][sy].update({
            "vs_no_idle": pairwise(rs, runs.get("ka-64/" + base, []), "rps", "rps"),
            "idle_est": median([r.get("idle_est") for r in rs]),
            "idle_open_s": median([r.get("idle_open_s") for r in rs]),
            "mem_per_idle": median([r.get("mem_per_idle") for r in rs]),
            "mbufs_per_idle": median([r.get("mbufs_per_idle") for r in rs]),
            "slab_per_idle_both": median([r.get("slab_per_idle_both") for r in rs]),
        })
    o, k = w["systems"].get("ours", {}), w["systems"].get("k-lo", {})
    if o.get("mem_per_idle") and k.get("mem_per_idle"):
        w["mem_ratio_ours_k"] = o["mem_per_idle"] / k["mem_per_idle"]


def _clean_of(sy):
    """The run without junk that a flooded system is compared with."""
    return sy.replace("-decoy", "") + "-clean"


def _summarize_flood(runs, w):
    """Rate under the flood against the same system without it (pairwise),
    the junk rate reached and the drop counters summed over the runs."""
    for sy in ("ours", "k-veth", "ours-decoy"):  # decoy: junk to no server
        rs = runs.get("flood/" + sy, [])
        if not rs or sy not in w["systems"]:
            continue
        drops = {}
        for r in rs:
            for k, v in (r.get("drops") or {}).items():
                drops[k] = drops.get(k, 0) + v
        w["systems"][sy].update({
            "vs_clean": pairwise(rs, runs.get(f"flood/{_clean_of(sy)}", []), "rps", "rps"),
            "junk_pps": median([r["junk_sent"] / r["junk_secs"] for r in rs
                              if r.get("junk_secs")]),
            "junk_sent": sum(r.get("junk_sent") or 0 for r in rs),
            "per_pair": [(r["pair"], round(r["rps"])) for r in rs],
            "drops": drops,
        })


def fmt(x, nd=1):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{nd}f}" if abs(x) >= 1 else f"{x:.3g}"


def ratio_text(t):
    return "-" if not t or t[0] is None else f"{t[0]:.2f}x (n={t[1]})"


def markdown(doc):
    m, s = doc["machine"], doc["summary"]
    lines = [f"# userstack benchmark, {m['date']} on {m['host']}", "",
             f"- CPU: {m['cpu']} ({m['cpus']} CPUs, hypervisor {m['hypervisor']}); "
             f"kernel {m['kernel']}; DPDK {m['dpdk']}; {m['wrk']}; commit {m['commit']}",
             f"- load average at the end (1, 5, 15 min): {' '.join(m.get('loadavg', ['?']))}"
             + (f"; {doc['note']}" if doc.get("note") else ""),
             f"- {doc['pairs']} alternating pairs of {doc['secs']} s runs; server on core 1, "
             "client on core 0; medians, and the median of the pairwise ratios (n = pairs).",
             "- ours: us-loadgen <-> us-httpecho over net_memif (busy polling); k-lo / k-veth: "
             "wrk -t1 -> bench/kserver (epoll) over loopback / a veth pair; 32 connections "
             "(bulk: 1, bulk-4 / bulk-16: 4 / 16, 1 MiB POSTs echoed).",
             ("- ceiling: dpdk-testpmd io-forward fed by testpmd flowgen over memif: "
              f"{fmt(s['ceiling_pps'])} packets/s each way (median)." if s["ceiling_pps"]
              else "- ceiling: not measured in this run.")]
    lines += _mtu_lines(doc) + [
        "- p50 / p99: latency per request; in the bulk rows, per 1 MiB echo (the whole POST "
        "sent and its echo received).", "",
        "| workload | metric | ours | k-lo | k-veth | ours/k-lo | ours/k-veth | "
        "ours pkt/s / ceiling | p50 / p99 us (ours) | p50 / p99 us (k-lo) | goal | "
        "MTU ours / k-lo / k-veth |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for wl, w in s["workloads"].items():
        sy = w["systems"]

        def med(k):
            return fmt(sy[k]["median"], 2) if k in sy else "-"

        def lat(k):
            return (f"{fmt(sy[k]['p50_us'])} / {fmt(sy[k]['p99_us'])}" if k in sy else "-")
        def mtu(k):
            return str(sy[k].get("mtu") or "-") if k in sy else "-"
        g = w.get("goal")
        goal = "-" if not g else f"{'met' if g['met'] else 'NOT met'} (>= {g['want']:g}x)"
        lines.append(f"| {wl} | {METRIC_TEXT[w['metric']]} | {med('ours')} | {med('k-lo')} | "
                     f"{med('k-veth')} | {ratio_text(w.get('vs_k_lo'))} | "
                     f"{ratio_text(w.get('vs_k_veth'))} | {ratio_text(w.get('vs_ceiling_pps'))} | "
                     f"{lat('ours')} | {lat('k-lo')} | {goal} | "
                     f"{mtu('ours')} / {mtu('k-lo')} / {mtu('k-veth')} |")
    lines += _idle_lines(doc) + _flood_lines(doc)
    wire = doc["runs"].get("ka-64/wire")
    if wire:
        lines += ["", f"testpmd as the wire (OVERSUBSCRIBED: 3 busy pollers on 2 cores), "
                  f"ka-64: {fmt(median([r['rps'] for r in wire]))} requests/s median "
                  f"over {len(wire)} runs"]
    failed = {k: len(v) for k, v in doc["runs"].items() if k.endswith(":failed")}
    if failed:
        lines += ["", "Failed runs (not in the medians): " +
                  ", ".join(f"{k[:-7]} x{n}" for k, n in failed.items())]
    if s["ceiling_pps"]:
        lines += ["", f"Packet-rate goal: ours >= {CEILING_GOAL:g} x the ceiling "
                  "(pkt/s = the client's (rx+tx)/2 per second, the unit testpmd's io-forward "
                  "rate is counted in)."]
    return "\n".join(lines) + "\n"


def _mtu_lines(doc):
    """What each side's MTU was and where it came from (runs from before
    bench recorded MTUs have none)."""
    m = doc.get("mtu")
    if not m:
        return []
    how = ("--mtu: [port] mtu in both configs" if doc.get("ours_mtu_written")
           else "no [port] mtu written: the stack's default")
    parts = [f"ours {m['memif']} ({how}, memif buffers of {doc.get('memif_bsize')} bytes)",
             f"k-lo {m.get('lo')} (loopback's own: --mtu leaves it)"]
    if "veth" in m:
        parts.append(f"k-veth {m['veth']} (both veth ends)")
    if "flood-us" in m:
        parts.append(f"flood: the bridge's veths, {m['flood-us']} (ours, af_packet) / "
                     f"{m['flood-k']} (kernel)")
    lines = ["- MTU: " + "; ".join(parts) + "."]
    extra = doc.get("ours_extra")
    if extra:
        body = [ln.strip() for ln in extra["text"].splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
        lines.append(f"- ours' configs with --ours-extra {extra['file']}: `{' '.join(body)}`")
    return lines


def _idle_lines(doc):
    w = doc["summary"]["workloads"].get("idle")
    if not w:
        return []
    n = doc.get("idle_n")
    lines = ["", f"### Many idle + few active: {n:,} idle connections open, ka-64 on 32 others",
             "", "| system | idle established | opened in s | ka-64 req/s with idle | "
             "with / without idle (pairwise vs ka-64) | memory per idle connection (bytes) |",
             "|---|---|---|---|---|---|"]
    how = {"ours": "server VmRSS growth / N (mbufs held per idle: {mb})",
           "k-lo": "slab growth / 2 / N + kserver VmRSS growth / N (slab both ends: {sb} B)"}
    for sy, d in w["systems"].items():
        if "idle_est" not in d:
            continue
        note = how.get(sy, "").format(mb=fmt(d.get("mbufs_per_idle"), 2),
                                      sb=fmt(d.get("slab_per_idle_both"), 0))
        lines.append(f"| {sy} | {fmt(d['idle_est'])} | {fmt(d['idle_open_s'])} | "
                     f"{fmt(d['median'])} | {ratio_text(d.get('vs_no_idle'))} | "
                     f"{fmt(d.get('mem_per_idle'), 0)}: {note} |")
    if w.get("mem_ratio_ours_k"):
        lines.append(f"\nMemory per idle connection, ours / kernel: {w['mem_ratio_ours_k']:.2f}x")
    return lines


def _flood_lines(doc):
    w = doc["summary"]["workloads"].get("flood")
    if not w:
        return []
    sy = w["systems"]
    lines = ["", f"### Flood: junk at {doc.get('flood_pps', 0):,} frames/s (paced, core 0) "
             "while ka-64 runs, af_packet veths on a bridge",
             "", "| system | req/s clean | req/s flooded | flooded / clean (pairwise) | "
             "flooded req/s per pair | junk frames/s reached | "
             "drop counters (sum over runs; junk sent) |",
             "|---|---|---|---|---|---|---|"]
    for name in ("ours", "k-veth", "ours-decoy"):
        d = sy.get(name)
        if not d:
            continue
        drops = ", ".join(f"{k} {v:,}" for k, v in sorted(d.get("drops", {}).items()))
        clean = sy.get(_clean_of(name), {}).get("median")
        lines.append(f"| {name} | {fmt(clean)} | {fmt(d['median'])} | "
                     f"{ratio_text(d.get('vs_clean'))} | "
                     f"{' '.join(f'{v:,}' for _p, v in d.get('per_pair', []))} | "
                     f"{fmt(d.get('junk_pps'))} | "
                     f"{drops or '-'}; sent {d.get('junk_sent', 0):,} |")
    return lines


# one colour per system in every panel
COLORS = {"ours": "C0", "k-lo": "C1", "k-veth": "C2", "ours-clean": "C3", "k-veth-clean": "C4"}
RATE_SYSTEMS = ("ours", "k-lo", "k-veth", "ours-clean", "k-veth-clean")
BULK_SYSTEMS = ("ours", "k-lo", "k-veth")


def _with_data(s, wls, systems):
    """The workloads that have a median for some system, and the systems
    that have one for some workload: a panel draws no empty slot."""
    def has(w, sy):
        return s[w]["systems"].get(sy, {}).get("median") is not None
    wls = [w for w in wls if any(has(w, sy) for sy in systems)]
    return wls, [sy for sy in systems if any(has(w, sy) for w in wls)]


def panels(doc):
    """The plot's panels, each only when the run has its data, in order:
    [(kind, workloads, systems)]; kind rates, bulk or memory."""
    s = doc["summary"]["workloads"]
    out = []
    for kind, systems, want in (("rates", RATE_SYSTEMS, lambda m: m != "gbps"),
                                ("bulk", BULK_SYSTEMS, lambda m: m == "gbps")):
        wls, sys_ = _with_data(s, [w for w in s if want(s[w]["metric"])], systems)
        if wls:
            out.append((kind, wls, sys_))
    idle = s.get("idle", {}).get("systems", {})
    mem = [sy for sy in ("ours", "k-lo") if idle.get(sy, {}).get("mem_per_idle")]
    if mem:
        out.append(("memory", ["idle"], mem))
    return out


def _bars(ax, s, wls, systems):
    width = 0.8 / len(systems)
    for i, sy in enumerate(systems):
        vals = [s[w]["systems"].get(sy, {}).get("median") or 0 for w in wls]
        ax.bar([x + (i - (len(systems) - 1) / 2) * width for x in range(len(wls))], vals, width,
               label=sy, color=COLORS[sy])
    ax.set_xticks(range(len(wls)))


def _rates_panel(ax, doc, wls, systems):
    s = doc["summary"]["workloads"]
    _bars(ax, s, wls, systems)
    ax.set_xticklabels([f"{w}\n({METRIC_TEXT[s[w]['metric']]})" for w in wls], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("per second (median, log scale)")
    cp = doc["summary"].get("ceiling_pps")
    if cp:
        ax.axhline(cp, color="grey", linestyle="--", label="testpmd ceiling (pkt/s)")
    ax.legend(fontsize=7)
    ax.set_title("rates" + (" (flood: af_packet; *-clean: without junk)"
                            if "flood" in wls else ""), fontsize=9)


def _bulk_panel(ax, doc, wls, systems):
    _bars(ax, doc["summary"]["workloads"], wls, systems)
    ax.set_xticklabels(wls, fontsize=8)
    ax.set_ylabel("Gbit/s each way (median)")
    ax.legend(fontsize=7)
    flows = " / ".join(str(doc["workloads"][w][2]) for w in wls)
    ax.set_title(f"1 MiB echoes, {flows} connection{'s' if flows != '1' else ''}", fontsize=9)


def _memory_panel(ax, doc, _wls, systems):
    idle = doc["summary"]["workloads"]["idle"]["systems"]
    ax.bar(systems, [idle[sy]["mem_per_idle"] for sy in systems],
           color=[COLORS[sy] for sy in systems])
    ax.set_ylabel("bytes per idle connection (server side)")
    ax.set_title(f"memory, {doc.get('idle_n') or 0:,} idle", fontsize=9)


PANEL = {"rates": (_rates_panel, 3.0), "bulk": (_bulk_panel, 1.3), "memory": (_memory_panel, 1.0)}


def plot(doc, path):
    """The PNG, or None: no matplotlib, or no panel has data."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    todo = panels(doc)
    if not todo:
        return None
    widths = [PANEL[kind][1] for kind, _w, _s in todo]
    fig, axes = plt.subplots(1, len(todo), figsize=(max(6.0, 2.9 * sum(widths)), 4.8),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, (kind, wls, systems) in zip(axes[0], todo):
        PANEL[kind][0](ax, doc, wls, systems)
    fig.suptitle(f"userstack vs kernel, {doc['machine']['host']} {doc['machine']['date'][:10]}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write(doc, outdir):
    os.makedirs(outdir, exist_ok=True)
    m = doc["machine"]
    # --quick runs get their own name: they do not replace the day's full run
    base = os.path.join(outdir, f"{m['date'][:10]}-{m['host']}" +
                        ("-quick" if doc.get("quick") else ""))
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    with open(base + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(doc))
    paths = [base + ".md", base + ".json"]
    png = plot(doc, base + ".png")
    if png:
        paths.append(png)
    return paths
