#!/usr/bin/env python3
"""Fails if a public item of berth has no `# Examples` section with a doctest in it.

Reads the same rustdoc JSON as scripts/api_snapshot.py (nightly, feature `futures`), so "public"
means what the API snapshot lists: every module, function, type, trait, constant and macro
reachable from the crate root, every public method of an inherent impl and every method a public
trait declares. Not checked: enum variants, struct fields, trait impls (their methods are the
trait's), items that rustdoc hides.

An item passes when its docs have a `# Examples` (or `# Example`) heading followed, before the
next heading of the same or a higher level, by a code block that rustdoc runs or at least
compiles: a fence with no info string, or `rust`, `no_run`, `should_panic` or `edition20xx`
in it, and neither `ignore`, `text` nor `compile_fail`.

Usage: python3 scripts/check_doc_examples.py   (exit status 1 and a list if an item has none)
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_snapshot  # noqa: E402  (the rustdoc JSON build and the public-path walk)

HEADING = re.compile(r"^(#+)\s+(.*?)\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)\s*(.*?)\s*$")
NOT_RUN = {"ignore", "text", "compile_fail", "sh", "bash", "toml", "console"}


def runnable(info):
    words = {w for w in re.split(r"[,\s]+", info) if w}
    if words & NOT_RUN:
        return False
    return all(w in {"rust", "no_run", "should_panic"} or w.startswith("edition")
               for w in words)


def has_example(docs):
    """True if `docs` has an Examples section holding a doctest."""
    if not docs:
        return False
    level = None  # heading level of the Examples section we are in, if any
    in_fence = None
    for line in docs.splitlines():
        f = FENCE.match(line)
        if in_fence is not None:
            if f and f.group(1)[0] == in_fence[0] and len(f.group(1)) >= len(in_fence):
                in_fence = None
            continue
        if f:
            if level is not None and runnable(f.group(2)):
                return True
            in_fence = f.group(1)
            continue
        h = HEADING.match(line)
        if h:
            n = len(h.group(1))
            if h.group(2).lower() in ("examples", "example"):
                level = n
            elif level is not None and n <= level:
                level = None
    return False


def public_items(api):
    """(shown path, docs) for every item this check covers."""
    out = []
    for id_ in api.public:
        it = api.item(id_)
        name = "::".join(api.primary(id_))
        (kind, v), = it["inner"].items()
        out.append((f"{kind} {name}", it.get("docs")))
        if kind == "trait":
            for iid in v["items"]:
                sub = api.item(iid)
                if "function" in sub["inner"]:
                    out.append((f"fn {name}::{sub['name']}", sub.get("docs")))
        if kind in ("struct", "enum", "union"):
            for iid in v["impls"]:
                im = api.item(iid)["inner"]["impl"]
                if im.get("trait") is not None or im.get("blanket_impl") is not None:
                    continue
                for mid in im["items"]:
                    sub = api.item(mid)
                    if sub is not None and sub["visibility"] == "public":
                        out.append((f"fn {name}::{sub['name']}", sub.get("docs")))
    return sorted(set(out))


def main():
    api = api_snapshot.Api(api_snapshot.build_json())
    items = public_items(api)
    missing = [name for name, docs in items if not has_example(docs)]
    for name in missing:
        print(f"no `# Examples` doctest: {name}")
    print(f"check_doc_examples: {len(items) - len(missing)} of {len(items)} public items "
          f"have an `# Examples` doctest")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
