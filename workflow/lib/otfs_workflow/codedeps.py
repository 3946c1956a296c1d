"""The library files a piece of code imports, derived from the code itself.

Snakemake reruns a job when one of its inputs changes, but it does not
follow a script's imports. Every rule therefore lists, as its ``code``
input, the files of this checkout's packages (:data:`PACKAGE_DIRS`) that its
script imports, transitively; this module derives that list, so it is never
kept by hand.

The import graph is grimp's (``grimp.build_graph``, the graph import-linter
is built on): every ``import`` and ``from ... import`` statement of every
module, at module level and inside functions, classes and ``if`` blocks,
relative ones resolved. It is built in a fresh interpreter whose path holds
exactly the package folders asked for, so that a copy of the checkout is
analysed as itself even where this process loaded another. Three rules of
this project's own are added to grimp's edges:

* importing ``a.b.c`` runs ``a`` and ``a.b`` first: a module depends on its
  parent packages;
* a package's lazy exports (SPEC 1): where ``__init__.py`` calls
  ``lazy_loader.attach_stub``, as every package here does, ``from pkg import
  Name`` (or ``pkg.Name`` after ``import pkg``) depends on the submodule
  that the ``.pyi`` stub says defines ``Name``, and on the stub; importing
  the package alone loads nothing it exports;
* a registry (``otfs.registry.Registry(..., package="otfs.rankers")``)
  imports every module of its folder when first read, so the module that
  declares it depends on them; a job that runs one method counts only that
  method's file (``only``).

An import that cannot be read statically (``importlib.import_module`` of a
computed name, an entry point) is not followed; the pipeline's jobs check at
run time that every ``otfs`` module they loaded is among their code inputs
(:func:`otfs_workflow.stages.job`), so such an import cannot make a result
stale in silence.

The graph is built once per process for a given state of the packages'
files (their paths, sizes and modification times).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["MANIFEST_DIR", "PACKAGE_DIRS", "SCOPED_REGISTRIES", "code_manifest_text", "import_closure",
           "loaded_modules", "manifest_files", "manifest_plugins", "module_file", "package_dirs", "scoped_manifest",
           "scoped_manifest_name", "source_states"]


def _package_dirs(package_dir) -> tuple[Path, ...]:
    """One package folder or several, resolved: :data:`PACKAGE_DIRS` for the pipeline."""
    dirs = [package_dir] if isinstance(package_dir, (str, os.PathLike)) else list(package_dir)
    return tuple(Path(d).resolve() for d in dirs)


def _root(package_dirs: tuple[Path, ...]) -> Path:
    """The folder that code manifests' paths are relative to: the packages' common ancestor."""
    return Path(os.path.commonpath([d.parent for d in package_dirs]))


def module_file(name: str, package_dir) -> Path | None:
    """The file of module ``name`` (e.g. ``otfs_workflow.stages.ranking``) inside ``package_dir`` (one or
    several package folders), or None."""
    parts = name.split(".")
    for pkg in _package_dirs(package_dir):
        if parts[0] != pkg.name:
            continue
        base = pkg.parent.joinpath(*parts)
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
    return None


def _module_name(path: Path, package_dirs: tuple[Path, ...]) -> str | None:
    """The dotted name of a file inside one of ``package_dirs``, or None."""
    for pkg in package_dirs:
        if pkg in path.parents:
            parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
    return None


# -- grimp's graph, built in a fresh interpreter ------------------------------------------------------------------
_SCAN = r"""
import importlib.util, json, sys
import grimp
from grimp.exceptions import SourceSyntaxError
names = sys.argv[1:]
where = {n: list(getattr(importlib.util.find_spec(n), "submodule_search_locations", None) or []) for n in names}
try:
    graph = grimp.build_graph(*names, cache_dir=None)
except SourceSyntaxError as exc:
    print(f"SyntaxError: {exc}", file=sys.stderr)
    sys.exit(3)
imports = {m: {i: sorted(d["line_number"] for d in graph.get_import_details(importer=m, imported=i))
               for i in graph.find_modules_directly_imported_by(m)} for m in graph.modules}
json.dump({"where": where, "imports": imports}, sys.stdout)
"""


def _grimp_imports(package_dirs: tuple[Path, ...]) -> dict[str, dict[str, list[int]]]:
    """grimp's direct imports of every module of ``package_dirs``: ``{module: {imported: [line, ...]}}``."""
    names = [d.name for d in package_dirs]
    if len(set(names)) != len(names):
        raise ValueError(f"two package folders with the same name: {[str(d) for d in package_dirs]}")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(d.parent) for d in package_dirs),
                                         *filter(None, [os.environ.get("PYTHONPATH")])])
    # -P: no script folder or working directory before the package folders on the path
    proc = subprocess.run([sys.executable, "-P", "-c", _SCAN, *names], env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode == 3:
        raise SyntaxError(f"cannot derive the imports of {names}: {proc.stderr.strip()}")
    if proc.returncode:
        raise RuntimeError(f"grimp could not build the import graph of {names}: {proc.stderr.strip()[-2000:]}")
    out = json.loads(proc.stdout)
    for pkg in package_dirs:
        found = [Path(p).resolve() for p in out["where"].get(pkg.name, [])]
        if found != [pkg]:
            raise RuntimeError(f"grimp found the package {pkg.name!r} at {[str(f) for f in found]}, not at {pkg}")
    return out["imports"]


@functools.lru_cache(maxsize=None)
def _tree(path: str, mtime_ns: int, size: int) -> ast.Module:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except SyntaxError as exc:
        raise SyntaxError(f"{path}: cannot derive its imports: {exc}") from exc


@functools.lru_cache(maxsize=None)
def _digest_at(path: str, mtime_ns: int, size: int) -> bytes:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).digest()


def _file_digest(path: Path) -> bytes:
    """SHA-256 of a file's bytes, read once per state of the file (its modification time and size)."""
    st = path.stat()
    return _digest_at(str(path), st.st_mtime_ns, st.st_size)


def _parse(path: Path) -> ast.Module:
    st = path.stat()
    return _tree(str(path), st.st_mtime_ns, st.st_size)


def _stub_table(init: Path) -> dict[str, str]:
    """``{name: submodule}`` of the SPEC 1 stub of the package whose ``__init__.py`` is ``init``, read as
    ``lazy_loader.attach_stub`` reads it (``from .sub import a`` exports ``a`` of ``sub``; ``from . import sub``
    exports ``sub``); ``{}`` where ``__init__.py`` does not call ``attach_stub``."""
    stub = init.with_suffix(".pyi")
    if not stub.is_file() or not any(
            isinstance(n, ast.Call) and "attach_stub" in (getattr(n.func, "attr", None), getattr(n.func, "id", None))
            for n in ast.walk(_parse(init))):
        return {}
    table: dict[str, str] = {}
    for node in _parse(stub).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                table[alias.name] = node.module or alias.name
    return table


def _registry_packages(tree: ast.Module) -> set[str]:
    """The folders of the registries a module declares: ``Registry(..., package="otfs.rankers")``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Registry":
            for kw in node.keywords:
                if kw.arg == "package" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    out.add(kw.value.value)
    return out


def _lazy_names(tree: ast.Module, package: str, lines: Iterable[int] | None) -> set[str]:
    """The names a module (or script) takes from ``package``: ``from package import a, b`` at ``lines`` (all
    lines where None: a script's absolute imports), and ``package.a`` after ``import package [as p]``."""
    lines = None if lines is None else set(lines)
    names, aliases = set(), set()
    for node in ast.walk(tree):
        if lines is not None and getattr(node, "lineno", None) not in lines:
            continue
        if isinstance(node, ast.ImportFrom) and (lines is not None or (node.level == 0 and node.module == package)):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == package)
    if aliases:
        names.update(n.attr for n in ast.walk(tree)
                     if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases)
    return names


class _Graph:
    """grimp's import graph of some packages, with this project's three rules (see the module's docstring)."""

    def __init__(self, package_dirs: tuple[Path, ...]):
        import grimp

        self.package_dirs = package_dirs
        imports = _grimp_imports(package_dirs)
        self.files = {m: module_file(m, package_dirs) for m in imports}
        self.stubs = {m: t for m, f in self.files.items() if f is not None and f.name == "__init__.py"
                      for t in [_stub_table(f)] if t}
        # only a file whose text names ``Registry`` can call it: the others are not parsed (grimp has read
        # every file already, a syntax error included)
        self.registries = {m: _registry_packages(_parse(f)) if b"Registry" in f.read_bytes() else set()
                           for m, f in self.files.items() if f is not None}
        self.graph = grimp.ImportGraph()
        for module, imported in imports.items():
            self.graph.add_module(module)
            for parent in _parents(module):
                self.graph.add_import(importer=module, imported=parent)
            for target, lines in imported.items():
                self.graph.add_import(importer=module, imported=target)
                if target in self.stubs:
                    for name in _lazy_names(_parse(self.files[module]), target, lines):
                        for sub in self._exported(target, name):
                            self.graph.add_import(importer=module, imported=sub)
        self._upstream: dict[str, set[str]] = {}

    def _exported(self, package: str, name: str) -> list[str]:
        sub = self.stubs.get(package, {}).get(name)
        return [f"{package}.{sub}"] if sub and f"{package}.{sub}" in self.files else []

    def upstream(self, module: str) -> set[str]:
        """``module`` and every module it imports, transitively."""
        if module not in self._upstream:
            self._upstream[module] = {module, *self.graph.find_upstream_modules(module)}
        return self._upstream[module]

    def script_imports(self, script: Path) -> set[str]:
        """The modules of the packages a file outside them (a workflow script) imports directly."""
        tree = _parse(script)
        out: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in self.files)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in self.files:
                out.add(node.module)
                out.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in self.files)
        for package in [m for m in out if m in self.stubs]:
            for name in _lazy_names(tree, package, None):
                out.update(self._exported(package, name))
        return out | {p for m in out for p in _parents(m)}

    def registry_modules(self, package: str, only) -> list[str]:
        """The modules a registry of ``package``'s folder loads: the ``only`` ones, or every public one."""
        if only is not None and package in only:
            return [m for m in only[package] if m in self.files]
        return sorted(m for m in self.files if m.rpartition(".")[0] == package
                      and not m.rpartition(".")[2].startswith("_"))

    def closure(self, modules: Iterable[str], only=None) -> set[str]:
        """Every module ``modules`` import, transitively, registries' folders included (``only``: as in
        :func:`import_closure`)."""
        todo, out = list(modules), set()
        while todo:
            module = todo.pop()
            if module in out:
                continue
            new = self.upstream(module) - out
            out |= new
            for m in new:
                for package in self.registries.get(m, ()):
                    todo.extend(self.registry_modules(package, only))
        return out


def _parents(name: str) -> list[str]:
    """``a.b.c`` -> ``[a, a.b]``: the packages Python imports before ``a.b.c``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def source_states(roots: Iterable[str | os.PathLike], suffixes: tuple[str, ...] = (".py", ".pyi")) -> tuple:
    """``(path, size, mtime in ns)`` of every file ending in one of ``suffixes`` under ``roots``, sorted; folders
    named ``__pycache__`` or starting with ``.`` are not entered, and a file that vanishes while it is listed
    is left out."""
    out = []
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
            for name in names:
                if name.endswith(suffixes):
                    path = os.path.join(folder, name)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    out.append((path, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


@functools.lru_cache(maxsize=4)
def _graph_at(package_dirs: tuple[Path, ...], signature: tuple) -> _Graph:
    return _Graph(package_dirs)


def _graph(package_dir) -> _Graph:
    dirs = _package_dirs(package_dir)
    return _graph_at(dirs, source_states(dirs))


def import_closure(paths: str | os.PathLike | Iterable[str | os.PathLike], package_dir, only=None) -> list[Path]:
    """Every file of ``package_dir``'s packages (one folder or several) that ``paths`` import, transitively,
    sorted: modules, their parent packages' ``__init__.py`` and the SPEC 1 stubs that decide what a package's
    names load.

    ``paths`` may lie inside the packages (they are then included) or outside
    (a workflow script). ``only`` maps a registry's package
    (``"otfs.rankers"``) to the modules of its folder that count (a job that
    runs one ranker imports that ranker's file, not the folder's); a registry
    package not in ``only`` counts its whole folder.
    """
    dirs = _package_dirs(package_dir)
    graph = _graph(dirs)
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    start: set[str] = set()
    for path in (Path(p).resolve() for p in paths):
        name = _module_name(path, dirs)
        if name is None:
            start |= graph.script_imports(path)
        elif name in graph.files:
            start.add(name)
        else:
            raise ValueError(f"{path}: not a module of the import graph of {[d.name for d in dirs]}")
    files = {graph.files[m] for m in graph.closure(start, only) if graph.files.get(m) is not None}
    files |= {f.with_suffix(".pyi") for f in files if f.name == "__init__.py" and f.with_suffix(".pyi").is_file()}
    return sorted(files)


def loaded_modules(package: str | Iterable[str] = ("otfs", "otfs_workflow", "otfs_benchmarks")) -> set[Path]:
    """Files of the modules of ``package`` (one name or several) loaded in this process (``sys.modules``)."""
    import sys

    packages = (package,) if isinstance(package, str) else tuple(package)
    out = set()
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] in packages:
            f = getattr(mod, "__file__", None)
            if f:
                out.add(Path(f).resolve())
    return out


#: Where the workflow writes its scripts' code manifests, relative to Snakemake's working directory.
MANIFEST_DIR = Path(".snakemake") / "otfs-code"


def code_manifest_text(script: str | os.PathLike, package_dir, plugins=None) -> str:
    """The code manifest of ``script``: its import closure (:func:`import_closure`) and their content's digest.

    JSON with ``files`` (paths relative to the folder holding the packages, so
    a moved checkout keeps its manifests), ``sha256`` (over every file's
    relative path and bytes, in that order) and, with ``plugins`` (``{registry
    group: [module, ...]}``), the plug-in modules the job imports and the only
    ones of their folders the closure counts (:func:`otfs_workflow.stages.job`
    imports them first).
    """
    import hashlib

    package_dir = _package_dirs(package_dir)
    root = _root(package_dir)
    only = _only(plugins)
    files = import_closure(script, package_dir, only)
    digest = hashlib.sha256()
    rel = []
    for f in files:
        name = f.relative_to(root).as_posix()
        rel.append(name)
        digest.update(name.encode() + b"\0" + _file_digest(f))
    out = {"script": Path(script).name, "sha256": digest.hexdigest(), "files": rel}
    if plugins:
        out["plugins"] = {group: sorted(modules) for group, modules in sorted(plugins.items())}
    return json.dumps(out, indent=1) + "\n"


#: The registry package of each entry-point group whose folder a manifest can scope (:func:`scoped_manifest`).
SCOPED_REGISTRIES = {"otfs.rankers": "otfs.rankers", "otfs.adapters": "otfs.adapters"}


def _only(plugins) -> dict[str, list[str]]:
    """:func:`import_closure`'s ``only`` for ``plugins``: every scoped registry counts only the modules named (none
    where a job names none of its methods)."""
    only = {package: [] for package in SCOPED_REGISTRIES.values()}
    for group, modules in (plugins or {}).items():
        if group not in SCOPED_REGISTRIES:
            raise ValueError(f"no scoped registry {group!r}; scoped: {sorted(SCOPED_REGISTRIES)}")
        package = SCOPED_REGISTRIES[group]
        only[package] = sorted(m for m in modules if m.startswith(package + "."))
    return only


def scoped_manifest_name(script: str | os.PathLike, plugins=None) -> str:
    """The file name of ``script``'s manifest for a job that runs the plug-in modules ``plugins``."""
    import hashlib

    modules = sorted({m for mods in (plugins or {}).values() for m in mods})
    name = Path(script).name
    if not modules:
        return f"{name}.json"
    tag = "+".join(modules)
    if len(tag) > 120:  # file names have a length limit: a digest of the list stands for a long one
        tag = hashlib.sha256(tag.encode()).hexdigest()[:16]
    return f"{name}@{tag}.json"


def scoped_manifest(script: str | os.PathLike, package_dir, plugins=None, folder=MANIFEST_DIR, write=True,
                    states=None) -> Path:
    """The code manifest of a job of ``script`` that runs the plug-in modules ``plugins`` (``{registry group:
    [module, ...]}``): its closure counts those files of the scoped registries' folders (the rankers', the
    adapters') and no other, so a new ranker file, or an edit of another adapter, reruns none of its jobs.
    Written (where its content changed) unless ``write`` is false; returns its path. ``states``: the packages'
    :func:`source_states`, where the caller has them already (one walk for the manifests of one parse)."""
    path = Path(folder) / scoped_manifest_name(script, plugins)
    if write:
        _write_if_changed(path, _cached_manifest_text(Path(folder), script, package_dir, plugins, states))
    return path


#: The manifests' texts of the last parse, with the state of the files they were derived from (``parse-cache.json``
#: in the manifests' folder): a parse that finds every package file and the script as they were (paths, sizes,
#: modification times) takes the text from it instead of building the import graph again.
_PARSE_CACHE = "parse-cache.json"
_parse_cache_memo: dict[str, dict] = {}


def _cached_manifest_text(folder: Path, script, package_dir, plugins, states=None) -> str:
    import hashlib

    dirs = _package_dirs(package_dir)
    script = Path(script).resolve()
    st = script.stat()
    state = hashlib.sha256(repr((source_states(dirs) if states is None else states, str(script), st.st_size, st.st_mtime_ns,
                                 sys.version_info[:2])).encode()).hexdigest()
    key = json.dumps([str(script), {g: sorted(m) for g, m in sorted((plugins or {}).items())}])
    cache_path = folder / _PARSE_CACHE
    cache = _parse_cache_memo.get(str(cache_path))
    if cache is None:
        try:
            cache = json.loads(cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cache = {}
        _parse_cache_memo[str(cache_path)] = cache
    texts = cache.setdefault("texts", {})
    hit = texts.get(key)
    if hit is not None and hit.get("state") == state:
        return hit["text"]
    text = code_manifest_text(script, package_dir, plugins=plugins)
    texts[key] = {"state": state, "text": text}
    from otfs_workflow.io import write_text

    write_text(cache_path, json.dumps(cache))
    return text


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless the file holds it already: an unchanged manifest keeps its time, so
    parsing the workflow again reruns nothing."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except FileNotFoundError:
        pass
    from otfs_workflow.io import write_text

    write_text(path, text)


def manifest_plugins(path: str | os.PathLike) -> dict[str, list[str]]:
    """The plug-in modules a code manifest names, by registry group (``{}`` for an unscoped one)."""

    try:
        return dict(json.loads(Path(path).read_text(encoding="utf-8")).get("plugins", {}))
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: not a code manifest of otfs_workflow.codedeps ({exc})") from None


def package_dirs(repo: str | os.PathLike) -> tuple[Path, ...]:
    """The packages whose files the code manifests list, in the checkout ``repo``: the library, the pipeline
    package and the benchmark suite."""
    repo = Path(repo).resolve()
    return repo / "src" / "otfs", repo / "workflow" / "lib" / "otfs_workflow", repo / "benchmarks" / "otfs_benchmarks"


#: :func:`package_dirs` of this checkout.
PACKAGE_DIRS = package_dirs(Path(__file__).resolve().parents[3])


def manifest_files(path: str | os.PathLike, package_dir=None) -> list[Path]:
    """The files a code manifest lists, resolved against the folder holding ``package_dir`` (one package
    folder or several; default: :data:`PACKAGE_DIRS`)."""

    root = _root(_package_dirs(package_dir if package_dir else PACKAGE_DIRS))
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return [root / f for f in data["files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a code manifest of otfs_workflow.codedeps ({exc}); rerun the workflow to rewrite "
                         "it") from None
