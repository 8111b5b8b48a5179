#!/usr/bin/env python3
"""The include-graph check: the C++ modules' #include "..." graph keeps its layers.

Reads <root>/tools/include-layers.conf (its comments describe the format), scans the *.h and *.cpp files under
the configured source folders, resolves each #include "x/y.h" as the compiler does (the including file's own
folder, then the include roots in order) and maps every file to its module: the folder directly under the
deepest root that holds it. Includes with <>, and quoted ones that resolve to no file (system headers,
generated protobuf headers that exist only in the build tree), are not part of the graph.

Fails (exit 1) on a cycle between modules, a library module that includes a controller module, and a library or
controller module that includes a binary module; always prints the module graph it checked first. Exit 2: the
configuration cannot be read.

Usage: tools/check-includes.py [--root DIR]   (DIR: the tree to check; default: this repository)
"""

import argparse
import os
import re
import sys
from collections import defaultdict

CONF = os.path.join("tools", "include-layers.conf")
EXTENSIONS = (".h", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
KEYWORDS = ("root", "sources", "library-root", "controller-root", "binary")
MAX_CYCLES = 50


class ConfError(Exception):
    pass


def norm(path):
    """A repository-relative path in one spelling: no ./, no trailing /, "." for the root itself."""
    path = os.path.normpath(path.strip())
    return "." if path in ("", ".") else path


def read_conf(root):
    path = os.path.join(root, CONF)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise ConfError(f"cannot read {path}: {e.strerror}")
    conf = {k: [] for k in KEYWORDS}
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        keyword, values = words[0], words[1:]
        if keyword not in KEYWORDS:
            raise ConfError(f"{CONF}:{number}: unknown keyword '{keyword}' (known: {', '.join(KEYWORDS)})")
        if not values:
            raise ConfError(f"{CONF}:{number}: '{keyword}' names no folder")
        for value in values:
            if os.path.isabs(value) or norm(value).startswith(".."):
                raise ConfError(f"{CONF}:{number}: '{value}' is not a path inside the repository")
            conf[keyword].append(norm(value))
    if not conf["root"]:
        raise ConfError(f"{CONF}: no 'root' line")
    if not conf["sources"]:
        conf["sources"] = list(conf["root"])
    return conf


def plural(n, noun):
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def is_under(path, folder):
    return folder == "." or path == folder or path.startswith(folder + "/")


class Layout:
    def __init__(self, root, conf):
        self.root = root
        self.roots = conf["root"]
        self.present_roots = [r for r in self.roots if os.path.isdir(os.path.join(root, r))]
        # Deepest first: a file belongs to the most specific root that holds it.
        self.by_depth = sorted(self.present_roots, key=lambda r: (r != ".", r.count("/"), len(r)), reverse=True)
        self.library_roots = conf["library-root"]
        self.controller_roots = conf["controller-root"]
        self.binaries = set(conf["binary"])

    def module_of(self, path):
        """The module of a repository-relative file path, or None when no root holds it."""
        for r in self.by_depth:
            if is_under(path, r):
                rest = path if r == "." else path[len(r) + 1:]
                parts = rest.split("/")
                if len(parts) == 1:  # a root's own top-level file
                    return r
                return parts[0] if r == "." else f"{r}/{parts[0]}"
        return None

    def root_of_module(self, module):
        for r in self.by_depth:
            if module == r:
                return r
            if is_under(module, r):
                return r
        return None

    def kind(self, module):
        if module in self.binaries:
            return "binary"
        r = self.root_of_module(module)
        if r in self.controller_roots:
            return "controller"
        if r in self.library_roots:
            return "library"
        return "other"

    def resolve(self, including, name):
        """The repository-relative path #include "name" in file `including` reaches, or None."""
        candidates = [os.path.join(os.path.dirname(including), name)]
        candidates += [name if r == "." else os.path.join(r, name) for r in self.present_roots]
        for candidate in candidates:
            candidate = os.path.normpath(candidate)
            if candidate.startswith("..") or os.path.isabs(candidate):
                continue
            if os.path.isfile(os.path.join(self.root, candidate)):
                return candidate
        return None


def source_files(root, sources):
    seen = set()
    for source in sources:
        top = os.path.join(root, source)
        if not os.path.isdir(top):
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    path = norm(os.path.relpath(os.path.join(folder, name), root))
                    if path not in seen:
                        seen.add(path)
                        yield path


def scan(root, layout, sources):
    """modules: every module with a checked file; edges: (from, to) -> [(file, line, include)]."""
    modules = set()
    edges = defaultdict(list)
    files = 0
    for path in source_files(root, sources):
        module = layout.module_of(path)
        if module is None:
            continue
        files += 1
        modules.add(module)
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as e:
            print(f"check-includes: cannot read {path}: {e.strerror}", file=sys.stderr)
            continue
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = layout.resolve(path, m.group(1))
            if target is None:
                continue
            to = layout.module_of(target)
            if to is None:
                continue
            modules.add(to)
            if to != module:
                edges[(module, to)].append((path, number, m.group(1)))
    return files, modules, edges


def strongly_connected(nodes, succ):
    """Tarjan's algorithm, iterative: the components with more than one module."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(succ[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return result


def cycles_in(component, succ, limit):
    """The elementary cycles of one strongly connected component (each from its smallest module), at most
    `limit` of them: for each module in order, the cycles through it among the modules after it."""
    found = []
    order = sorted(component)
    for i, start in enumerate(order):
        allowed = set(order[i:])
        path = [start]
        on_path = {start}

        def extend(node):
            for child in sorted(succ[node]):
                if len(found) >= limit:
                    return
                if child == start:
                    found.append(list(path))
                elif child in allowed and child not in on_path:
                    path.append(child)
                    on_path.add(child)
                    extend(child)
                    path.pop()
                    on_path.discard(child)

        extend(start)
        if len(found) >= limit:
            break
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the tree to check (default: this repository)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    try:
        conf = read_conf(root)
    except ConfError as e:
        print(f"check-includes: {e}", file=sys.stderr)
        return 2
    layout = Layout(root, conf)
    missing = [d for d in conf["root"] + conf["sources"] if not os.path.isdir(os.path.join(root, d))]
    files, modules, edges = scan(root, layout, conf["sources"])

    succ = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)

    present_sources = [s for s in conf["sources"] if s not in missing]
    print(f"include graph of {files} files under {', '.join(present_sources) or '(nothing)'}"
          f" ({CONF}):")
    if missing:
        print(f"  not present, skipped: {', '.join(sorted(set(missing)))}")
    for module in sorted(modules):
        out = sorted((b, len(sites)) for (a, b), sites in edges.items() if a == module)
        targets = ", ".join(f"{b} ({n})" for b, n in out) or "(none)"
        print(f"  {module} [{layout.kind(module)}] → {targets}")

    failures = []
    # (a) cycles
    cycles = []
    for component in strongly_connected(modules, succ):
        cycles += cycles_in(component, succ, MAX_CYCLES - len(cycles))
        if len(cycles) >= MAX_CYCLES:
            break
    cycles.sort(key=lambda c: (len(c), c))
    for cycle in cycles:
        ring = cycle + [cycle[0]]
        print(f"cycle: {' → '.join(ring)}")
        for a, b in zip(ring, ring[1:]):
            path, line, name = edges[(a, b)][0]
            print(f"  {a} → {b}: {path}:{line} #include \"{name}\"")
    if cycles:
        more = " (or more)" if len(cycles) >= MAX_CYCLES else ""
        failures.append(plural(len(cycles), "cycle") + more)

    # (b) a library including a controller, (c) a library or controller including a binary
    def report(title, wanted):
        count = 0
        for (a, b), sites in sorted(edges.items()):
            if not wanted(layout.kind(a), layout.kind(b)):
                continue
            for path, line, name in sites:
                print(f"{title}: {path}:{line}: {a} includes {b} (#include \"{name}\")")
                count += 1
        return count

    n = report("library includes a controller", lambda a, b: a == "library" and b == "controller")
    if n:
        failures.append(plural(n, "library → controller include"))
    n = report("includes a binary", lambda a, b: a in ("library", "controller") and b == "binary")
    if n:
        failures.append(plural(n, "library/controller → binary include"))

    summary = f"include graph: {plural(len(modules), 'module')}, {plural(len(edges), 'edge')}"
    if failures:
        print(f"{summary}, FAILED: {', '.join(failures)}")
        return 1
    print(f"{summary}, OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
