"""The INI configs bench.py writes for ours (us-httpecho and us-loadgen):
bench's own sections, the MTU of --mtu, and an --ours-extra fragment.

The stack refuses a section or a key given twice, so a fragment cannot just
be appended: it is merged.  Its keys go into bench's section of the same
name, a key bench also writes takes the fragment's value, and sections bench
does not write follow bench's.  The keys that wire the run together (the
device, the lcores, the file prefix, the address) and the MTU stay bench's:
the report describes them, and the memif buffers follow the MTU.
"""

ETHER_HDR_LEN = 14
MTU_DEFAULT = 1500           # the stack's MTU when the config has none (memif has no MTU call)
MTU_MIN = 68                 # RFC 791: every host takes 68-octet datagrams
MEMIF_BSIZE_DEFAULT = 2048   # net_memif's packet buffer when no bsize= is given
MEMIF_BSIZE_MAX = 32768      # bsize= is a uint16_t: the largest power of two it holds

# (section, key) that a fragment may not set, and what to use instead
RESERVED = {
    ("port", "device"): "bench's link",
    ("port", "mtu"): "use --mtu (it sizes the memif buffers to match)",
    ("eal", "lcores"): "bench pins the server to core 1, the client to core 0",
    ("eal", "file_prefix"): "bench names and removes the DPDK files",
    ("ip", "addr"): "bench's addresses",
    ("ip6", "addr"): "bench's addresses",
}


def memif_bsize(mtu):
    """net_memif's packet buffer (devarg bsize=) for a frame of mtu + 14
    bytes: the next power of two, never below the PMD's default."""
    frame = mtu + ETHER_HDR_LEN
    return max(MEMIF_BSIZE_DEFAULT, 1 << (frame - 1).bit_length())


def mtu_problem(mtu):
    """Why bench cannot run ours with this MTU, or None.  The stack checks
    its own range of [port] mtu; this is what bench itself needs."""
    if mtu < MTU_MIN:
        return f"below {MTU_MIN} (RFC 791's minimum)"
    if memif_bsize(mtu) > MEMIF_BSIZE_MAX:
        return (f"a frame of {mtu + ETHER_HDR_LEN} bytes needs a memif buffer of "
                f"{memif_bsize(mtu)}, above bsize's largest power of two ({MEMIF_BSIZE_MAX})")
    return None


def memif_device(role, sock, mtu=None):
    """[port] device of one end of the direct memif link; with an MTU, its
    buffers sized for the frame (no bsize=: the PMD's 2048 for 1500)."""
    dev = f"net_memif0,role={role},socket={sock},socket-abstract=no"
    return dev + (f",bsize={memif_bsize(mtu)}" if mtu else "")


def parse_fragment(text, name="fragment"):
    """An INI fragment as [(section, key, line)], the lines kept as written
    (the stack reads the values).  Raises ValueError naming file and line."""
    entries, section = [], None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            if not line.endswith("]") or not line[1:-1].strip():
                raise ValueError(f"{name}:{n}: '{line}' is not a [section] line")
            section = line[1:-1].strip()
            continue
        if section is None:
            raise ValueError(f"{name}:{n}: '{line}' comes before any [section]")
        if "=" not in line:
            raise ValueError(f"{name}:{n}: '{line}' is not key = value")
        key = line.split("=", 1)[0].strip()
        if (section, key) in RESERVED:
            raise ValueError(f"{name}:{n}: [{section}] {key} is bench's: "
                             f"{RESERVED[(section, key)]}")
        entries.append((section, key, line))
    return entries


def ours_sections(device, lcore, prefix, addr, mtu=None, tcp=None, addr6=None):
    """Bench's own sections of one end's config, in order: {section: {key: value}}.
    mtu: [port] mtu (None: not written, the stack's 1500); tcp: [tcp] keys;
    addr6: an IPv6 address too ([ip6], /64, no DAD: the link is ours alone)."""
    port = {"device": device, "mbufs": 8191}
    if mtu:
        port["mtu"] = mtu
    sections = {
        "eal": {"lcores": lcore, "hugepages": "off", "no_huge_mem_mb": 256,
                "file_prefix": prefix, "log_level": "warning"},
        "port": port,
        "ip": {"addr": f"{addr}/24"},
        "engine": {"idle_sleep_max_us": 0},
    }
    if addr6:
        sections["ip6"] = {"enable": "on", "addr": f"{addr6}/64", "dad": "off"}
    if tcp:
        sections["tcp"] = dict(tcp)
    return sections


def config_text(sections, fragment=()):
    """The config: bench's sections with the fragment merged in (see above)."""
    order = list(sections) + [s for s, _k, _l in fragment if s not in sections]
    out = []
    for sec in dict.fromkeys(order):
        theirs = [(k, line) for s, k, line in fragment if s == sec]
        overridden = {k for k, _line in theirs}
        out.append(f"[{sec}]")
        out += [f"{k} = {v}" for k, v in sections.get(sec, {}).items() if k not in overridden]
        out += [line for _k, line in theirs]
    return "\n".join(out) + "\n"
