"""Plug-in registries: one class, one lookup, one message; methods from a folder and from entry points."""

import sys
import textwrap

import pytest

import otfs.registry
from otfs.registry import REGISTRY_MODULES, Registry, UnknownNameError, get_registry

from .conftest import install_distribution


@pytest.fixture()
def scratch_registries(monkeypatch):
    """Registries made by a test stay out of the process-wide table."""
    monkeypatch.setattr(otfs.registry, "REGISTRIES", dict(otfs.registry.REGISTRIES))


@pytest.mark.parametrize("group", sorted(REGISTRY_MODULES))
def test_every_registry_gives_the_same_error_for_an_unknown_name(group):
    registry = get_registry(group)
    assert len(registry) >= 1 and registry.group == group
    with pytest.raises(UnknownNameError) as info:
        registry["no-such-method"]
    expected = f"unknown {registry.kind} 'no-such-method'; registered {registry.plural}: {sorted(registry)}"
    # a registry with a namespace (the adapters' skada:NAME) says so after its list
    expected += "".join(f"; and {description}" for _, description in registry._namespaces.values())
    assert str(info.value) == expected
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert registry.get("no-such-method") is None  # Mapping.get still works
    first = sorted(registry)[0]
    with pytest.raises(UnknownNameError, match=rf"\(did you mean {first!r}\?\)"):
        registry[first + "x"]


def test_registration_rules(scratch_registries):
    reg = Registry("widget", "widgets test a")

    @reg.register("A")
    def a():
        return 1

    assert reg["A"] is a and "A" in reg and list(reg) == ["A"]
    reg.register("A", a)  # the same object again: harmless
    with pytest.raises(ValueError, match="a widget named 'A' is already registered"):
        reg.register("A", lambda: 2)
    reg.register("A", print, replace=True)
    assert reg["A"] is print
    with pytest.raises(ValueError, match="a widget name must be a non-empty string"):
        reg.register("", a)
    with pytest.raises(ValueError, match="a registry for widgets test a already exists"):
        Registry("widget", "widgets test a")


def _package(root, name, files):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for fname, text in files.items():
        (pkg / fname).write_text(textwrap.dedent(text))
    return pkg


def test_a_method_is_one_file_in_its_folder(tmp_path, monkeypatch, scratch_registries):
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry("gadget", "gadgets test b", package="gadgets_pkg")
    sys.modules["gadgets_registry"] = type(sys)("gadgets_registry")
    sys.modules["gadgets_registry"].REG = reg
    _package(tmp_path, "gadgets_pkg", {
        "alpha.py": """
            from gadgets_registry import REG
            @REG.register("alpha")
            def alpha():
                return "alpha"
        """,
        "beta.py": """
            from gadgets_registry import REG
            REG.register("beta", object())
        """,
        "_private.py": "raise RuntimeError('a module starting with _ is not a method file')\n",
    })
    try:
        assert sorted(reg) == ["alpha", "beta"]  # importing the folder registered both files
        assert reg["alpha"]() == "alpha"
    finally:
        for mod in ("gadgets_registry", "gadgets_pkg", "gadgets_pkg.alpha", "gadgets_pkg.beta"):
            sys.modules.pop(mod, None)


def test_a_third_party_method_registers_through_an_entry_point(tmp_path, monkeypatch):
    # an installed distribution, as pip leaves it: a module and a dist-info folder with entry_points.txt
    install_distribution(tmp_path, "thirdparty-da", "[otfs.adapters]\nMIRROR = thirdparty_da:MirrorAdapter\n",
                         {"thirdparty_da.py": textwrap.dedent("""
        from otfs.adapters import NoAdaptation

        class MirrorAdapter(NoAdaptation):
            '''A third-party adapter: returns both domains unchanged.'''
    """)})
    monkeypatch.syspath_prepend(str(tmp_path))
    adapters = get_registry("otfs.adapters")
    monkeypatch.setattr(adapters, "_loaded", False)  # as in a fresh process
    try:
        assert "MIRROR" in adapters
        from otfs.adapters import get_adapter

        adapter = get_adapter("MIRROR")
        assert type(adapter).__name__ == "MirrorAdapter"
    finally:
        adapters.unregister("MIRROR")
        sys.modules.pop("thirdparty_da", None)


def test_a_broken_entry_point_is_named(tmp_path, monkeypatch):
    install_distribution(tmp_path, "broken-plugin", "[otfs.rankers]\nbroken = no_such_module_here:Ranker\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rankers = get_registry("otfs.rankers")
    monkeypatch.setattr(rankers, "_loaded", False)
    with pytest.raises(ImportError, match=r"the feature ranker 'broken' of entry point 'no_such_module_here:Ranker' "
                                          r"\(group otfs.rankers\) failed to load"):
        rankers["anything"]
    monkeypatch.setattr(rankers, "_loaded", True)


def test_origin_names_the_module_that_registered_each_method():
    rankers, adapters = get_registry("otfs.rankers"), get_registry("otfs.adapters")
    # a folder file registers several names (the OT rankers are one file), a partial counts as its file's
    assert {n: rankers.origin(n) for n in ("ot", "ot-1nn", "ot-random", "ks")} == {
        "ot": "otfs.rankers.ot", "ot-1nn": "otfs.rankers.ot", "ot-random": "otfs.rankers.ot", "ks": "otfs.rankers.ks"}
    assert adapters.origin("NA") == "otfs.adapters.na"
    # a namespaced name: the module that added the namespace
    assert adapters.origin("skada:CORALAdapter") == "otfs.adapters.skada_estimators"
    with pytest.raises(UnknownNameError, match="unknown adapter 'OT4'"):
        adapters.origin("OT4")


@pytest.mark.subprocess
def test_load_modules_imports_only_the_named_files():
    # a fresh process: a job that runs the ks ranker imports its file and no other ranker's
    import subprocess

    code = textwrap.dedent("""
        import sys
        from otfs.registry import get_registry
        rankers = get_registry("otfs.rankers")
        rankers.load_modules(["otfs.rankers.ks"])
        rankers["ks"]
        print(sorted(m for m in sys.modules if m.startswith("otfs.rankers.") and not m.split(".")[-1].startswith("_")),
              rankers._loaded)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['otfs.rankers.ks']", "False"]
