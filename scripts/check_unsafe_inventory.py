#!/usr/bin/env python3
"""Fails if an `unsafe` block or `unsafe impl` in core/src has no entry in core/UNSAFE.md.

An entry is found by file and function, not line number: the section of UNSAFE.md whose heading
names the file (or its directory, for a heading like `core/src/pool/`) must mention, in a table
row, the function that contains the `unsafe` block (the nearest `fn NAME` above it), or for an
`unsafe impl Trait for Type`, the type name. `unsafe fn` declarations are not sites themselves
(their callers' `unsafe` blocks are). Test modules (`mod tests`) are skipped.

Usage: python3 scripts/check_unsafe_inventory.py   (exit status 1 and a list if incomplete)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "core" / "src"
INVENTORY = ROOT / "core" / "UNSAFE.md"

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
IMPL = re.compile(r"unsafe\s+impl\b[^{]*?\bfor\s+([A-Za-z_][A-Za-z0-9_]*)")
BLOCK = re.compile(r"\bunsafe\s*\{")


def sections(text):
    """{heading path: body} for every `## `path`...` heading."""
    out = {}
    parts = re.split(r"^## ", text, flags=re.M)
    for part in parts[1:]:
        heading, _, body = part.partition("\n")
        m = re.search(r"`(core/src/[^`]*)`", heading)
        if m:
            out[m.group(1)] = out.get(m.group(1), "") + body
    return out


def sites(path):
    """(line number, name) for every unsafe block / unsafe impl in a file, outside tests."""
    lines = path.read_text().splitlines()
    current_fn = None
    in_tests = False
    found = []
    for i, line in enumerate(lines, 1):
        code = line.split("//", 1)[0]
        if re.match(r"\s*mod tests\b", code):
            in_tests = True
        if in_tests:
            continue
        m = FN.search(code)
        if m:
            current_fn = m.group(1)
        m = IMPL.search(code)
        if m:
            found.append((i, m.group(1)))
            continue
        if BLOCK.search(code):
            found.append((i, current_fn or "?"))
    return found


def main():
    inv = sections(INVENTORY.read_text())
    missing = []
    for path in sorted(SRC.rglob("*.rs")):
        rel = path.relative_to(ROOT).as_posix()
        body = inv.get(rel)
        if body is None:
            for key, b in inv.items():
                if key.endswith("/") and rel.startswith(key):
                    body = b
                    break
        for line, name in sites(path):
            rows = [r for r in (body or "").splitlines() if r.startswith("|")]
            names = [name] + (["Drop"] if name == "drop" else [])
            pattern = "|".join(r"\b" + re.escape(n) + r"\b" for n in names)
            if body is None or not any(re.search(pattern, r) for r in rows):
                missing.append(f"{rel}:{line}: `{name}`")
    if missing:
        print("core/UNSAFE.md has no entry for these unsafe sites (file section + function):")
        for m in missing:
            print("  " + m)
        sys.exit(1)
    print("core/UNSAFE.md covers every unsafe site in core/src")


if __name__ == "__main__":
    main()
