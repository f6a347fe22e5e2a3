#!/usr/bin/env python3
"""check-deps: every .c and .h file includes only what its room may see.

The rooms and what each may include are in tools/rooms.txt.  For every
file of a checked room this follows its #include lines transitively, the
way the compiler resolves them, and reports each header of a forbidden room
in the closure at the #include line of the file that leads to it, with the
chain of headers in between.  It also fails on a file that belongs to no
room (a new folder must be added to the table), on a quoted include that
resolves to no file, and on a room's private header (*_priv.h) included from
another room.

    tools/check-deps.py [--root DIR] [--rooms FILE]

Exit 0 when clean, 1 on violations, 2 on usage errors.
"""

import argparse
import os
import re
import sys
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))

# The -I directories of meson.build, in the compiler's order: the repo root
# ("tcp/tcp.h") and the installed headers' folder ("userstack.h").
INCLUDE_DIRS = [".", "stack/include"]

# Folders that are not source: meson build directories (wherever they are)
# hold generated files that are no room's, hidden folders hold tooling.
BUILD_DIR_MARKERS = ("meson-private", "meson-info")

# A header named *_priv.h is its room's own (a struct other rooms must not
# poke into): no other checked room may include it, allowed or not.
PRIVATE_SUFFIX = "_priv.h"

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class UsageError(Exception):
    pass


class Room:
    """One line of rooms.txt."""

    def __init__(self, folder, name, allowed):
        self.folder = folder
        self.name = name
        self.allowed = allowed  # room names and header paths
        # "*" stands for one path component; the matched text is the room's
        # instance, so apps/a/ and apps/b/ are both "apps" but not each other.
        self.regex = re.compile(
            "^" + "[^/]+".join(map(re.escape, folder.split("*"))))

    def match(self, path):
        m = self.regex.match(path)
        return m.group(0) if m else None

    def may_include(self):
        return ", ".join(self.allowed) or "nothing but itself"


def load_rooms(path):
    rooms = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise UsageError(f"cannot read the room table: {e}")
    for n, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) < 2 or not fields[0].endswith("/"):
            raise UsageError(f"{path}:{n}: expected 'folder/ room [may include...]'")
        rooms.append(Room(fields[0], fields[1], fields[2:]))
    names = {r.name for r in rooms}
    for r in rooms:
        for a in r.allowed:
            if "/" not in a and a not in names:
                raise UsageError(f"{path}: room {r.name} may include unknown room '{a}'")
    return rooms


def room_of(rooms, path):
    """(room, instance) of the longest folder that holds path, or (None, None)."""
    best = (None, None)
    for r in rooms:
        inst = r.match(path)
        if inst and (best[1] is None or len(inst) > len(best[1])):
            best = (r, inst)
    return best


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d != "__pycache__"
            and not any(os.path.isdir(os.path.join(dirpath, d, m)) for m in BUILD_DIR_MARKERS))
        for name in sorted(filenames):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(dirpath, name), root)


class Tree:
    """Our files and their #include lines, resolved as gcc -I. -Istack/include does."""

    def __init__(self, root):
        self.root = root
        self.cache = {}

    def exists(self, path):
        return os.path.isfile(os.path.join(self.root, path))

    def resolve(self, path, name, quoted):
        # Quoted includes look in the including file's folder first.
        dirs = ([os.path.dirname(path)] if quoted else []) + INCLUDE_DIRS
        for d in dirs:
            cand = os.path.normpath(os.path.join(d, name))
            if not cand.startswith("..") and self.exists(cand):
                return cand
        return None

    def includes(self, path):
        """[(line, name, resolved path or None)] for quoted includes and for
        angle includes that resolve to one of our headers (<userstack.h>)."""
        if path not in self.cache:
            out = []
            with open(os.path.join(self.root, path), encoding="utf-8",
                      errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    quoted = m.group(1) == '"'
                    target = self.resolve(path, m.group(2), quoted)
                    if quoted or target:
                        out.append((n, m.group(2), target))
            self.cache[path] = out
        return self.cache[path]


def check_file(tree, rooms, path, room, inst):
    """Problems of one file: unresolved includes, and the first forbidden
    header on every include path.  What lies beyond a forbidden header is
    not followed: the crossing is the thing to fix, the rest follows it."""
    problems = []
    queue = deque()
    for line, name, target in tree.includes(path):
        if target is None:
            looked = ", ".join([os.path.dirname(path) or "."] + INCLUDE_DIRS)
            problems.append(f'{path}:{line}: "{name}" resolves to no file '
                            f'(looked in {looked})')
        else:
            queue.append((target, line, [target]))
    seen = {path}
    while queue:  # breadth first, so each header is shown by its shortest chain
        hdr, line, chain = queue.popleft()
        if hdr in seen:
            continue
        seen.add(hdr)
        to_room, to_inst = room_of(rooms, hdr)
        if to_room is None:
            continue  # reported as a file of no room on its own
        if to_inst != inst and hdr.endswith(PRIVATE_SUFFIX):
            via = f" [via {' -> '.join(chain)}]" if len(chain) > 1 else ""
            problems.append(
                f"{path}:{line}: {hdr} is private to room {to_room.name}{via}; "
                f"{room.name} uses that room's public headers")
            continue
        if to_inst != inst and to_room.name not in room.allowed and hdr not in room.allowed:
            via = f" [via {' -> '.join(chain)}]" if len(chain) > 1 else ""
            where = f" at {to_inst}" if "*" in to_room.folder else ""
            problems.append(
                f"{path}:{line}: {room.name} ({inst}) may not include {hdr} "
                f"(room {to_room.name}{where}){via}; {room.name} may include: {room.may_include()}")
            continue
        for _, _, target in tree.includes(hdr):
            if target is not None:
                queue.append((target, line, chain + [target]))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(HERE),
                    help="the tree to check (default: the repo holding this script)")
    ap.add_argument("--rooms", default=os.path.join(HERE, "rooms.txt"),
                    help="the room table (default: rooms.txt beside this script)")
    args = ap.parse_args()  # exits 2 on bad arguments
    try:
        if not os.path.isdir(args.root):
            raise UsageError(f"--root {args.root}: not a directory")
        rooms = load_rooms(args.rooms)
    except UsageError as e:
        print(f"check-deps: {e}", file=sys.stderr)
        return 2

    tree = Tree(args.root)
    table = os.path.relpath(args.rooms, args.root)
    if table.startswith(".."):
        table = args.rooms
    problems, checked, used = [], 0, set()
    for path in source_files(args.root):
        room, inst = room_of(rooms, path)
        if room is None:
            problems.append(f"{path}: belongs to no room; add its folder to {table}")
            continue
        if room.name == "unchecked":
            continue
        checked += 1
        used.add(room.name)
        problems += check_file(tree, rooms, path, room, inst)

    if problems:
        print("\n".join(problems))
        noun = "violation" if len(problems) == 1 else "violations"
        print(f"check-deps: {checked} files in {len(used)} rooms, {len(problems)} {noun}")
        return 1
    print(f"check-deps: {checked} files in {len(used)} rooms, no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
