"""The structure figures of the kgrag source tree, measured the same way on any checkout.

    .venv/bin/python scripts/structure_report.py                  # this checkout's src/
    .venv/bin/python scripts/structure_report.py --src /path/to/other/checkout/src --json
    .venv/bin/python scripts/structure_report.py --no-mypy        # the static figures alone

What is measured, and how (every figure is read from the source with ``ast``;
nothing is imported):

- **modules, lines per module**: every ``.py`` file under ``kgrag/``; lines are
  *total* lines (blank lines and comments included), median, p90 (nearest
  rank) and max; the non-blank median is printed beside them.
- **functions over 60 lines**: every ``def`` / ``async def`` (methods and
  nested functions included), from its ``def`` line to its last line
  (decorators excluded).
- **Any in signatures**: functions with ``Any`` anywhere in a parameter or
  return annotation (``dict[str, Any]``, ``list[Any] | None``, ``*args: Any``...).
- **mypy --strict**: ``mypy --strict kgrag`` run from the checkout's root (so
  its ``pyproject.toml`` and the pydantic plugin apply), with a cache of its
  own under the temporary directory; errors and the files holding them.
- **import cycles between packages**: a package is ``kgrag.<name>`` (a
  sub-package or a top-level module; ``kgrag/__init__`` is ``kgrag``). Every
  import statement counts, at module level or inside a function, except
  those under ``if TYPE_CHECKING:``. A cycle is a strongly connected group
  of packages; the module imports that join it are listed.
- **namespace literals**: the store namespace names are collected from
  ``storage/layout.py`` when it exists and from every namespace argument in
  the tree (the first argument of ``.kv()`` / ``.vectors()``, a ``namespace=``
  keyword, a parameter named ``namespace`` / ``ns`` of a function defined in
  the tree; a constant there is resolved through the imports to its string).
  A literal counts where it is used *as a namespace*, outside the layout
  module: in such an argument, assigned to a constant, in a tuple or list of
  namespace names, or compared with a namespace variable. Dict keys and
  output fields spelled alike ("chunks" in a status dict) do not count. The
  layout module is ``storage/layout.py``, or before it existed the module
  that defined the namespace constants (``indexing/facts.py``,
  ``pipeline/facts.py``).
- **probes of store features**: ``getattr`` / ``hasattr`` with a constant
  name on an object whose expression names a store (``storage``, ``store``,
  ``db``, ``backend``), or on any object when the name is a member only a
  storage backend class defines (``claim_keys``, ``queue``...).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

LONG_FUNCTION = 60
LAYOUT_MODULES = ("kgrag.storage.layout", "kgrag.indexing.facts", "kgrag.pipeline.facts")
NAMESPACE_PARAMS = re.compile(r"^(namespace|ns|\w+_namespace|\w+_ns)$")
STORE_WORDS = re.compile(r"(^|_)(storage|store|stores|db|backend)$")
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
BACKENDS = ("kgrag.storage.sqlite", "kgrag.storage.postgres")
OWN_NAMESPACES = ("kgrag.storage.testing",)  # the conformance suite's scratch namespaces


@dataclass(slots=True)
class Module:
    """One source file: its dotted name, path, text and syntax tree."""

    name: str
    path: Path
    text: str
    tree: ast.Module
    is_package: bool

    @property
    def package(self) -> str:
        """The top-level package (or top-level module) this module belongs to."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 1 else "kgrag"


def load_tree(src: Path) -> dict[str, Module]:
    """Every module under ``src/kgrag``, by dotted name."""
    root = src / "kgrag"
    out: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        text = path.read_text(encoding="utf-8")
        name = ".".join(parts)
        out[name] = Module(name, path, text, ast.parse(text, str(path)), is_package)
    return out


def percentile(values: list[int], q: float) -> int:
    """The nearest-rank percentile ``q`` (0..100) of ``values``."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


# --- sizes -------------------------------------------------------------------------------


def sizes(mods: dict[str, Module]) -> dict[str, object]:
    """Modules and lines per module (total lines; non-blank median beside)."""
    total = [len(m.text.splitlines()) for m in mods.values()]
    nonblank = [sum(1 for line in m.text.splitlines() if line.strip()) for m in mods.values()]
    return {
        "modules": len(total),
        "lines": sum(total),
        "median": statistics.median(total),
        "p90": percentile(total, 90),
        "max": max(total),
        "largest": max(mods.values(), key=lambda m: len(m.text.splitlines())).name,
        "median_nonblank": statistics.median(nonblank),
    }


def functions(
    mods: dict[str, Module],
) -> Iterator[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for mod in mods.values():
        for node in ast.walk(mod.tree):
            if isinstance(node, FUNCS):
                yield mod, node


def mentions_any(node: ast.expr) -> bool:
    """Whether an annotation names ``Any`` (string annotations parsed too)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "Any":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "Any":
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            try:
                inner = ast.parse(sub.value, mode="eval").body
            except SyntaxError:
                continue
            if mentions_any(inner):
                return True
    return False


def signature_has_any(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    notes = [p.annotation for p in params if p is not None and p.annotation is not None]
    if fn.returns is not None:
        notes.append(fn.returns)
    return any(mentions_any(n) for n in notes)


def function_figures(mods: dict[str, Module]) -> dict[str, object]:
    """Functions over 60 lines, and the share with ``Any`` in their signature."""
    count = with_any = 0
    long: list[str] = []
    for mod, fn in functions(mods):
        count += 1
        with_any += signature_has_any(fn)
        length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
        if length > LONG_FUNCTION:
            long.append(f"{mod.name}.{fn.name} ({length} lines)")
    return {
        "functions": count,
        "over_60": len(long),
        "over_60_list": long,
        "any_in_signature": with_any,
        "any_share": round(with_any / count, 4) if count else 0.0,
    }


# --- imports -----------------------------------------------------------------------------


def is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``node`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from runtime_nodes(other)
            continue
        yield child
        yield from runtime_nodes(child)


def absolute(mod: Module, node: ast.ImportFrom) -> str:
    """The absolute module name an ``ImportFrom`` reads from."""
    if not node.level:
        return node.module or ""
    base = mod.name.split(".")
    if not mod.is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(mod: Module, known: set[str]) -> Iterator[tuple[str, int]]:
    """(module of this tree, line) for each runtime import in ``mod``."""
    for node in runtime_nodes(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = absolute(mod, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:
                    yield sub, node.lineno
                elif base in known:
                    yield base, node.lineno


@dataclass(slots=True)
class Edge:
    """One runtime import of one module by another."""

    source: str  # importing module
    target: str  # imported module
    line: int


def import_edges(mods: dict[str, Module]) -> list[Edge]:
    """Every runtime import between two modules of the tree."""
    known = set(mods)
    return [
        Edge(mod.name, target, line)
        for mod in mods.values()
        for target, line in imports_of(mod, known)
        if target != mod.name
    ]


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "kgrag"


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: list[str] = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def package_cycles(edges: list[Edge]) -> list[dict[str, object]]:
    """The package-level import cycles, each with the module imports that join it."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        a, b = package_of(e.source), package_of(e.target)
        if a != b:
            graph.setdefault(a, set()).add(b)
    out: list[dict[str, object]] = []
    for group in strongly_connected(graph):
        members = set(group)
        joins = sorted(
            {
                f"{e.source}:{e.line} -> {e.target}"
                for e in edges
                if package_of(e.source) in members
                and package_of(e.target) in members
                and package_of(e.source) != package_of(e.target)
            }
        )
        out.append({"packages": group, "imports": joins})
    return out


# --- namespace literals --------------------------------------------------------------------


@dataclass(slots=True)
class Symbols:
    """What a module's names refer to: its string constants and what it imports."""

    strings: dict[str, str] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # local -> (module, name)
    modules: dict[str, str] = field(default_factory=dict)  # local -> module


def symbols(mod: Module, known: set[str]) -> Symbols:
    out = Symbols()
    for statement in mod.tree.body:
        target, value = assigned(statement)
        if target is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
            out.strings[target] = value.value
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.ImportFrom):
            base = absolute(mod, node)
            for alias in node.names:
                local = alias.asname or alias.name
                if f"{base}.{alias.name}" in known:
                    out.modules[local] = f"{base}.{alias.name}"
                else:
                    out.imported[local] = (base, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in known:
                    out.modules[alias.asname] = alias.name
    return out


def assigned(node: ast.AST) -> tuple[str | None, ast.expr | None]:
    """``NAME = value`` (or annotated): the name and the value; else (None, None)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        if isinstance(node.targets[0], ast.Name):
            return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return node.target.id, node.value
    return None, None


class Resolver:
    """Finds the string a namespace expression stands for, through the imports."""

    def __init__(self, mods: dict[str, Module]) -> None:
        known = set(mods)
        self.table = {name: symbols(m, known) for name, m in mods.items()}

    def origin(self, module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """The (module, constant) a name refers to, where it is a string constant."""
        sym = self.table.get(module)
        if sym is None or depth > 6:
            return None
        if name in sym.strings:
            return module, name
        if name in sym.imported:
            return self.origin(*sym.imported[name], depth=depth + 1)
        return None

    def where(self, module: str, expr: ast.expr) -> tuple[str, str] | None:
        """The constant ``expr`` names (``NAME`` or ``module.NAME``), if any."""
        if isinstance(expr, ast.Name):
            return self.origin(module, expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            owner = self.table[module].modules.get(expr.value.id)
            return self.origin(owner, expr.attr) if owner else None
        return None

    def value(self, module: str, expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        found = self.where(module, expr)
        return self.table[found[0]].strings[found[1]] if found else None


def namespace_params(mods: dict[str, Module]) -> dict[str, set[tuple[int, str]]]:
    """Function name -> (position as called, name) of each namespace parameter."""
    out: dict[str, set[tuple[int, str]]] = {}
    for _, fn in functions(mods):
        params = [*fn.args.posonlyargs, *fn.args.args]
        if params and params[0].arg in ("self", "cls"):
            params = params[1:]
        for i, p in enumerate(params):
            if NAMESPACE_PARAMS.match(p.arg):
                out.setdefault(fn.name, set()).add((i, p.arg))
        for p in fn.args.kwonlyargs:
            if NAMESPACE_PARAMS.match(p.arg):
                out.setdefault(fn.name, set()).add((-1, p.arg))
    return out


def callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else None


def namespace_args(call: ast.Call, params: dict[str, set[tuple[int, str]]]) -> list[ast.expr]:
    """The arguments of ``call`` given where a namespace is expected."""
    out = [k.value for k in call.keywords if k.arg and NAMESPACE_PARAMS.match(k.arg)]
    for index, _ in params.get(callee(call) or "", ()):
        if 0 <= index < len(call.args) and not isinstance(call.args[index], ast.Starred):
            out.append(call.args[index])
    return out


def in_layout(module: str, layout: str | None) -> bool:
    """Whether ``module`` is the layout module or, when it is a package, inside it."""
    return layout is not None and (module == layout or module.startswith(layout + "."))


def layout_module(mods: dict[str, Module]) -> str | None:
    """Where the namespace names live: ``storage/layout.py``, or the module that held them."""
    return next((name for name in LAYOUT_MODULES if name in mods), None)


@dataclass(slots=True)
class Namespaces:
    """The namespace names of a tree, and the constants that name one."""

    names: set[str] = field(default_factory=set)
    constants: set[tuple[str, str]] = field(default_factory=set)  # (module, NAME)


def in_scope(mod: Module) -> bool:
    """Modules whose namespaces are the index's: not the conformance suite's own."""
    return not mod.name.startswith(OWN_NAMESPACES)


def collect_namespaces(mods: dict[str, Module], res: Resolver) -> Namespaces:
    """Every store namespace name: the layout's constants and every namespace argument."""
    params = namespace_params(mods)
    out = Namespaces()
    for mod in filter(in_scope, mods.values()):
        for node in ast.walk(mod.tree):
            given: list[ast.expr] = []
            if isinstance(node, ast.Call):
                given = namespace_args(node, params)
            elif isinstance(node, FUNCS):
                given = [d for _, d in namespace_defaults(node)]
            for arg in given:
                value, where = res.value(mod.name, arg), res.where(mod.name, arg)
                out.names.update([value] if value is not None else [])
                out.constants.update([where] if where else [])
    layout = layout_module(mods)
    for name in mods:
        if layout == "kgrag.storage.layout" and in_layout(name, layout):
            out.names.update(v for v in res.table[name].strings.values() if v.isidentifier())
    return out


def namespace_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.expr]]:
    """(parameter, default) for each namespace parameter with a default."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
    return [(p.arg, d) for p, d in pairs if NAMESPACE_PARAMS.match(p.arg)]


def is_namespace_var(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Name):
        return bool(NAMESPACE_PARAMS.match(expr.id))
    return isinstance(expr, ast.Attribute) and expr.attr == "namespace"


def literal_uses(
    mod: Module, ns: Namespaces, params: dict[str, set[tuple[int, str]]]
) -> Iterator[tuple[int, str, str]]:
    """(line, literal, how) for each namespace name spelled as a namespace in ``mod``."""

    def hits(expr: ast.expr | None, how: str) -> Iterator[tuple[int, str, str]]:
        if isinstance(expr, ast.Constant) and expr.value in ns.names:
            yield expr.lineno, str(expr.value), how

    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Call):
            for arg in namespace_args(node, params):
                yield from hits(arg, "argument")
        elif isinstance(node, FUNCS):
            for _, default in namespace_defaults(node):
                yield from hits(default, "default")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            target, value = assigned(node)
            if (mod.name, target) in ns.constants or (target and NAMESPACE_PARAMS.match(target)):
                yield from hits(value, "constant")
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
            if all(isinstance(e, ast.Constant) and e.value in ns.names for e in node.elts):
                for e in node.elts:
                    yield from hits(e, "collection")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_namespace_var(s) for s in sides):
                for s in sides:
                    yield from hits(s, "comparison")


def namespace_figures(mods: dict[str, Module]) -> dict[str, object]:
    """Namespace names, and where one is spelled as a namespace outside the layout module."""
    res = Resolver(mods)
    ns = collect_namespaces(mods, res)
    params = namespace_params(mods)
    layout = layout_module(mods)
    found: set[str] = set()
    for mod in filter(in_scope, mods.values()):
        if not in_layout(mod.name, layout):
            found.update(
                f"{mod.name}:{line} {value!r} ({how})"
                for line, value, how in literal_uses(mod, ns, params)
            )
    return {
        "layout_module": layout,
        "namespace_names": sorted(ns.names),
        "literals_outside_layout": len(found),
        "literals": sorted(found),
    }


# --- probes of store features ----------------------------------------------------------------


def class_members(cls: ast.ClassDef) -> set[str]:
    """Methods, class attributes and ``self.x`` attributes a class defines."""
    out: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, FUNCS):
            out.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                out.add(node.attr)
    return out


def storage_only_members(mods: dict[str, Module]) -> set[str]:
    """Members that classes of ``kgrag.storage`` define and no other class does."""
    inside: set[str] = set()
    outside: set[str] = set()
    for mod in mods.values():
        bucket = inside if mod.package == "storage" else outside
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ClassDef):
                bucket |= class_members(node)
    return {m for m in inside - outside if not m.startswith("__")}


def names_a_store(expr: ast.expr) -> bool:
    words = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]
    words += [n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute)]
    return any(STORE_WORDS.search(w) for w in words)


def probe_figures(mods: dict[str, Module]) -> dict[str, object]:
    """``getattr`` / ``hasattr`` probes of what a store offers."""
    members = storage_only_members(mods)
    found: list[str] = []
    for mod in mods.values():
        if mod.name.startswith(BACKENDS):
            continue  # a backend reading its own parts is no probe
        for node in ast.walk(mod.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in ("getattr", "hasattr") or len(node.args) < 2:
                continue
            obj, name = node.args[0], node.args[1]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                continue
            if names_a_store(obj) or name.value in members:
                found.append(
                    f"{mod.name}:{node.lineno} {node.func.id}({ast.unparse(obj)}, {name.value!r})"
                )
    return {"store_probes": len(found), "probes": sorted(found)}


# --- mypy --strict -------------------------------------------------------------------------------

MYPY_ERROR = re.compile(r"^(?P<path>[^:\s]+\.pyi?):\d+(?::\d+)?: error:", re.M)


def mypy_figures(src: Path, timeout: float) -> dict[str, object]:
    """``mypy --strict`` over ``src/kgrag``, run from the checkout's root (its config applies)."""
    root = src.resolve().parent
    digest = hashlib.md5(str(root).encode()).hexdigest()[:12]
    cache = Path(tempfile.gettempdir()) / "kgrag-structure-report" / f"mypy-{digest}"
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache)]
    target = (src.resolve() / "kgrag").relative_to(root)
    done = subprocess.run(
        [*command, str(target)], cwd=root, capture_output=True, text=True, timeout=timeout
    )
    per_file: dict[str, int] = {}
    for m in MYPY_ERROR.finditer(done.stdout):
        per_file[m.group("path")] = per_file.get(m.group("path"), 0) + 1
    summary = done.stdout.strip().splitlines()[-1:] or done.stderr.strip().splitlines()[-1:]
    return {
        "mypy_errors": sum(per_file.values()),
        "mypy_files": len(per_file),
        "mypy_summary": summary[0] if summary else "",
        "mypy_per_file": dict(sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


# --- the report --------------------------------------------------------------------------


def measure(src: Path, run_mypy: bool, timeout: float) -> dict[str, object]:
    """Every figure of the tree under ``src`` (the folder holding ``kgrag/``)."""
    mods = load_tree(src)
    edges = import_edges(mods)
    out: dict[str, object] = {"src": str(src.resolve())}
    out.update(sizes(mods))
    out.update(function_figures(mods))
    out["import_cycles"] = package_cycles(edges)
    out.update(namespace_figures(mods))
    out.update(probe_figures(mods))
    if run_mypy:
        out.update(mypy_figures(src, timeout))
    return out


def show(r: dict[str, object]) -> str:
    """The figures as text, a line each, the lists below them."""
    cycles = r["import_cycles"]
    assert isinstance(cycles, list)
    lines = [
        f"source: {r['src']}",
        f"modules: {r['modules']} ({r['lines']} lines in all)",
        f"lines per module (total lines): median {r['median']}, p90 {r['p90']},"
        f" max {r['max']} ({r['largest']}); non-blank median {r['median_nonblank']}",
        f"functions over {LONG_FUNCTION} lines: {r['over_60']} of {r['functions']}",
        f"Any in signatures: {r['any_in_signature']} of {r['functions']}"
        f" ({float(str(r['any_share'])):.1%})",
    ]
    if "mypy_errors" in r:
        lines.append(
            f"mypy --strict: {r['mypy_errors']} errors in {r['mypy_files']} files"
            f" ({r['mypy_summary']})"
        )
    lines += [
        f"runtime import cycles between packages: {len(cycles)}",
        f"namespace literals outside the layout module ({r['layout_module']}):"
        f" {r['literals_outside_layout']}",
        f"getattr/hasattr probes of store features: {r['store_probes']}",
        "",
        *listing("functions over 60 lines", r["over_60_list"]),
        *[
            line
            for c in cycles
            for line in listing("cycle " + " <-> ".join(c["packages"]), c["imports"])
        ],
        *listing("namespace names", r["namespace_names"]),
        *listing("namespace literals", r["literals"]),
        *listing("store probes", r["probes"]),
    ]
    if "mypy_per_file" in r:
        per_file = r["mypy_per_file"]
        assert isinstance(per_file, dict)
        lines += listing("mypy --strict errors per file", [f"{n} {p}" for p, n in per_file.items()])
    return "\n".join(lines)


def listing(title: str, items: object) -> list[str]:
    assert isinstance(items, list)
    return [f"{title}:", *(f"  {item}" for item in items)] if items else []


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent.parent / "src"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=here, help="the folder holding kgrag/ (src)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--no-mypy", dest="mypy", action="store_false", help="skip mypy --strict")
    ap.add_argument("--mypy-timeout", type=float, default=3600.0, help="seconds (3600)")
    args = ap.parse_args(argv)
    src = args.src / "src" if (args.src / "src" / "kgrag").is_dir() else args.src
    if not (src / "kgrag").is_dir():
        ap.error(f"no kgrag/ package under {args.src}")
    report = measure(src, args.mypy, args.mypy_timeout)
    print(json.dumps(report, indent=2) if args.json else show(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
