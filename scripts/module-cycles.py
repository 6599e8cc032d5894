#!/usr/bin/env python3
"""No cycle in a crate's module graph that holds an error module and a handler module.

Each crate's modules (its `src/` files) and the paths between them (`crate::a::b`, `super::x`,
in `use` lines and in code) make a graph; a cycle through a service's error type and its
handlers means the error knows the routes that answer with it, so neither can be read, moved
or tested alone (the refusals belong beside the rules that make them, the handlers use both).
Run by `make test`; exits 1 naming each such cycle's modules, 0 with a count of the cycles
left (those without both kinds, which are allowed).
"""

import re
import subprocess
import sys
from collections import defaultdict

PATH = re.compile(r"\b(crate|super)((?:::\w+)+)")


def crates():
    # Files git does not track yet count too (a new module is checked before its commit).
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             "crates/*/src/**.rs", "services/*/src/**.rs"],
                            capture_output=True, text=True, check=True).stdout.split()
    by_crate = defaultdict(list)
    for path in listed:
        root = path.split("/src/", 1)[0]
        by_crate[root].append(path)
    return by_crate


def module_of(root, path):
    """`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` the root."""
    rel = path[len(root) + len("/src/"):][:-3]
    parts = rel.split("/")
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
        parts = parts[:-1]
    return tuple(parts)


def without_tests(text):
    found = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod ", text, re.M)
    text = text[:found.start()] if found else text
    return "\n".join(line.split("//", 1)[0] for line in text.split("\n"))


def graph(root, files):
    modules = {module_of(root, path): path for path in files}
    edges = defaultdict(set)
    for module, path in modules.items():
        is_dir_module = path.endswith("mod.rs") or path.endswith(("lib.rs", "main.rs"))
        here = module if is_dir_module else module[:-1]
        text = without_tests(open(path, encoding="utf-8").read())
        # `use super::{a, b}` and `use crate::x::{y, z}`: each name of the list.
        text = re.sub(r"\b(crate|super)((?:::\w+)*)::\{([^}]*)\}",
                      lambda m: " ".join(f"{m.group(1)}{m.group(2)}::{name.strip().split(' ')[0]}"
                                         for name in m.group(3).split(",") if name.strip()),
                      text)
        for anchor, rest in PATH.findall(text):
            parts = rest.strip(":").split("::")
            base = list(here) if anchor == "super" else []
            if anchor == "super":
                base = base[:-1] if is_dir_module else list(module[:-1])
                while parts and parts[0] == "super":
                    base, parts = base[:-1], parts[1:]
            target = tuple(base + parts)
            while target and target not in modules:
                target = target[:-1]
            if target != module and target in modules and target:
                edges[module].add(target)
    return modules, edges


def cycles(modules, edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in modules:
        if v not in index:
            visit(v)
    return out


def main():
    bad, other = [], 0
    for root, files in sorted(crates().items()):
        modules, edges = graph(root, files)
        for component in cycles(modules, edges):
            names = ["::".join(m) for m in component]
            has_error = any(m and m[-1].startswith("error") for m in component)
            has_handler = any("handlers" in m or "routes" in m[-1:] for m in component)
            if has_error and has_handler:
                bad.append(f"  {root}: {', '.join(names)}")
            else:
                other += 1
    if bad:
        print("a cycle through an error module and a handler module:")
        print("\n".join(bad))
        return 1
    print(f"module graph: no cycle through an error and a handler module ({other} other cycles)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
