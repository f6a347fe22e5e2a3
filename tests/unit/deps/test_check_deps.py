#!/usr/bin/env python3
"""tools/check-deps.py bites: run it, with the real room table, on small
trees made up here, one rule each.

    test_check_deps.py PATH/TO/check-deps.py
"""

import os
import subprocess
import sys
import tempfile

# A clean tree: each room includes only what tools/rooms.txt lets it.
CLEAN = {
    "stack/base/limits.h": "#define US_MAX 8\n",
    "tcp/tcp_config.h": '#include "stack/base/limits.h"\n',
    "tcp/tcp.h": '#include "tcp/tcp_config.h"\n#include <stdint.h>\n',
    "tcp/tcb.c": '#include "tcp.h"\n',  # the file's own folder first
    "config/config.h": '#include "tcp/tcp_config.h"\n#include "tcp/tcp.h"\n',
    "nic/nic.h": '#include "stack/base/limits.h"\n',
    "nic/port.c": '#include <rte_ethdev.h>\n#include "nic/nic.h"\n',
    "stack/include/userstack.h": '#include "us_socket.h"\n',
    "stack/include/us_socket.h": "struct us_socket;\n",
    "apps/demo/main.c": '#include <userstack.h>\n#include "demo.h"\n',
    "apps/demo/demo.h": "int demo(void);\n",
    "tests/unit/t.c": '#include "tcp/tcp.h"\n#include "nic/nic.h"\n',
}


def run(script, files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([sys.executable, script, "--root", root],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout, end="")
    return p.returncode, p.stdout


def expect(what, ok, failures):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def main():
    script = sys.argv[1]
    failures = []

    # config/config.h includes tcp/tcp.h, which the table forbids config:
    # drop it from the clean tree.
    clean = dict(CLEAN, **{"config/config.h": '#include "tcp/tcp_config.h"\n'})
    rc, out = run(script, clean)
    expect("a clean tree exits 0 with a summary",
           rc == 0 and "no violations" in out, failures)

    # nic/ may include base only; config/ through a nic header is found at
    # the line of nic/x.c that leads there, with the chain.
    rc, out = run(script, dict(clean, **{
        "nic/nic.h": '#include "stack/base/limits.h"\n#include "config/config.h"\n',
        "nic/x.c": '/* x */\n#include <stdio.h>\n#include "nic/nic.h"\n',
    }))
    expect("a forbidden header two includes down exits 1", rc == 1, failures)
    expect("it names the file, its line and the chain",
           "nic/x.c:3: nic (nic/) may not include config/config.h (room config) "
           "[via nic/nic.h -> config/config.h]" in out, failures)
    expect("the header that crosses is reported at its own line",
           "nic/nic.h:2: nic (nic/) may not include config/config.h" in out, failures)

    # config/ may include tcp/tcp_config.h but not the rest of tcp/.
    rc, out = run(script, CLEAN)
    expect("config including tcp/tcp.h exits 1",
           rc == 1 and "config/config.h:2: config (config/) may not include tcp/tcp.h" in out,
           failures)

    # Apps see the public headers only, and not each other.
    rc, out = run(script, dict(clean, **{
        "apps/other/main.c": '#include "apps/demo/demo.h"\n#include "tcp/tcp.h"\n'}))
    expect("an app including another app and tcp/ exits 1",
           rc == 1 and "apps/other/main.c:1:" in out and "apps/other/main.c:2:" in out,
           failures)

    # A room's *_priv.h is its own, even for a room that may include it.
    rc, out = run(script, dict(clean, **{
        "stack/engine/engine_priv.h": "struct us_engine { int id; };\n",
        "stack/sock/s.c": '#include "stack/engine/engine_priv.h"\n'}))
    expect("another room's private header exits 1",
           rc == 1 and "stack/sock/s.c:1: stack/engine/engine_priv.h is private to room engine"
           in out, failures)

    # A folder the table does not know.
    rc, out = run(script, dict(clean, **{"stack/newroom/y.c": "int y;\n"}))
    expect("a file in no room exits 1",
           rc == 1 and "stack/newroom/y.c: belongs to no room" in out, failures)

    # A quoted include that resolves to nothing is a typo.
    rc, out = run(script, dict(clean, **{"tcp/tcb.c": '#include "tcp/tpc.h"\n'}))
    expect("an unresolved quoted include exits 1",
           rc == 1 and 'tcp/tcb.c:1: "tcp/tpc.h" resolves to no file' in out, failures)

    p = subprocess.run([sys.executable, script, "--no-such-option"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    expect("a usage error exits 2", p.returncode == 2, failures)

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
