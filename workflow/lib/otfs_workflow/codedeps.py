"""The library files a piece of code imports, derived from the code itself.

Snakemake reruns a job when one of its inputs changes, but it does not
follow a script's imports. Every rule therefore lists, as its ``code``
input, the files of the ``otfs`` package that its script imports,
transitively; this module derives that list, so it is never kept by hand.

What counts as an import, in every module reached (at module level and
inside functions, classes and ``if`` blocks alike):

* ``import otfs.a.b`` and ``from otfs.a import b`` (``b`` a submodule or a
  name): the module, its parent packages' ``__init__.py``, and ``b``'s file
  when ``b`` is a submodule;
* relative imports (``from ..io import write_json``, ``from . import reference``);
* ``importlib.import_module("otfs.a")`` with a literal name, absolute or
  relative to the module's package;
* a package's lazy exports: the ``.pyi`` stub of a package whose
  ``__init__.py`` calls ``lazy_loader.attach_stub`` (SPEC 1), as every
  package of ``otfs`` does, or a module-level dict ``_LAZY`` mapping exported
  names to submodules (PEP 562). ``from otfs import rank_features`` or
  ``otfs.rank_features`` depends on the submodule that defines the name (and
  on the stub), and importing the package alone does not.

An import that cannot be read statically (``import_module`` of a computed
name) is not followed; the pipeline's jobs check at run time that every
``otfs`` module they loaded is among their code inputs
(:func:`otfs_workflow.stages.job`), so such an import cannot make a result stale in
silence.

The direct imports of each file are cached by path, size and modification
time, so the closures of the ~50 rules cost one parse per file.
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["MANIFEST_DIR", "code_manifest_text", "direct_imports", "import_closure", "import_closures",
           "code_manifest_paths", "PACKAGE_DIRS", "SCOPED_REGISTRIES", "loaded_modules", "manifest_plugins",
           "scoped_manifest", "scoped_manifest_name", "manifest_files", "module_file", "write_code_manifest",
           "write_code_manifests"]


def _package_dirs(package_dir) -> tuple[Path, ...]:
    """One package folder or several, resolved: ``src/otfs`` and ``workflow/lib/otfs_workflow`` for the pipeline."""
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


def _module_name(path: Path, package_dirs: tuple[Path, ...]) -> tuple[str, bool] | None:
    """``(dotted name, is_package)`` of a file inside one of ``package_dirs``, or None."""
    for pkg in package_dirs:
        if pkg in path.parents:
            rel = path.relative_to(pkg.parent).with_suffix("")
            parts = list(rel.parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            return ".".join(parts), is_package
    return None


def _parents(name: str) -> list[str]:
    """``a.b.c`` -> ``[a, a.b]``: the packages Python imports before ``a.b.c``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _resolve_relative(module: str | None, level: int, importer: str, is_package: bool) -> str | None:
    if level == 0:
        return module
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if level - 1 > len(base) - 1:
        return None  # beyond the top-level package
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _stub_table(path: str) -> dict[str, str]:
    """``{name: submodule}`` of the ``.pyi`` stub beside ``path``, read as ``lazy_loader.attach_stub`` reads it
    (SPEC 1): ``from .sub import a, b`` exports ``a`` and ``b`` of ``sub``; ``from . import sub`` exports ``sub``."""
    stub = Path(path).with_suffix(".pyi")
    if not stub.is_file():
        return {}
    table: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8"), filename=str(stub)).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                table[alias.name] = node.module or alias.name
    return table


def _lazy_table(tree: ast.Module, path: str) -> dict[str, str]:
    """The lazy exports of a package: its ``.pyi`` stub where ``__init__.py`` calls ``attach_stub`` (SPEC 1,
    ``lazy_loader``), else a module-level ``_LAZY = {"name": "submodule", ...}`` dict, if any."""
    if any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) == "attach_stub"
                                         or getattr(n.func, "id", None) == "attach_stub") for n in ast.walk(tree)):
        return _stub_table(path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            try:
                table = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}
    return {}


@functools.lru_cache(maxsize=None)
def _parse(path: str, mtime_ns: int, size: int) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple, tuple]:
    """Imports of one file: ``((module, names), ...)``, literal ``import_module`` targets, lazy table items."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise SyntaxError(f"{path}: cannot derive its imports: {exc}") from exc
    froms: list[tuple[str, tuple[str, ...]]] = []
    dynamic: list[tuple[str, int]] = []
    attributes: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                froms.append((f"0:{alias.name}", ()))
        elif isinstance(node, ast.ImportFrom):
            froms.append((f"{node.level}:{node.module or ''}", tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if fname in ("import_module", "_import_module") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    dynamic.append((arg.value, 0))
            elif fname == "Registry":  # a registry imports every module of its `package` folder
                for kw in node.keywords:
                    if kw.arg == "package" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                        dynamic.append((kw.value.value + ".*", 0))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            attributes.add((node.value.id, node.attr))
    return tuple(froms), tuple(dynamic), (tuple(sorted(_lazy_table(tree, path).items())), tuple(sorted(attributes)))


def _file_info(path: Path):
    st = path.stat()
    return _parse(str(path), st.st_mtime_ns, st.st_size)


def direct_imports(path: str | os.PathLike, package_dir, _module_file=None, only=None) -> set[Path]:
    """Files of ``package_dir``'s package (one folder or several) that ``path`` imports directly (parent
    packages included).

    ``path`` may lie outside the packages (a workflow script). ``only`` maps a
    registry's package (``"otfs.rankers"``) to the modules of its folder that
    count (a job that runs one ranker imports that ranker's file, not the
    folder's); a registry package not in ``only`` counts its whole folder.
    """
    path, package_dir = Path(path).resolve(), _package_dirs(package_dir)
    find_module = _module_file or module_file  # import_closures passes a memoised one
    froms, dynamic, (_, attributes) = _file_info(path)
    named = _module_name(path, package_dir)
    inside = named is not None
    importer, is_package = named if inside else ("", False)
    names: set[str] = set()
    lazy_names: list[tuple[str, str]] = []  # (package, exported name)
    aliases: dict[str, str] = {}  # a local name bound to a package by `import`
    for spec, imported in froms:
        level_text, module = spec.split(":", 1)
        level = int(level_text)
        target = _resolve_relative(module or None, level, importer, is_package) if inside or level == 0 else None
        if not target:
            continue
        names.add(target)
        if not imported:  # `import a.b.c` binds `a`
            aliases[target.split(".")[0]] = target.split(".")[0]
        for name in imported:
            if name == "*":
                continue
            names.add(f"{target}.{name}")  # kept only if it is a submodule
            lazy_names.append((target, name))
    for target, _ in dynamic:
        if target.endswith(".*"):  # every module of a registry's folder (otfs.registry.Registry.load)
            folder = find_module(target[:-2], package_dir)
            if folder is not None and folder.name == "__init__.py":
                names.add(target[:-2])
                if only is not None and target[:-2] in only:
                    names.update(only[target[:-2]])
                else:
                    names.update(f"{target[:-2]}.{f.stem}" for f in folder.parent.glob("*.py")
                                 if not f.stem.startswith("_"))
            continue
        resolved = _resolve_relative(target.lstrip(".") or None, len(target) - len(target.lstrip(".")),
                                     importer, is_package) if target.startswith(".") else target
        if resolved:
            names.add(resolved)
    for alias, attr in attributes:
        if alias in aliases:
            lazy_names.append((aliases[alias], attr))
    out: set[Path] = set()
    for name in names:
        for n in [*_parents(name), name]:
            f = find_module(n, package_dir)
            if f is not None:
                out.add(f)
    for package, name in lazy_names:
        init = find_module(package, package_dir)
        if init is None or init.name != "__init__.py":
            continue
        table = dict(_file_info(init)[2][0])
        if name in table:
            f = find_module(f"{package}.{table[name].lstrip('.')}", package_dir)
            if f is not None:
                out.add(f)
    # a package whose exports a stub lists depends on the stub (it decides what a name loads)
    out |= {f.with_suffix(".pyi") for f in out if f.name == "__init__.py" and f.with_suffix(".pyi").is_file()}
    out.discard(path)
    return out


def import_closure(paths: str | os.PathLike | Iterable[str | os.PathLike], package_dir, only=None) -> list[Path]:
    """Every file of ``package_dir``'s package that ``paths`` import, transitively, sorted.

    The files of ``paths`` themselves are included when they lie inside the
    package. ``only``: as in :func:`direct_imports`.
    """
    return import_closures([paths], package_dir, only)[0]


def import_closures(groups, package_dir: str | os.PathLike, only=None) -> list[list[Path]]:
    """:func:`import_closure` of each of ``groups`` (a path or paths each), sharing the work between them.

    Each module's direct imports and each module name's file are found once
    for all the groups (the workflow asks for the closures of its thirty
    scripts, which share most of the library, whenever it is parsed).
    """
    package_dir = _package_dirs(package_dir)
    direct: dict[Path, set[Path]] = {}
    files: dict[str, Path | None] = {}

    def cached_module_file(name: str, pkg) -> Path | None:
        if name not in files:
            files[name] = module_file(name, pkg)
        return files[name]

    closures = []
    for paths in groups:
        todo = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
        todo = [p.resolve() for p in todo]
        seen: set[Path] = set()
        out: set[Path] = {p for p in todo if _module_name(p, package_dir) is not None}
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            if path not in direct:  # a stub is listed, never followed: its imports are lazy
                direct[path] = set() if path.suffix == ".pyi" else direct_imports(path, package_dir,
                                                                                  cached_module_file, only)
            new = direct[path]
            out |= new
            todo.extend(new - seen)
        closures.append(sorted(out))
    return closures


def loaded_modules(package: str | Iterable[str] = ("otfs", "otfs_workflow")) -> set[Path]:
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


def code_manifest_text(script: str | os.PathLike, package_dir, closure=None, plugins=None) -> str:
    """The code manifest of ``script``: its import closure (:func:`import_closure`) and their content's digest.

    JSON with ``files`` (paths relative to the folder holding the packages, so
    a moved checkout keeps its manifests), ``sha256`` (over every file's
    relative path and bytes, in that order) and, with ``plugins`` (``{registry
    group: [module, ...]}``), the plug-in modules the job imports and the only
    ones of their folders the closure counts (:func:`otfs_workflow.stages.job`
    imports them first).
    """
    import hashlib
    import json

    package_dir = _package_dirs(package_dir)
    root = _root(package_dir)
    only = _only(plugins)
    files = sorted(import_closure(script, package_dir, only) if closure is None else closure)
    digest = hashlib.sha256()
    rel = []
    for f in files:
        name = f.relative_to(root).as_posix()
        rel.append(name)
        digest.update(name.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    out = {"script": Path(script).name, "sha256": digest.hexdigest(), "files": rel}
    if plugins:
        out["plugins"] = {group: sorted(modules) for group, modules in sorted(plugins.items())}
    return json.dumps(out, indent=1) + "\n"


#: The registry package of each entry-point group whose folder a manifest can scope (:func:`scoped_manifest`).
SCOPED_REGISTRIES = {"otfs.rankers": "otfs.rankers", "otfs.adapters": "otfs.adapters"}


def _only(plugins) -> dict[str, list[str]]:
    """``direct_imports``' ``only`` for ``plugins``: every scoped registry counts only the modules named (none
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


def scoped_manifest(script: str | os.PathLike, package_dir, plugins=None, folder=MANIFEST_DIR, write=True) -> Path:
    """The code manifest of a job of ``script`` that runs the plug-in modules ``plugins`` (``{registry group:
    [module, ...]}``): its closure counts those files of the scoped registries' folders (the rankers', the
    adapters') and no other, so a new ranker file, or an edit of another adapter, reruns none of its jobs.
    Written (where its content changed) unless ``write`` is false; returns its path."""
    path = Path(folder) / scoped_manifest_name(script, plugins)
    if write:
        _write_if_changed(path, code_manifest_text(script, package_dir, plugins=plugins))
    return path


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
    import json

    try:
        return dict(json.loads(Path(path).read_text(encoding="utf-8")).get("plugins", {}))
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: not a code manifest of otfs_workflow.codedeps ({exc})") from None


def write_code_manifests(scripts, package_dir, folder=MANIFEST_DIR) -> dict[str, Path]:
    """:func:`write_code_manifest` of every one of ``scripts``, their closures computed together; by file name."""
    scripts = [Path(s) for s in scripts]
    closures = import_closures(scripts, package_dir, _only(None))
    return {s.name: write_code_manifest(s, package_dir, folder, closure=c) for s, c in zip(scripts, closures,
                                                                                          strict=True)}


def code_manifest_paths(scripts, folder=MANIFEST_DIR) -> dict[str, Path]:
    """Where :func:`write_code_manifests` keeps each of ``scripts``' manifests, by file name; nothing is computed.

    For a Snakemake process that runs jobs another one scheduled (a cluster
    job step): the scheduling process wrote the manifests when it parsed the
    workflow, and each job checks what it ran against them.
    """
    return {Path(s).name: _manifest_path(s, folder) for s in scripts}


def _manifest_path(script: str | os.PathLike, folder) -> Path:
    """``folder/<script's file name>.json``: where a script's code manifest lives."""
    return Path(folder) / f"{Path(script).name}.json"


def write_code_manifest(script: str | os.PathLike, package_dir, folder=MANIFEST_DIR,
                        closure=None) -> Path:
    """Write ``script``'s code manifest to ``folder/<script>.json`` where its content changed; return the path.

    A rule's ``code`` input is this one file instead of the ~30 library files
    of its closure: Snakemake then watches, records and re-checks one input
    per job for the code (its scheduler measures every ready job's inputs on
    every round). An edit of any file of the closure changes the manifest,
    which is rewritten, and reruns the rule's jobs; an unchanged closure
    leaves the file and its time untouched, so parsing the workflow (a dry
    run, a cluster job step) reruns nothing.
    """
    path = _manifest_path(script, folder)
    _write_if_changed(path, code_manifest_text(script, package_dir, closure))
    return path


#: The packages whose files the code manifests list: this checkout's library and pipeline package.
PACKAGE_DIRS = (Path(__file__).resolve().parents[3] / "src" / "otfs", Path(__file__).resolve().parent)


def manifest_files(path: str | os.PathLike, package_dir=None) -> list[Path]:
    """The files a code manifest lists, resolved against the folder holding ``package_dir`` (one package
    folder or several; default: :data:`PACKAGE_DIRS`)."""
    import json

    root = _root(_package_dirs(package_dir if package_dir else PACKAGE_DIRS))
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return [root / f for f in data["files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a code manifest of otfs_workflow.codedeps ({exc}); rerun the workflow to rewrite "
                         "it") from None
