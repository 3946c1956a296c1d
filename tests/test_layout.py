"""The library is only the methods: ``import otfs`` pulls in no Snakemake, YAML or pipeline module, no module of
``src/otfs`` imports the pipeline package or reads a configuration or a results path, and every kind of method
is one folder with its base, its registry, its plug-ins and its public names."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from .conftest import REPO

SRC = REPO / "src" / "otfs"
KINDS = ("adapters", "rankers", "sample_selection", "reducers", "k_selection", "zero_shot", "domain_classifiers",
         "datasets", "extractors")


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          check=False, cwd=REPO / "tests")  # not the checkout: workflow/ is not on the path there
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.subprocess
def test_importing_the_library_and_every_public_name_pulls_in_no_pipeline():
    out = _run("""
        import sys
        import otfs
        names = list(otfs.__all__)
        for kind in %r:
            module = getattr(otfs, kind)
            names += [f"{kind}.{n}" for n in module.__all__]
            for n in module.__all__:
                getattr(module, n)  # every name the stub lists exists
        for n in otfs.__all__:
            getattr(otfs, n)
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("snakemake", "otfs_workflow", "yaml", "jsonschema",
                                                                  "matplotlib", "snakemake_logger_plugin_otfs"))
        print(len(names), bad)
    """ % (KINDS,))
    count, bad = out.split(" ", 1)
    assert int(count) > 40 and bad.strip() == "[]"


@pytest.mark.subprocess
def test_importing_otfs_alone_loads_none_of_its_methods():
    # SPEC 1 (lazy_loader): the names are imported on first use, so a pipeline job pays for what it runs
    out = _run("""
        import sys
        import otfs, otfs.rankers, otfs.adapters
        print(sorted(m for m in sys.modules if m.startswith("otfs")), "sklearn" in sys.modules, "ot" in sys.modules)
    """)
    assert out.split() == ["['otfs',", "'otfs.adapters',", "'otfs.rankers']", "False", "False"]


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_library_module_imports_the_pipeline_or_reads_config(path):
    imports = _imports(path)
    pipeline = {m for m in imports if m.split(".")[0] in ("otfs_workflow", "snakemake", "yaml", "jsonschema",
                                                          "matplotlib")}
    assert not pipeline, f"{path}: the library imports {sorted(pipeline)}"
    text = path.read_text(encoding="utf-8")
    # no library code reads a configuration or a results path (docstrings may name config keys)
    code = ast.unparse(ast.parse(text))  # without comments
    body = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("'", '"')))
    for needle in ('config["', "config.get(", '"results/', "'results/", "snakemake."):
        assert needle not in body, f"{path}: {needle!r}"


def test_every_kind_is_one_folder_with_its_base_registry_and_stub():
    from otfs.registry import REGISTRY_MODULES

    for kind in KINDS:
        folder = SRC / kind
        assert (folder / "__init__.py").is_file() and (folder / "__init__.pyi").is_file(), kind
        assert "attach_stub" in (folder / "__init__.py").read_text(), kind
    # every registry is defined inside its kind's folder (or the two top-level helpers' modules)
    for group, module in REGISTRY_MODULES.items():
        assert module.split(".")[1] in (*KINDS, "classification"), (group, module)
        # one name per kind: the entry-point group is the folder's name
        assert group == ".".join(module.split(".")[:2]) or group == "otfs.classifiers", (group, module)
    # no flat module of the old layout is left at the top level
    top = sorted(p.stem for p in SRC.glob("*.py"))
    assert top == ["__init__", "_checks", "_skada", "base", "classification", "preprocessing", "registry"], top


def test_the_workflow_scripts_are_plain_python_without_noqa():
    # each takes the job's object from otfs_workflow.stages.snakemake_object(): no undefined name to silence
    for script in sorted((REPO / "workflow" / "scripts").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        assert "noqa" not in text and "snakemake_object()" in text, script.name


def test_job_pairs_reads_a_one_pair_job_and_a_batch_alike():
    # the scripts of a one-pair rule and of its rule made per feature set (rank_pairs_<fs>, ...) read their pairs,
    # files and per-pair parameters through JobPairs; a batch's file lists must have one file per pair
    from types import SimpleNamespace

    from otfs_workflow.stages import JobPairs

    one = JobPairs(SimpleNamespace(params=SimpleNamespace(per_class=20), wildcards=SimpleNamespace(pair="a-b")))
    assert (one.batch, one.pairs, one.each("r/a-b.json"), one.of(20, "a-b")) == (False, ["a-b"], ["r/a-b.json"], 20)
    batch = JobPairs(SimpleNamespace(params=SimpleNamespace(pairs=["a-b", "b-a"]), wildcards=SimpleNamespace()))
    assert batch.pairs == ["a-b", "b-a"] and batch.each(("r/a-b.json", "r/b-a.json")) == ["r/a-b.json", "r/b-a.json"]
    assert batch.of({"a-b": 20, "b-a": 8}, "b-a") == 8
    with pytest.raises(ValueError, match=r"1 files for the 2 pairs"):
        batch.each(["r/a-b.json"])
    for name in ("ranking.py", "classification_adapters.py", "model_selection_pair.py"):
        text = (REPO / "workflow" / "scripts" / name).read_text(encoding="utf-8")
        assert "JobPairs(" in text and '"pairs")' not in text, name


def test_each_related_experiment_is_declared_in_its_own_file():
    # the Snakefile lists the experiments once; each is workflow/rules/<name>.smk with a target rule of its name,
    # which `related` and `all` build (no list of targets appended to from many files)
    import re

    snakefile = (REPO / "Snakefile").read_text(encoding="utf-8")
    names = re.findall(r'^    "(\w+)",$', snakefile.split("RELATED_EXPERIMENTS = [", 1)[1].split("]", 1)[0], re.M)
    assert len(names) >= 7
    for name in names:
        assert f'include: "workflow/rules/{name}.smk"' in snakefile, name
        assert re.search(rf"^rule {name}:$", (REPO / "workflow" / "rules" / f"{name}.smk").read_text(), re.M), name
    rules_text = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    assert "RELATED_TARGETS" not in rules_text + snakefile


def test_snakemake_lint_would_not_take_a_docstring_for_a_rule():
    # snakemake --lint finds rules in a .smk file by the text "rule NAME:"; a function file with such a line in
    # a docstring is reported as mixing rules and functions (CI runs the lint; this says which line)
    import re

    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text(encoding="utf-8")
        if not re.search(r"^rule \w+:", text, re.M):  # a file of functions only
            assert not re.findall(r"rule .+?:", text), (smk.name, re.findall(r".*rule .+?:.*", text))


def test_no_document_points_outside_the_repository():
    """The docs, READMEs and report captions name files of the repository only: no path to a folder beside
    it, and every relative Markdown link resolves inside it to a file or folder that exists (or, under
    results/, one the pipeline generates)."""
    import re

    docs = [REPO / "README.md", REPO / "CHANGELOG.md", *REPO.glob("docs/**/*.md"), *REPO.glob("data/**/README.md"),
            *REPO.glob("workflow/report/*.rst")]
    root = REPO.resolve()
    problems = []
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"(?<![\w.])\.\./shared\b|/work/shared", line):
                problems.append(f"{doc.relative_to(REPO)}:{n}: a path outside the repository: {line.strip()}")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path = (doc.parent / target).resolve()
            if not path.is_relative_to(root):
                problems.append(f"{doc.relative_to(REPO)}: the link {target} leaves the repository")
            elif not path.exists() and not path.is_relative_to(root / "results"):
                problems.append(f"{doc.relative_to(REPO)}: the link {target} names no file")
    assert not problems, "\n".join(problems)


def test_the_pipeline_modules_share_no_private_name_and_the_stages_no_cycle():
    """No module of otfs_workflow, otfs_benchmarks or workflow/scripts imports another's private name, nor does the
    pipeline import one of the library's (shared helpers live in their own modules: otfs_workflow.stats,
    otfs_workflow.formatting; what the pipeline calls in the library is public there, if in a private module; the
    benchmark suite's reference oracles may time the library's internals), and the stages' imports
    (grimp's graph, function-level imports included) have no cycle."""
    from pathlib import Path

    import grimp

    homes = {"otfs_workflow": REPO / "workflow" / "lib", "otfs_benchmarks": REPO / "benchmarks", "otfs": REPO / "src"}
    problems = []
    for path in [*(REPO / "workflow" / "lib" / "otfs_workflow").rglob("*.py"), *(REPO / "workflow" / "scripts").glob("*.py"),
                 *(REPO / "benchmarks" / "otfs_benchmarks").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            top = (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else None
            if top in homes and not (top == "otfs" and "benchmarks" in path.parts):
                folder = homes[node.module.split(".")[0]] / Path(*node.module.split("."))
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")
                           and not (folder / f"{a.name}.py").is_file()]  # a private module of the package's own
                if private:
                    problems.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.module} {private}")
            # the pipeline package never imports the benchmark suite (which imports it)
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if "otfs_workflow" in path.parts and any(n.split(".")[0] == "otfs_benchmarks" for n in names):
                problems.append(f"{path.relative_to(REPO)}:{node.lineno}: imports the benchmark suite")
    assert not problems, "\n".join(problems)
    graph = grimp.build_graph("otfs_workflow", include_external_packages=False)
    stages = {m for m in graph.modules if m.startswith("otfs_workflow.stages.")}
    edges = {m: {n for n in graph.find_modules_directly_imported_by(m) if n in stages} for m in stages}
    done, cycles = set(), []

    def visit(m, path):
        if m in path:
            cycles.append(path[path.index(m):] + [m])
            return
        if m in done:
            return
        for n in sorted(edges[m]):
            visit(n, [*path, m])
        done.add(m)

    for m in sorted(stages):
        visit(m, [])
    assert not cycles, cycles
