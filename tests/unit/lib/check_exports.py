#!/usr/bin/env python3
"""libuserstack.so exports exactly the public API.

Every function declared in the installed headers (userstack.h, us_socket.h)
must be a defined dynamic symbol of the shared library (the version script
stack/api/libuserstack.map lists them by name, so a new public function that is
not added there fails here), and nothing else may be exported (no tcp_*,
no DPDK-internal or us_engine_* names leaking into applications).

    check_exports.py LIBUSERSTACK.so HEADER...
"""

import re
import subprocess
import sys


def declared(headers):
    names = set()
    for h in headers:
        with open(h, encoding="utf-8") as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        # A prototype: "... us_name(" at the start of a declaration.
        names.update(re.findall(r"\b(us_[a-z0-9_]+)\s*\(", text))
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "W"):
            syms.add(parts[2].split("@")[0])
    return syms


def main():
    lib, headers = sys.argv[1], sys.argv[2:]
    want, have = declared(headers), exported(lib)
    missing, extra = sorted(want - have), sorted(have - want)
    print(f"{len(want)} public functions, {len(have)} exported")
    if missing:
        print("declared but not exported (add them to stack/api/libuserstack.map):",
              " ".join(missing))
    if extra:
        print("exported but not public:", " ".join(extra))
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
