#!/usr/bin/env python3
"""The import graph of src/ between top-level modules (folders and single-file modules), read
from every `crate::<module>` path in the code (use lines and inline paths, tests included).

Prints the graph as a Mermaid block for docs/design.md and exits 1 when two top-level modules
import each other, directly or through others (a cycle), or when a module imports one of its
own layer or a higher one (LAYERS, top first), naming the edge.

    python3 docs/import-graph.py            # the Mermaid block
    python3 docs/import-graph.py --check    # only the cycle check (CI)
"""

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# Top first: a module may import only modules of lower layers.
LAYERS = [
    ["cli"],
    ["server"],
    ["web"],
    ["api", "email", "monitor", "notify"],
    ["service"],
    ["store", "transfer"],
    ["model"],
    ["schedule", "tls", "error_line"],
]
# `crate::x` anywhere, and the names inside `use crate::{x, y::z}`.
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\}", re.S)


def top(path: Path) -> str | None:
    rel = path.relative_to(SRC)
    if len(rel.parts) == 1:
        name = rel.stem
        return None if name in ("lib", "main") else name
    return rel.parts[0]


def edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for file in sorted(SRC.rglob("*.rs")):
        here = top(file)
        if here is None:
            continue
        text = file.read_text()
        # Comments may name modules without importing them.
        code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
        names = set(PATH.findall(code))
        for group in GROUP.findall(code):
            names.update(re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group))
        graph.setdefault(here, set())
        for name in names:
            is_module = (SRC / name).is_dir() or (SRC / f"{name}.rs").exists()
            if name != here and is_module:
                graph[here].add(name)
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def upward(graph: dict[str, set[str]]) -> list[str]:
    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    wrong = []
    for node in sorted(graph):
        if node not in level:
            wrong.append(f"{node} has no layer in LAYERS")
            continue
        for nxt in sorted(graph[node]):
            if level.get(nxt, -1) <= level[node]:
                wrong.append(f"{node} -> {nxt} points up or sideways")
    return wrong


def main() -> int:
    graph = edges()
    found = cycle(graph)
    wrong = upward(graph)
    if "--check" not in sys.argv:
        print("```mermaid")
        print("graph TD")
        for node in sorted(graph):
            for nxt in sorted(graph[node]):
                print(f"  {node} --> {nxt}")
        print("```")
    if found:
        print("cycle between top-level modules: " + " -> ".join(found), file=sys.stderr)
        return 1
    if wrong:
        print("\n".join(wrong), file=sys.stderr)
        return 1
    if "--check" in sys.argv:
        print(f"{len(graph)} top-level modules in {len(LAYERS)} layers, no cycle, none upward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
