"""One registry class for every kind of plug-in method.

A kind (adapters, feature rankers, ...) has one :class:`Registry`: a
read-only mapping from names to implementations, filled three ways:

- a decorator in the module that defines the method,
  ``@ADAPTERS.register("NAME")``;
- its folder: every module of the registry's ``package`` is imported when the
  registry is first read, so a method is one file dropped in that folder;
- Python entry points of the group ``otfs.<kind>`` (for example
  ``otfs.adapters``), so that another package adds a method without forking::

      [project.entry-points."otfs.adapters"]
      MYDA = "mypackage.adapters:MyAdapter"

A registry may also resolve a *namespace* of names it does not list,
``PREFIX:NAME``, through a function (:meth:`Registry.add_namespace`): the
adapters resolve ``skada:NAME`` to any estimator of skada this way.

Every registry answers an unknown name with the same message, listing the
registered names: ``unknown adapter 'OT4'; registered adapters: ['CORAL',
...] (did you mean 'OT3'?)``, raised as :class:`UnknownNameError` (both a
``KeyError`` and a ``ValueError``).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["REGISTRIES", "REGISTRY_MODULES", "Registry", "UnknownNameError", "defer_modules", "get_registry"]

#: Every registry created so far, by its entry-point group (``otfs.adapters``, ...).
REGISTRIES: dict[str, Registry] = {}

#: The module that defines each registry and its built-in methods.
REGISTRY_MODULES = {
    "otfs.adapters": "otfs.adapters._base",
    "otfs.rankers": "otfs.rankers._base",
    "otfs.sample_selection": "otfs.sample_selection._base",
    "otfs.reducers": "otfs.reducers._base",
    "otfs.domain_classifiers": "otfs.domain_classifiers._boosting",
    "otfs.zero_shot": "otfs.zero_shot._semfs",
    "otfs.extractors": "otfs.extractors._base",
    "otfs.datasets": "otfs.datasets._readers",
    "otfs.classifiers": "otfs.classification",
    "otfs.k_selection": "otfs.k_selection._base",
}


#: Plug-in modules to import when a registry not yet created is first read (:func:`defer_modules`).
_DEFERRED: dict[str, list[str]] = {}


def defer_modules(group: str, modules) -> None:
    """Have the registry of ``group`` import ``modules`` (:meth:`Registry.load_modules`) when it is first
    read, without importing anything now.

    A pipeline job names the plug-in files its methods live in before it looks one up. A job that then
    looks none up (the NA curves: no adapter) imports neither the registry's module nor the plug-ins
    (scikit-learn, SciPy: seconds per job). Where the registry already exists, the modules load now.
    """
    _registry_module(group)  # an unknown group is an error now, not at the first read
    if group in REGISTRIES:
        REGISTRIES[group].load_modules(modules)
    else:
        _DEFERRED.setdefault(group, []).extend(modules)


def _registry_module(group: str) -> str:
    """The module that defines the registry of ``group``; an unknown group is an error listing them."""
    if group not in REGISTRY_MODULES:
        raise UnknownNameError(f"unknown registry {group!r}; registries: {sorted(REGISTRY_MODULES)}")
    return REGISTRY_MODULES[group]


def get_registry(group: str) -> Registry:
    """The registry of an entry-point group, importing the module that defines it."""
    importlib.import_module(_registry_module(group))
    return REGISTRIES[group]


class UnknownNameError(KeyError, ValueError):
    """A name no registry entry has; the message lists the registered names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Mapping):
    """Names -> implementations of one kind of method.

    Parameters
    ----------
    kind : str
        The kind in the singular, as messages name it (``"adapter"``).
    plural : str
        The kind in the plural; also the entry-point group's suffix
        (``otfs.<plural>``, spaces as underscores).
    package : str, optional
        A package whose modules are imported on first use: one method per
        file, registered by being there.
    group : str, optional
        The entry-point group; by default ``package`` (the kind's folder, so
        that the kind has one name: ``otfs.rankers``), else ``otfs.<plural>``.
    """

    def __init__(self, kind: str, plural: str, *, package: str | None = None, group: str | None = None):
        self.kind = kind
        self.plural = plural
        self.package = package
        # one name per kind: the entry-point group is the kind's folder (otfs.rankers), or otfs.<plural>
        self.group = group or package or "otfs." + plural.replace(" ", "_").replace("-", "_")
        self._table: dict[str, Any] = {}
        self._namespaces: dict[str, tuple[Callable[[str], Any], str]] = {}
        self._origins: dict[str, str] = {}  # name (or namespace prefix) -> the module that registered it
        self._importing: list[str] = []  # the modules the registry is importing, innermost last
        self._loaded = False
        self._loading_file = False
        if self.group in REGISTRIES:
            raise ValueError(f"a registry for {plural} already exists")
        REGISTRIES[self.group] = self
        self._deferred = _DEFERRED.pop(self.group, [])  # imported at the first read (defer_modules)

    def _load_deferred(self) -> None:
        if self._deferred:
            modules, self._deferred = self._deferred, []
            self.load_modules(modules)

    # -- registration ------------------------------------------------------------
    def register(self, name: str, obj: Any = None, *, replace: bool = False) -> Callable:
        """Add ``obj`` under ``name``; without ``obj``, a decorator that does.

        The same object twice is harmless; another object under a taken name
        is an error, unless ``replace``.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} name must be a non-empty string, got {name!r}")

        def add(target):
            # the folder and the entry points first, so that a taken name is always seen; but a file of the
            # folder imported on its own (a job that runs that one method) registers without loading the
            # rest: a clash is found where the whole registry is read (the configuration's checks)
            if not self._loading_file and not self._own(target):
                self.load()
            if name in self._table and self._table[name] is not target and not replace:
                raise ValueError(f"a {self.kind} named {name!r} is already registered ({self._table[name]!r})")
            self._table[name] = target
            self._origins[name] = self._importing[-1] if self._importing else _defining_module(target)
            return target

        return add if obj is None else add(obj)

    def _own(self, target) -> bool:
        """Whether ``target`` is defined in a module of the registry's folder."""
        module = _defining_module(target) or ""
        return self.package is not None and module.startswith(self.package + ".")

    def register_class(self, name: str) -> Callable:
        """Class decorator: :meth:`register` the class under ``name`` and set its ``name`` attribute."""

        def decorator(cls):
            self.register(name, cls)
            cls.name = name
            return cls

        return decorator

    def add_namespace(self, prefix: str, resolve: Callable[[str], Any], description: str) -> None:
        """Resolve every name ``PREFIX:NAME`` to ``resolve(NAME)``, which raises :class:`UnknownNameError`
        (its message listing what the namespace has) for a name it does not know. ``description`` says
        what the namespace holds, in messages (``"skada:<name> for any skada estimator"``)."""
        if not prefix or ":" in prefix:
            raise ValueError(f"a namespace prefix must be a non-empty string without ':', got {prefix!r}")
        self._namespaces[prefix] = (resolve, description)
        self._origins[prefix + ":"] = self._importing[-1] if self._importing else _defining_module(resolve)

    def _namespaced(self, name: object) -> bool:
        """Whether ``name`` is ``PREFIX:NAME`` of a namespace already added (resolved without loading the
        folder: a job that runs skada:NAME imports the namespace's module alone)."""
        return isinstance(name, str) and ":" in name and name.split(":", 1)[0] in self._namespaces

    def _resolve(self, name: object):
        """The object of a namespaced name, or None where ``name`` is not one."""
        if not isinstance(name, str) or ":" not in name:
            return None
        prefix, rest = name.split(":", 1)
        if prefix not in self._namespaces:
            return None
        return self._namespaces[prefix][0](rest)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests and interactive use)."""
        self._table.pop(name, None)

    # -- discovery -----------------------------------------------------------------
    def load(self) -> None:
        """Import the registry's folder and its entry points, once."""
        self._load_deferred()
        if self._loaded:
            return
        self._loaded = True
        if self.package is not None:
            pkg = importlib.import_module(self.package)
            for info in pkgutil.iter_modules(pkg.__path__, self.package + "."):
                if not info.name.rsplit(".", 1)[-1].startswith("_"):
                    self._import(info.name)
        from importlib.metadata import entry_points

        for ep in entry_points(group=self.group):
            self._load_entry_point(ep)

    def _load_entry_point(self, ep) -> None:
        """Load entry point ``ep`` and register its object under its name, its module as the origin; a
        failure to load is an ``ImportError`` naming the plug-in."""
        try:
            self._importing.append(ep.module)
            try:
                obj = ep.load()
                if self._table.get(ep.name) is not obj:
                    self.register(ep.name, obj)
            finally:
                self._importing.pop()
        except ValueError:
            raise
        except Exception as exc:  # noqa: BLE001 - the message names the plug-in
            raise ImportError(f"the {self.kind} {ep.name!r} of entry point {ep.value!r} (group {self.group}) "
                              f"failed to load: {exc}") from exc

    def _import(self, module: str) -> None:
        """Import ``module``, remembering it as the origin of what it registers."""
        self._importing.append(module)
        try:
            importlib.import_module(module)
        finally:
            self._importing.pop()

    def load_modules(self, modules) -> None:
        """Import only ``modules`` (plug-in files of this registry, by dotted name), not the whole folder.

        A pipeline job that runs one method imports that method's module, as
        :meth:`origin` names it, and nothing else of the folder: its code
        inputs are then that module's imports alone, and a new file in the
        folder reruns none of its jobs. A name looked up afterwards that none
        of them registered loads the whole registry, as any lookup does.
        """
        self._load_deferred()
        if self._loaded:
            return
        modules = list(modules)
        self._loading_file = True
        try:
            for module in modules:
                self._import(module)
            # a module outside the folder registers through its entry points, not by being imported
            outside = {m for m in modules if self.package is None or not m.startswith(self.package + ".")}
            if outside:
                from importlib.metadata import entry_points

                for ep in entry_points(group=self.group):
                    if ep.module in outside and ep.name not in self._table:
                        self._load_entry_point(ep)
        finally:
            self._loading_file = False

    def origins(self) -> list[str]:
        """Every module that registers a method of this registry (or adds a namespace of it), sorted."""
        self.load()
        return sorted({m for m in self._origins.values() if m})

    def origin(self, name: str) -> str | None:
        """The module whose import registered ``name`` (for ``PREFIX:NAME``, the module that added the
        namespace): the folder's file, the entry point's module, or the object's own module."""
        self[name]  # an unknown name raises here, with the one message
        if name in self._table:
            return self._origins.get(name)
        return self._origins.get(str(name).split(":", 1)[0] + ":")

    # -- lookup --------------------------------------------------------------------
    def unknown_message(self, name: object) -> str:
        """The one message for a name nothing is registered under."""
        names = sorted(self)
        close = difflib.get_close_matches(str(name), names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        spaces = "".join(f"; and {description}" for _, description in self._namespaces.values())
        return f"unknown {self.kind} {name!r}; registered {self.plural}: {names}{spaces}{hint}"

    def _load_file_of(self, name: object) -> None:
        """Import only the folder's file named like ``name`` (``-`` as ``_``), if there is one.

        A job that needs one method then imports that method's file, not every
        file of the folder and every entry point (whose imports cost seconds
        per job: scikit-learn, POT). The full :meth:`load`, which also detects
        a name registered twice, runs wherever the set of names is read:
        ``in``, iteration, an unknown name; the pipeline's configuration
        checks read it before any job runs.
        """
        if self._loaded or self.package is None or not isinstance(name, str):
            return
        module = name.replace("-", "_")
        if not module.isidentifier() or module.startswith("_"):
            return
        full = f"{self.package}.{module}"
        if importlib.util.find_spec(full) is None:
            return
        self._loading_file = True
        try:
            self._import(full)
        finally:
            self._loading_file = False

    def __getitem__(self, name: str) -> Any:
        self._load_deferred()
        if name not in self._table:
            self._load_file_of(name)
        if name not in self._table and not self._namespaced(name):
            self.load()
        try:
            return self._table[name]
        except (KeyError, TypeError):
            resolved = self._resolve(name)
            if resolved is None:
                raise UnknownNameError(self.unknown_message(name)) from None
            return resolved

    def check(self, names, where: str = "") -> None:
        """Raise one :class:`UnknownNameError` for the first unknown of ``names``, prefixed by ``where``."""
        for name in names:
            if name not in self:
                raise UnknownNameError(f"{where}: {self.unknown_message(name)}" if where else self.unknown_message(name))

    def __contains__(self, name: object) -> bool:
        self.load()  # the deferred plug-ins first (load)
        if name in self._table:
            return True
        try:
            return self._resolve(name) is not None
        except UnknownNameError:
            return False

    def __iter__(self) -> Iterator[str]:
        self.load()  # the deferred plug-ins first (load)
        return iter(list(self._table))

    def __len__(self) -> int:
        self.load()  # the deferred plug-ins first (load)
        return len(self._table)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {sorted(self._table)})"


def _defining_module(obj) -> str | None:
    """The module that defines ``obj`` (through ``functools.partial`` too)."""
    while hasattr(obj, "func"):  # functools.partial
        obj = obj.func
    return getattr(obj, "__module__", None)
