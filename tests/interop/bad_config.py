#!/usr/bin/env python3
"""A bad config stops us-httpecho and us-loadgen with exit 1 and a message
naming the file, never a signal: the start fails before EAL, and us_fini
must then not touch a clock or engine that never came up (a duplicated
section once ended in SIGFPE, a division by the zero TSC rate in the drain).

    bad_config.py --httpecho H --loadgen L
"""
import argparse
import os
import subprocess
import sys
import tempfile

BAD = {
    "section twice": "[eal]\nhugepages = off\n[eal]\nhugepages = off\n",
    "key twice": "[eal]\nhugepages = off\nhugepages = off\n",
    "unknown key": "[tcp]\nno_such_key = 1\n",
    "value out of range": "[tcp]\nrcvbuf = 1\n",
    "unknown section": "[nope]\nx = 1\n",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--httpecho", required=True)
    ap.add_argument("--loadgen", required=True)
    a = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in BAD.items():
            path = os.path.join(tmp, "bad.ini")
            with open(path, "w") as f:
                f.write(text)
            for prog in ([a.httpecho, "--config", path],
                         [a.loadgen, "--config", path, "--target", "10.0.0.1:80"]):
                p = subprocess.run(prog, capture_output=True, text=True, timeout=30)
                ok = p.returncode == 1 and path in p.stderr
                print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(prog[0])} {name}: "
                      f"exit {p.returncode}; {p.stderr.strip().splitlines()[:1]}")
                failed += not ok
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
