#!/usr/bin/env python3
"""Checks of bench's pure pieces, no root and nothing run:

    python3 bench/test_bench.py

ours' configs (ours_ini: --mtu, --ours-extra), the report (which plot
panels a run gets, the MTU in the table) and preload_bench.py's reading of
redis-benchmark and of the server's command counts, and its summary.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report  # noqa: E402
import ours_ini  # noqa: E402
import preload_bench  # noqa: E402


def sections(mtu=None, tcp=None):
    dev = ours_ini.memif_device("server", "/tmp/m.sock", mtu)
    return ours_ini.ours_sections(dev, "1", "pfx", "10.79.0.2", mtu=mtu, tcp=tcp)


class MemifBuffers(unittest.TestCase):
    def test_frame_rounded_up_to_a_power_of_two(self):
        self.assertEqual(ours_ini.memif_bsize(1500), 2048)
        self.assertEqual(ours_ini.memif_bsize(2034), 2048)   # 2048-byte frame: fits
        self.assertEqual(ours_ini.memif_bsize(2035), 4096)
        self.assertEqual(ours_ini.memif_bsize(9000), 16384)

    def test_never_below_the_pmd_default(self):
        self.assertEqual(ours_ini.memif_bsize(576), 2048)

    def test_mtu_limits(self):
        self.assertIsNone(ours_ini.mtu_problem(68))
        self.assertIsNone(ours_ini.mtu_problem(32768 - 14))
        self.assertIn("68", ours_ini.mtu_problem(67))
        self.assertIn("32768", ours_ini.mtu_problem(32768 - 13))

    def test_device_keeps_its_devargs(self):
        self.assertEqual(ours_ini.memif_device("client", "/s", None),
                         "net_memif0,role=client,socket=/s,socket-abstract=no")
        self.assertEqual(ours_ini.memif_device("client", "/s", 9000),
                         "net_memif0,role=client,socket=/s,socket-abstract=no,bsize=16384")


class Configs(unittest.TestCase):
    def test_default_is_the_config_bench_always_wrote(self):
        self.assertEqual(ours_ini.config_text(sections(tcp={"max_conns": 28192})),
                         "[eal]\nlcores = 1\nhugepages = off\nno_huge_mem_mb = 256\n"
                         "file_prefix = pfx\nlog_level = warning\n"
                         "[port]\ndevice = net_memif0,role=server,socket=/tmp/m.sock,"
                         "socket-abstract=no\nmbufs = 8191\n"
                         "[ip]\naddr = 10.79.0.2/24\n[engine]\nidle_sleep_max_us = 0\n"
                         "[tcp]\nmax_conns = 28192\n")

    def test_mtu_goes_into_port(self):
        text = ours_ini.config_text(sections(mtu=9000))
        port = text.split("[port]\n")[1].split("[ip]")[0]
        self.assertIn("mtu = 9000\n", port)
        self.assertIn(",bsize=16384\n", port)
        self.assertNotIn("mtu", ours_ini.config_text(sections()))

    def test_fragment_merged_one_section_each(self):
        frag = ours_ini.parse_fragment("# A/B\n[tcp]\nrcvbuf = 4194304\n[port]\nmbufs = 32767\n"
                                       "[capture]\nfile = /tmp/x.pcap\n")
        text = ours_ini.config_text(sections(tcp={"max_conns": 9}), frag)
        for sec in ("eal", "port", "ip", "engine", "tcp", "capture"):
            self.assertEqual(text.count(f"[{sec}]\n"), 1, sec)
        self.assertIn("mbufs = 32767\n", text)
        self.assertNotIn("mbufs = 8191", text)
        tcp = text.split("[tcp]\n")[1].split("[capture]")[0]
        self.assertEqual(tcp, "max_conns = 9\nrcvbuf = 4194304\n")
        self.assertTrue(text.endswith("[capture]\nfile = /tmp/x.pcap\n"))

    def test_fragment_errors_name_the_line(self):
        for text, want in (("rcvbuf = 1\n", "f.ini:1: 'rcvbuf = 1' comes before any"),
                           ("[tcp]\nrcvbuf 1\n", "f.ini:2: 'rcvbuf 1' is not key = value"),
                           ("[tcp\n", "f.ini:1: '[tcp' is not a [section]"),
                           ("[port]\nmtu = 9000\n", "f.ini:2: [port] mtu is bench's: use --mtu"),
                           ("[eal]\nlcores = 0\n", "f.ini:2: [eal] lcores is bench's")):
            with self.assertRaises(ValueError) as e:
                ours_ini.parse_fragment(text, "f.ini")
            self.assertIn(want, str(e.exception))


def doc_of(workloads, systems_runs, **extra):
    """A doc as bench.py writes it: workloads by name, {key: [run]}."""
    doc = {"machine": {"host": "h", "date": "2026-01-01T00:00:00", "cpu": "c", "cpus": "2",
                       "hypervisor": "none", "kernel": "k", "dpdk": "22.11", "wrk": "wrk",
                       "commit": "abc"},
           "secs": 1.0, "pairs": 1, "idle_n": 100, "quick": False, "flood_pps": 0,
           "workloads": {w: _WL[w] for w in workloads}, "runs": systems_runs, **extra}
    doc["summary"] = bench_report.summarize(doc)
    return doc


_WL = {"ka-64": (64, True, 32, "rps"), "bulk": (1 << 20, True, 1, "gbps"),
       "bulk-4": (1 << 20, True, 4, "gbps"), "idle": (64, True, 32, "rps")}


def run(value, mtu=None, **more):
    return {"pair": 0, "rps": value, "cps": value, "gbps": value, "p50": 10.0, "p99": 20.0,
            "errors": 0, "mtu": mtu, **more}


class Panels(unittest.TestCase):
    def test_only_the_panels_of_what_ran(self):
        doc = doc_of(["bulk"], {"bulk/ours": [run(3.0)], "bulk/k-lo": [run(9.0)]})
        self.assertEqual(bench_report.panels(doc), [("bulk", ["bulk"], ["ours", "k-lo"])])

    def test_no_memory_panel_without_idle(self):
        doc = doc_of(["ka-64", "bulk"], {"ka-64/ours": [run(1e6)], "bulk/ours": [run(3.0)]})
        self.assertEqual([p[0] for p in bench_report.panels(doc)], ["rates", "bulk"])

    def test_memory_panel_with_idle(self):
        doc = doc_of(["idle"], {"idle/ours": [run(1e5, idle_est=100, mem_per_idle=5700.0)]})
        self.assertEqual(bench_report.panels(doc),
                         [("rates", ["idle"], ["ours"]), ("memory", ["idle"], ["ours"])])

    def test_failed_workload_leaves_no_empty_slot(self):
        doc = doc_of(["ka-64", "bulk"], {"ka-64/ours": [run(1e6)], "bulk/ours:failed": ["x"]})
        self.assertEqual(bench_report.panels(doc), [("rates", ["ka-64"], ["ours"])])

    def test_nothing_measured_no_plot(self):
        doc = doc_of(["bulk"], {"bulk/ours:failed": ["x"]})
        self.assertEqual(bench_report.panels(doc), [])
        self.assertIsNone(bench_report.plot(doc, "/nonexistent/x.png"))


class MtuInTheReport(unittest.TestCase):
    def test_each_side_in_the_row_and_the_header(self):
        doc = doc_of(["bulk"], {"bulk/ours": [run(3.0, 9000)], "bulk/k-lo": [run(9.0, 65536)],
                                "bulk/k-veth": [run(5.0, 9000)]},
                     mtu={"memif": 9000, "lo": 65536, "veth": 9000}, ours_mtu_written=True,
                     memif_bsize=16384)
        self.assertEqual(doc["summary"]["workloads"]["bulk"]["systems"]["ours"]["mtu"], 9000)
        md = bench_report.markdown(doc)
        row = [ln for ln in md.splitlines() if ln.startswith("| bulk |")][0]
        self.assertTrue(row.endswith("| 9000 / 65536 / 9000 |"), row)
        self.assertIn("10.0 / 20.0", row)   # p50 / p99 per 1 MiB echo
        self.assertIn("- MTU: ours 9000 (--mtu: [port] mtu in both configs, memif buffers "
                      "of 16384 bytes); k-lo 65536 (loopback's own", md)

    def test_runs_of_different_mtus_are_all_shown(self):
        doc = doc_of(["bulk"], {"bulk/ours": [run(3.0, 1500), run(3.0, 9000)]})
        self.assertEqual(doc["summary"]["workloads"]["bulk"]["systems"]["ours"]["mtu"],
                         [1500, 9000])

    def test_results_from_before_mtus_still_render(self):
        doc = doc_of(["bulk"], {"bulk/ours": [run(3.0)]})
        self.assertNotIn("- MTU:", bench_report.markdown(doc))


REDIS_CSV = """"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","26990.55","1.736","0.032","0.119","8.743","12.495","27.295"
"GET","24894.20","1.904","0.040","0.111","16.175","20.015","36.351"
"""


class PreloadBench(unittest.TestCase):
    def test_redis_benchmark_csv(self):
        r = preload_bench.parse_redis_benchmark(REDIS_CSV)
        self.assertEqual(r["set"], 26990.55)
        self.assertEqual(r["get"], 24894.20)
        self.assertAlmostEqual(r["get_p50"], 111.0)
        self.assertAlmostEqual(r["set_p99"], 12495.0)

    def test_redis_benchmark_without_both_rows_fails(self):
        only_set = "\n".join(REDIS_CSV.splitlines()[:2])
        with self.assertRaisesRegex(RuntimeError, "no SET and GET"):
            preload_bench.parse_redis_benchmark(only_set)
        with self.assertRaisesRegex(RuntimeError, "error"):
            preload_bench.parse_redis_benchmark(REDIS_CSV + "Error: Connection reset by peer\n")

    def test_server_must_count_every_command(self):
        info = "# Commandstats\r\ncmdstat_set:calls=100000,usec=1\r\n" \
               "cmdstat_get:calls=99999,usec=1\r\ncmdstat_config:calls=2,usec=1\r\n"
        preload_bench.check_redis_calls(info, 99999)
        with self.assertRaisesRegex(RuntimeError, "counted"):
            preload_bench.check_redis_calls(info, 100000)

    def test_summary_pairs_ours_with_the_kernel(self):
        def runs(vals):
            return [{"set": v, "get": v, "pair": i} for i, v in enumerate(vals)]
        s = preload_bench.summary({"redis-P1/kernel": runs([10, 20, 40]),
                                   "redis-P1/ours": runs([30, 100, 80])})
        self.assertEqual(list(s), ["redis-P1"])
        self.assertEqual(s["redis-P1"]["get"]["kernel"], 20)
        self.assertEqual(s["redis-P1"]["get"]["ours"], 80)
        # pairwise 3, 5, 2: the median of the ratios, not the ratio of the medians (4)
        self.assertEqual(s["redis-P1"]["get"]["ratio"], (3, 3))


if __name__ == "__main__":
    unittest.main()
