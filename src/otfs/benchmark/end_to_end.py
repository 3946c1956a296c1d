"""End to end: the SURF Figure 7 target against the paper's protocol as one plain script.

``plain_figure7`` runs the paper's protocol the straightforward way, in one
process: read the ``.mat`` files, normalise, and for every pair and
iteration rank with POT's ``ot.da`` classes (:func:`reference.rank`) and
score each point of the three curves with a fresh 1-NN classifier
(:func:`reference.na_curve`). It draws the same source subsets and random
orders as the pipeline (seeds from feature set, pair and iteration), so its
accuracies must equal the pipeline's.

``python -m otfs.benchmark.end_to_end --mirror DIR --workdir DIR`` times
both: the pipeline from a cold cache (a fresh copy of the workflow, data
acquired from the mirror, every job of ``figure7`` for SURF, Snakemake's
overhead included, ``--cores`` as given) and the plain script; it writes
``end_to_end.csv`` with both wall times and the largest accuracy difference.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io

from ..io import write_csv
from ..preprocessing import row_sum_normalize, zscore
from ..protocol import derive_seed, draw_source_subset, feature_counts, make_pairs
from ..ranking import feature_orders
from . import reference

__all__ = ["plain_figure7", "run_pipeline"]

DOMAINS = ("amazon", "caltech10", "dslr", "webcam")
#: What a fresh copy of the workflow needs (everything but data and results).
WORKFLOW_FILES = ["Snakefile", "config.yaml", "config", "envs", "profiles", "workflow", "src", "data/manifests",
                  "data/paper", "data/attributes"]


def copy_workflow(repo, dest) -> Path:
    """Copy the workflow's files from ``repo`` to ``dest`` (no data, no results)."""
    repo, dest = Path(repo), Path(dest)
    for name in WORKFLOW_FILES:
        src = repo / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def plain_figure7(mat_dir, iterations=19, per_class=20, overrides=None, feature_set="surf",
                  pairs=None) -> pd.DataFrame:
    """The paper's Figure 7 protocol for SURF as a plain loop; one row per (pair, iteration, order, n)."""
    overrides = {"dslr": 8} if overrides is None else overrides
    data = {}
    for d in DOMAINS:
        mat = scipy.io.loadmat(Path(mat_dir) / f"{d}.mat")
        # C order, as the pipeline's cache: MATLAB arrays load in Fortran order, and
        # the z-score's sums in the other order differ by ~1e-13, which is enough
        # to flip the exact ties of Algorithm 1's coupling and change T_u.
        X = np.ascontiguousarray(mat["fts"], dtype=float)
        data[d] = (zscore(row_sum_normalize(X)), np.asarray(mat["labels"]).ravel().astype(int))
    rows = []
    for pair in make_pairs(DOMAINS) if pairs is None else pairs:
        s, t = pair.split("-")
        (Xs_all, ys_all), (Xt, yt) = data[s], data[t]
        counts = feature_counts(Xt.shape[1])
        for it in range(iterations):
            sub = draw_source_subset(ys_all, overrides.get(s, per_class),
                                     random_state=derive_seed(feature_set, pair, it, "source_subset"),
                                     classes=range(1, 11))
            Xs, ys = Xs_all[sub], ys_all[sub]
            scores = reference.rank(Xs, Xt)
            orders = feature_orders(scores, random_state=derive_seed(feature_set, pair, it, "random_order"))
            for name, order in orders.items():
                for n, acc in zip(counts, reference.na_curve(Xs, ys, Xt, yt, order, counts), strict=True):
                    rows.append({"pair": pair, "iteration": it, "order": name, "n_features": n, "accuracy": acc})
    return pd.DataFrame(rows)


def run_pipeline(repo, workdir, mirror, cores=2, iterations=19) -> tuple[float, pd.DataFrame]:
    """Copy the workflow to ``workdir``, build Figure 7 for SURF from nothing; return (seconds, results)."""
    repo, workdir = Path(repo), Path(workdir)
    if workdir.exists():
        shutil.rmtree(workdir)
    copy_workflow(repo, workdir)
    (workdir / "config" / "figure7_surf.yaml").write_text(
        f"protocol:\n  iterations: {int(iterations)}\ntargets:\n  figure7:\n    feature_sets: [surf]\n"
    )
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror)}
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    with open(workdir / "snakemake.log", "w") as log:
        _run_snakemake(workdir, cores, env, log)
    seconds = time.perf_counter() - start
    frames = [pd.read_csv(p, sep="\t", keep_default_na=False)
              for p in sorted((workdir / "results" / "runs" / "surf" / "classification").rglob("*.tsv"))]
    return seconds, pd.concat(frames, ignore_index=True)


def _run_snakemake(workdir, cores, env, log):
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile"),
         "--configfile", str(workdir / "config" / "figure7_surf.yaml"), "--cores", str(cores), "figure7"],
        check=True, env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
    )


def compare(repo, workdir, mirror, out, cores=2, iterations=19, log=print) -> dict:
    """Time the pipeline and the plain script, compare their accuracies, write ``end_to_end.csv``."""
    mirror = Path(mirror).resolve()  # the nested pipeline runs in another folder
    pipe_s, pipe = run_pipeline(repo, workdir, mirror, cores, iterations)
    log(f"pipeline (snakemake --cores {cores} figure7, SURF, cold cache): {pipe_s:.1f} s")
    # One BLAS thread, as every pipeline job: the exact OT of Algorithm 1 has
    # tied optimal couplings, and the cost matrix's round-off, which depends on
    # the BLAS thread count, picks among them (see the README).
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    with threadpool_limits(limits=1):
        plain = plain_figure7(Path(mirror) / "surf", iterations=iterations)
    plain_s = time.perf_counter() - start
    log(f"plain script with the straightforward implementations (1 BLAS thread): {plain_s:.1f} s")
    keys = ["pair", "iteration", "order", "n_features"]
    merged = plain.merge(pipe[keys + ["accuracy"]], on=keys, suffixes=("_plain", "_pipeline"), validate="1:1")
    diff = float(np.abs(merged["accuracy_plain"] - merged["accuracy_pipeline"]).max())
    row = {"case": "Figure 7, SURF, cold cache", "iterations": iterations, "cores": cores,
           "pipeline_s": pipe_s, "plain_script_s": plain_s, "ratio": plain_s / pipe_s,
           "accuracies": len(merged), "max_accuracy_difference": diff}
    log(f"{len(merged)} accuracies compared; largest difference {diff:g} points; ratio {row['ratio']:.1f}x")
    write_csv(pd.DataFrame([row]), Path(out) / "end_to_end.csv", float_format="%.4g")
    return row


#: Largest accuracy difference (points) counted as equal: the results TSVs hold 10 digits.
TOLERANCE = 1e-6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs.benchmark.end_to_end", description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("OTFS_DATA_MIRROR"), help="office-caltech mirror folder")
    parser.add_argument("--workdir", default="/tmp/otfs-end-to-end")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=19)
    parser.add_argument("--out", default="results/benchmarks")
    args = parser.parse_args(argv)
    if not args.mirror:
        raise SystemExit("--mirror (or OTFS_DATA_MIRROR) must name the office-caltech data folder")
    repo = Path(__file__).resolve().parents[3]
    row = compare(repo, args.workdir, args.mirror, args.out, args.cores, args.iterations)
    return 0 if row["max_accuracy_difference"] <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
