"""The light path of the pipeline's commonest jobs: POT's solver without ``import ot``, no scikit-learn,
pandas or SciPy where a job does not need them (the NA curves), and results equal to the library's path."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import ot
import pandas as pd
import pytest
from sklearn.utils import check_random_state as sklearn_check_random_state

from otfs._checks import check_random_state
from otfs._ot.emd import emd, sqeuclidean, uniform
from otfs_workflow.io import write_rows_tsv, write_tsv

from .conftest import REPO, toy_caches

HEAVY = ("ot", "sklearn", "scipy", "pandas")


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter (imports counted from nothing); return its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("seed", range(6))
def test_emd_is_pots_coupling_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(5, 60, size=2)
    if seed % 2:  # integer costs on a grid: many tied optimal couplings, where round-off and order decide
        A = rng.integers(0, 3, size=(n, 4)).astype(float)
        B = rng.integers(0, 3, size=(m, 4)).astype(float)
    else:
        A, B = rng.normal(size=(n, 7)), rng.normal(size=(m, 7))
    M = sqeuclidean(A, B)
    assert np.array_equal(M, ot.dist(A, B, metric="sqeuclidean"))
    assert np.array_equal(uniform(n), ot.unif(n))
    G, code, message = emd(uniform(n), uniform(m), M, 100_000)
    G_pot, log = ot.emd(ot.unif(n), ot.unif(m), M, numItermax=100_000, log=True)
    assert np.array_equal(G, G_pot)
    assert (code, message) == (log["result_code"], log["warning"]) == (1, None)


def test_emd_reports_the_iteration_limit_and_refuses_bad_weights():
    rng = np.random.default_rng(0)
    M = rng.random((40, 50))
    G, code, message = emd(uniform(40), uniform(50), M, 3)
    assert code != 1 and "numItermax" in message
    with pytest.raises(ValueError, match="every weight must be positive"):
        emd(np.array([1.0, 0.0]), uniform(2), M[:2, :2], 10)
    with pytest.raises(ValueError, match="same sum"):
        emd(np.array([0.5, 0.6]), uniform(2), M[:2, :2], 10)
    with pytest.raises(ValueError, match="do not match the cost"):
        emd(uniform(3), uniform(2), M[:2, :2], 10)


@pytest.mark.subprocess
def test_the_solver_loads_without_pot_and_pot_still_imports_after_it():
    out = _run("""
        import sys
        import numpy as np
        from otfs._ot.emd import emd, emd_module, uniform
        rng = np.random.default_rng(1)
        M = rng.random((20, 30))
        G, code, _ = emd(uniform(20), uniform(30), M, 100000)
        print(sorted({k.split(".")[0] for k in sys.modules} & {"ot", "sklearn", "scipy", "pandas"}))
        print(emd_module().__name__)
        import ot  # POT's own package afterwards: the same solver, the same coupling
        assert np.array_equal(G, ot.emd(ot.unif(20), ot.unif(30), M)), "different couplings"
        assert callable(ot.lp.emd_wrap.emd_c)
        print("ok")
    """).splitlines()
    assert out[0] == "[]", f"importing the solver imported {out[0]}"
    assert out[1] == "_otfs_pot_emd.lp.emd_wrap"  # the standalone load, not a fallback to `import ot`
    assert out[2] == "ok"


@pytest.mark.subprocess
def test_pot_imported_first_is_used_as_it_is():
    out = _run("""
        import ot
        from otfs._ot.emd import emd_module
        print(emd_module() is ot.lp.emd_wrap)
    """)
    assert out.strip() == "True"


@pytest.mark.parametrize("seed", [0, 7, 2**31 - 1, np.int64(12)])
def test_check_random_state_is_scikit_learns(seed):
    ours, theirs = check_random_state(seed), sklearn_check_random_state(seed)
    assert np.array_equal(ours.permutation(50), theirs.permutation(50))
    rs = np.random.RandomState(3)
    assert check_random_state(rs) is rs
    assert check_random_state(None) is np.random.mtrand._rand
    with pytest.raises(ValueError, match="cannot be used to seed"):
        check_random_state("seven")


def test_rows_tsv_is_pandas_tsv_byte_for_byte(tmp_path):
    columns = ["name", "iteration", "accuracy", "seconds", "note"]
    rows = [
        {"name": "NA", "iteration": 0, "accuracy": 100 / 3, "seconds": 0.0, "note": "plain"},
        {"name": "OT3", "iteration": 18, "accuracy": 45.0, "seconds": 1.234567890123e-5, "note": 'has "quotes"'},
        {"name": "skada:CORALAdapter", "iteration": 3, "accuracy": float("nan"), "seconds": 12345678901.5,
         "note": "tab\there"},
        {"name": "x", "iteration": np.int64(4), "accuracy": np.float64(2 / 7), "seconds": 1e-300, "note": ""},
    ]
    write_rows_tsv(tmp_path / "ours.tsv", columns, rows)
    write_tsv(pd.DataFrame(rows, columns=columns), tmp_path / "pandas.tsv")
    assert (tmp_path / "ours.tsv").read_bytes() == (tmp_path / "pandas.tsv").read_bytes()
    with pytest.raises(ValueError, match="row 0 has no column 'missing'"):
        write_rows_tsv(tmp_path / "bad.tsv", [*columns, "missing"], rows)
    assert not (tmp_path / "bad.tsv").exists()


@pytest.mark.subprocess
def test_the_ranking_job_runs_the_estimator_without_pot_and_the_na_curves_without_the_heavy_imports(tmp_path):
    """The pipeline's commonest jobs, run as its scripts run them: the ranking job fits the library's public
    estimator (scikit-learn), whose exact OT solver loads without ``import ot``; the NA classification job
    imports none of HEAVY. Both give what the library's estimator path gives in this process."""
    caches, (Xs, ys, Xt, yt) = toy_caches(tmp_path, seed=3)
    out = _run(f"""
        import sys
        from otfs_workflow.stages import ranking
        ranking.run({caches!r}, "toy", "src-tgt", "ot", iterations=[0, 1], per_class=10,
                    output={str(tmp_path / "job.json")!r})
        print(sorted({{k.split(".")[0] for k in sys.modules}} & {set(HEAVY)!r}))
    """)
    assert out.strip() == "['pandas', 'scipy', 'sklearn']", f"the ranking job imported {out.strip()}"
    out = _run(f"""
        import sys
        from otfs_workflow.stages import classification
        classification.run({caches!r}, {str(tmp_path / "job.json")!r}, "NA", "g", ["Descending", "Random"],
                           [2, 6, "d"], {str(tmp_path / "light.tsv")!r}, as_frame=False)
        print(sorted({{k.split(".")[0] for k in sys.modules}} & {set(HEAVY)!r}))
    """)
    assert out.strip() == "[]", f"the NA classification job imported {out.strip()}"
    # in this process: the same rankings (but their wall times) and the same curves
    from otfs_workflow.stages import classification, ranking

    ranking.run(caches, "toy", "src-tgt", "ot", iterations=[0, 1], per_class=10, output=tmp_path / "heavy.json")
    light, heavy = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("job", "heavy"))
    for doc in (light, heavy):
        for it in doc["iterations"]:
            it.pop("ranking_time_s")
    assert light == heavy
    from otfs.adapters import NoAdaptation

    df = classification.run(caches, tmp_path / "heavy.json", "NA", "g", ["Descending", "Random"], [2, 6, "d"],
                            tmp_path / "heavy.tsv")
    assert (tmp_path / "light.tsv").read_bytes() == (tmp_path / "heavy.tsv").read_bytes()
    assert isinstance(df, pd.DataFrame) and len(df) == 2 * 2 * 3
    from otfs.classification import accuracy_curve

    it = heavy["iterations"][0]
    sub = it["source_subset"]
    with_adapter = accuracy_curve(Xs[sub], ys[sub] + 1, Xt, yt + 1, {"Descending": it["orders"]["Descending"]},
                                  [2, 6, 12], adapter=NoAdaptation())
    assert [r["accuracy"] for r in with_adapter] == list(df["accuracy"][:3])


@pytest.mark.subprocess
@pytest.mark.parametrize("adapter, heavy", [("NA", "[]"), ("CORAL", "['pandas', 'scipy', 'sklearn']")])
def test_a_job_imports_the_plug_ins_its_manifest_names_only_when_it_looks_one_up(tmp_path, adapter, heavy):
    """job() with the rule's code manifest, as the pipeline runs it: the NA curves look no adapter up, so the
    NA plug-in named in the manifest (and the adapters' base module: scikit-learn, SciPy) is never imported;
    a CORAL job imports its plug-in file and no other adapter's. Both pass the job's code-input check."""
    from otfs_workflow.codedeps import scoped_manifest

    caches, _ = toy_caches(tmp_path, seed=3)
    from otfs_workflow.stages import ranking

    ranking.run(caches, "toy", "src-tgt", "ot", iterations=[0], per_class=10, output=tmp_path / "r.json")
    module = f"otfs.adapters.{adapter.lower()}"
    manifest = scoped_manifest(REPO / "workflow" / "scripts" / "classification.py",
                               [REPO / "src" / "otfs", REPO / "workflow" / "lib" / "otfs_workflow"],
                               {"otfs.adapters": [module]}, folder=tmp_path / "code")
    out = _run(f"""
        import sys
        from otfs_workflow.stages import classification, job
        with job({str(tmp_path / "job.log")!r}, 1, "classification", code={str(manifest)!r}):
            classification.run({caches!r}, {str(tmp_path / "r.json")!r}, {adapter!r}, "g", ["Descending"], [2, "d"],
                               {str(tmp_path / "c.tsv")!r}, as_frame=False)
        print(sorted({{k.split(".")[0] for k in sys.modules}} & {set(HEAVY)!r}))
        print({module!r} in sys.modules, sorted(m for m in sys.modules if m.startswith("otfs.adapters.")
                                              and m.rsplit(".", 1)[-1][0] != "_"))
    """).splitlines()
    assert out[0] == heavy, f"the {adapter} job imported {out[0]}"
    assert out[1] == (f"True ['{module}']" if adapter != "NA" else "False []")
    assert "code inputs: the" in (tmp_path / "job.log").read_text()


@pytest.mark.subprocess
def test_a_wda_job_imports_pymanopt_without_its_optional_backends(tmp_path):
    """A job whose code includes WDA imports pymanopt with PyTorch, JAX and TensorFlow hidden (1.3 s of PyTorch
    per job before): none of them is imported by the fit, pymanopt's PyTorch backend says it is unavailable,
    the projection equals a fit's in a process where pymanopt saw them, and PyTorch, where installed, still
    imports afterwards. A job without WDA in its code does not import pymanopt."""
    import importlib.util

    from otfs_workflow.codedeps import scoped_manifest

    packages = [REPO / "src" / "otfs", REPO / "workflow" / "lib" / "otfs_workflow"]
    wda = scoped_manifest(REPO / "workflow" / "scripts" / "wda.py", packages, {}, folder=tmp_path / "code")
    na = scoped_manifest(REPO / "workflow" / "scripts" / "classification.py", packages,
                         {"otfs.adapters": ["otfs.adapters.na"]}, folder=tmp_path / "code")
    fit = """
        import numpy as np
        from otfs.reducers import WassersteinDiscriminantAnalysis
        rng = np.random.RandomState(0)
        X, y = rng.normal(size=(60, 6)) + np.repeat(np.eye(3, 6) * 2, 20, axis=0), np.repeat([0, 1, 2], 20)
        P = WassersteinDiscriminantAnalysis(n_components=2, max_iter=5, random_state=0).fit(X, y).components_
    """
    out = _run(f"""
        import sys
        from otfs_workflow.stages import job
        with job({str(tmp_path / "wda.log")!r}, 1, "wda", code={str(wda)!r}):
            {textwrap.indent(textwrap.dedent(fit), " " * 12).strip()}
        from pymanopt.autodiff.backends import PyTorchBackend
        print(sorted(m for m in ("torch", "jax", "tensorflow") if m in sys.modules), PyTorchBackend.is_available())
        print(P.tobytes().hex())
        try:
            import torch  # noqa: F401
            print("torch imports")
        except ImportError:
            print("no torch")
    """).splitlines()
    assert out[0] == "[] False", out[0]
    assert "done in" in (tmp_path / "wda.log").read_text()
    reference = _run("import pymanopt\n" + textwrap.dedent(fit) + "\nprint(P.tobytes().hex())").split()
    assert out[1] == reference[0]
    assert out[2] == ("torch imports" if importlib.util.find_spec("torch") is not None else "no torch")
    out = _run(f"""
        import sys
        from otfs_workflow.stages import job
        with job({str(tmp_path / "na.log")!r}, 1, "classification", code={str(na)!r}):
            pass
        print("pymanopt" in sys.modules)
    """)
    assert out.strip() == "False"


@pytest.mark.subprocess
def test_a_lookup_imports_only_the_plug_in_file_named_like_it():
    out = _run("""
        import sys
        from otfs.sample_selection import STRATEGIES
        STRATEGIES["ot"]
        print("otfs.sample_selection.nearest_neighbour" in sys.modules, STRATEGIES._loaded)
        print("1nn" in STRATEGIES, "otfs.sample_selection.nearest_neighbour" in sys.modules, STRATEGIES._loaded)
        try:
            STRATEGIES["otx"]
        except KeyError as exc:
            print(str(exc))
    """).splitlines()
    assert out[0] == "False False"  # the file ot.py only: no other strategy, no entry-point scan
    assert out[1] == "True True True"  # reading the set of names loads the whole folder and the entry points
    assert out[2].startswith("unknown sample-selection strategy 'otx'") and "'1nn'" in out[2]


@pytest.mark.subprocess
def test_the_clinical_module_imports_pandas_and_scikit_learn_only_where_used(tmp_path):
    """Every Snakemake process parses the workflow, which imports otfs.datasets._clinical (voxel_table_width)."""
    table = tmp_path / "voxels.tsv"
    table.write_text("exam\tdomain\tlabel\tf1\tf2\tf3\ne1\t1.5T\t0\t1\t2\t3\n")
    out = _run(f"""
        import sys
        from otfs.datasets import voxel_table_width
        print(voxel_table_width({str(table)!r}), sorted({{k.split(".")[0] for k in sys.modules}} & {set(HEAVY)!r}))
    """)
    assert out.split(" ", 1) == ["3", "[]\n"]


@pytest.mark.subprocess
def test_reading_every_registry_and_the_ot_adapters_import_neither_pot_nor_skada():
    """Every Snakemake process reads every registry while it parses the workflow (the configuration's names,
    the code manifests), and the OT adapters' jobs need POT's cost and weights only (``otfs._ot.emd``, equal to
    ``ot.dist`` and ``ot.unif`` above): neither pays for ``import ot``, which imports networkx where PyTorch's
    dependencies put it (docs/performance.md). OT2 with another of POT's Sinkhorn methods imports it."""
    out = _run("""
        import sys
        from otfs.registry import REGISTRY_MODULES, get_registry
        names = {group: sorted(get_registry(group)) for group in REGISTRY_MODULES}
        print(sorted(m for m in ("ot", "skada", "networkx", "torch") if m in sys.modules))
        print(all(names.values()), {"OT", "OT2", "OT3"} <= set(names["otfs.adapters"]))
        import numpy as np
        from otfs.adapters import get_adapter
        rng = np.random.RandomState(0)
        Xs, Xt, ys = rng.randn(20, 3), rng.randn(15, 3) + 1, rng.randint(0, 2, 20)
        adapters = [get_adapter(name) for name in ("OT", "OT2", "OT3")]
        for adapter in adapters:
            adapter.adapt(Xs, ys, Xt)
        print("ot" in sys.modules, all(np.isclose(a.coupling_.sum(), 1.0) for a in adapters))
        get_adapter("OT2", method="sinkhorn_log").adapt(Xs, ys, Xt)
        print("ot" in sys.modules)
    """).splitlines()
    assert out == ["[]", "True True", "False True", "True"]


@pytest.mark.parametrize("norm", [None, "none", "median", "max", "log", "loglog"])
def test_the_cost_normalisation_is_pots_bit_for_bit(norm):
    from ot.utils import cost_normalization

    from otfs._ot.solvers import normalise_cost

    rng = np.random.RandomState(7)
    for shape in ((30, 40), (1, 5), (64, 64)):
        C = sqeuclidean(rng.rand(shape[0], 6) * 3, rng.rand(shape[1], 6))
        ours, pots = normalise_cost(C.copy(), norm), cost_normalization(C.copy(), None if norm == "none" else norm)
        assert ours.dtype == pots.dtype and np.array_equal(ours, pots), (norm, shape)
    with pytest.raises(ValueError, match="Norm l2 is not a valid option"):
        normalise_cost(np.ones((2, 2)), "l2")


@pytest.mark.subprocess
def test_the_parse_modules_load_no_json_schema_validator_until_a_configuration_is_checked():
    """A parse whose configuration was checked before (its answer kept, otfs_workflow.plan_cache) imports the
    planning modules and validates nothing, so they import no JSON Schema validator; checking one still does."""
    out = _run(f"""
        import sys
        import yaml
        import otfs_workflow.config, otfs_workflow.plan, otfs_workflow.plan_cache, otfs_workflow.run_log
        print("jsonschema" in sys.modules)
        from otfs_workflow.config import ConfigError, validate_config
        config = yaml.safe_load(open({str(REPO / "config.yaml")!r}))
        config["protocol"]["iterations"] = "many"
        try:
            validate_config(config, {str(REPO / "workflow" / "schemas" / "config.schema.yaml")!r})
        except ConfigError as err:
            print("protocol.iterations" in str(err), "jsonschema" in sys.modules)
    """).splitlines()
    assert out == ["False", "True True"], out
