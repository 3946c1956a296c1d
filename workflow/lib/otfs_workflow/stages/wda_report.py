"""Stage ``wda`` reports: the WDA paper's Table 1 and Figure 2, and the Office-Caltech adapter table.

They read the runs of :mod:`otfs_workflow.stages.wda` only, so editing a table or a
plot reruns no evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import read_tsv, write_csv, write_json, write_text
from otfs_workflow.tables import render_latex, render_markdown

#: Table 1 of Flamary et al. (mean test error, %, 20 splits); caltechpca has no copy here.
PUBLISHED = pd.DataFrame(
    {
        "LFDA": [29.89, 24.00, 59.48, 48.35, 18.44, 28.10, 13.96, 12.76, 29.92, 18.19],
        "LMNN": [32.81, 21.67, 54.25, 40.84, 23.73, 30.80, 11.13, 6.05, 13.95, 11.55],
        "LSDR": [32.81, 37.93, 50.85, 51.86, 24.71, 31.08, 13.33, 8.77, 26.53, 36.08],
        "CEML": [15.34, 20.87, 34.86, 48.46, 17.65, 22.87, 30.19, 10.15, 24.68, 13.65],
        "WDA": [16.91, 20.87, 45.99, 51.13, 17.39, 20.40, 14.41, 6.50, 13.07, 11.45],
    },
    index=["wine", "iris", "glass", "vehicles", "credit", "ionosphere", "isolet", "usps", "mnist", "caltechpca"],
)
#: Average rank over the paper's 8 methods (its last row).
PUBLISHED_RANKS = {"LFDA": 5.2, "LMNN": 3.4, "LSDR": 5.7, "CEML": 3.5, "WDA": 2.2}


def _average_ranks(means: pd.DataFrame) -> pd.Series:
    return means.rank(axis=1, method="average").mean(axis=0)


def _paired_test(runs: pd.DataFrame, dataset: str, a: str, b: str) -> tuple[float, float]:
    """Mean of ``a - b`` over the splits both ran, and the two-sided Wilcoxon signed-rank p-value (1 if all equal)."""
    from scipy.stats import wilcoxon

    part = runs[runs["dataset"] == dataset].pivot_table(index="split", columns="method", values="error")
    if a not in part or b not in part:
        return np.nan, np.nan
    diff = (part[a] - part[b]).dropna()
    if diff.empty:
        return np.nan, np.nan
    if not diff.any():
        return 0.0, 1.0
    return float(diff.mean()), float(wilcoxon(diff, zero_method="wilcox").pvalue)


def _stars(p_value: float) -> str:
    return " †" if p_value == p_value and p_value < 0.05 else ""


def table1(inputs: Sequence[str], cfg: Mapping, outputs: Mapping, provenance: Mapping) -> pd.DataFrame:
    """Mean test error per data set and method, average ranks, and the paper's numbers beside."""
    from otfs.datasets import UCI_DATASETS

    runs = pd.concat([read_tsv(p) for p in inputs], ignore_index=True)
    means = runs.pivot_table(index="dataset", columns="method", values="error", aggfunc="mean")
    stds = runs.pivot_table(index="dataset", columns="method", values="error", aggfunc="std")
    methods = [m for m in cfg["methods"] if m in means.columns]
    datasets = [d for d in cfg["datasets"] if d in means.index]
    means, stds = means.loc[datasets, methods], stds.loc[datasets, methods]
    long = runs.groupby(["dataset", "method"]).agg(
        error=("error", "mean"), std=("error", "std"), splits=("split", "count"), p=("p", "median"),
        k=("k", "median"), seconds=("seconds", "sum"), n_train=("n_train", "first"),
        n_test=("n_test", "first"), d=("d", "first"),
    ).reset_index()
    long["paper_WDA"] = long["dataset"].map(PUBLISHED["WDA"])
    # beside the paper's WDA: ours minus it, and whether it lies within 2 of our standard deviations
    long["difference"] = np.where(long["method"] == "WDA", long["error"] - long["paper_WDA"], np.nan)
    long["within_2_std"] = [bool(abs(r.difference) <= 2 * r.std) if r.method == "WDA" and r.paper_WDA == r.paper_WDA
                            else None for r in long.itertuples()]
    if {"WDA", "PCA"} <= set(methods):  # the paper's test (its Table 1): paired Wilcoxon signed-rank over the splits
        paired = {d: _paired_test(runs, d, "WDA", "PCA") for d in datasets}
        long["minus_PCA"] = [paired[r.dataset][0] if r.method == "WDA" and r.dataset in paired else np.nan
                             for r in long.itertuples()]
        long["vs_PCA_p_value"] = [paired[r.dataset][1] if r.method == "WDA" and r.dataset in paired else np.nan
                                  for r in long.itertuples()]
    if "candidate" in runs.columns:  # how often cross-validation chose each candidate setting
        chosen = runs.groupby(["dataset", "method"])["candidate"].agg(lambda c: ",".join(
            f"{int(k)}:{int(n)}" for k, n in sorted(c.value_counts().items())))
        long["candidates_chosen"] = [chosen.get((r.dataset, r.method), "") for r in long.itertuples()]
    write_csv(long, outputs["csv"])
    ranks = _average_ranks(means)
    wide = pd.DataFrame(index=[*datasets, "caltechpca", f"Average rank (/{len(methods)})"])
    for m in methods:
        wide[m] = [f"{means.loc[d, m]:.2f} ± {stds.loc[d, m]:.2f}" for d in datasets] + ["", f"{ranks[m]:.2f}"]
    if "WDA" in methods:
        pub = [PUBLISHED["WDA"].get(d, np.nan) for d in datasets]
        diff = [means.loc[d, "WDA"] - v for d, v in zip(datasets, pub, strict=True)]
        wide["paper WDA"] = [("" if np.isnan(v) else f"{v:.2f}") for v in pub] + [f"{PUBLISHED['WDA']['caltechpca']:.2f}",
                                                                                  f"{PUBLISHED_RANKS['WDA']:.1f} (/8)"]
        wide["WDA − paper"] = [("" if np.isnan(x) else f"{x:+.2f}" + (" *" if abs(x) > 2 * stds.loc[d, "WDA"] else ""))
                               for d, x in zip(datasets, diff, strict=True)] + ["", ""]
    for m in methods:  # every computed method with published numbers, beside them
        if m == "WDA" or m not in PUBLISHED.columns:
            continue
        diff = [means.loc[d, m] - PUBLISHED.loc[d, m] if d in PUBLISHED.index else np.nan for d in datasets]
        wide[f"{m} − paper"] = [("" if np.isnan(x) else f"{x:+.2f}" + (" *" if abs(x) > 2 * stds.loc[d, m] else ""))
                                for d, x in zip(datasets, diff, strict=True)] + ["", ""]
    if {"WDA", "PCA"} <= set(methods):
        wide["WDA − PCA"] = [f"{paired[d][0]:+.2f}" + _stars(paired[d][1]) for d in datasets] + ["", ""]
    for m in PUBLISHED.columns:
        if m == "WDA" and "WDA" in methods:
            continue
        pub = [PUBLISHED.loc[d, m] if d in PUBLISHED.index else np.nan for d in [*datasets, "caltechpca"]]
        wide[f"paper {m}"] = [("" if np.isnan(v) else f"{v:.2f}") for v in pub] + [f"{PUBLISHED_RANKS[m]:.1f} (/8)"]
    notes = {d: UCI_DATASETS[d].note for d in datasets if UCI_DATASETS[d].note}
    notes["caltechpca"] = "no copy here: published numbers only"
    wide.insert(0, "data", [notes.get(d, "") for d in wide.index[:-1]] + [""])
    caption = (
        f"WDA paper, Table 1: mean kNN test error (%) ± std over {int(cfg['splits'])} random splits; p and k "
        f"chosen by {int(cfg['cv_folds'])}-fold cross-validation on the training part; "
        f"{int(cfg['noise_features'])} Gaussian noise features added except to isolet, usps, mnist and digits. "
        "Ranks are among the methods run here. The paper's columns are its published numbers. "
        "M − paper: our mean of method M minus the published one; * where it exceeds 2 of our standard "
        "deviations. "
        "WDA − PCA: the mean paired difference over the same splits; † where a two-sided Wilcoxon signed-rank "
        "test over the splits gives p < 0.05 (the paper's test)."
        + (f" WDA's settings cross-validated with p and k: {cfg['methods']['WDA'].get('candidates')}."
           if "WDA" in methods and cfg["methods"]["WDA"].get("candidates") else "")
    )
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(wide, "Data set"))
    write_text(outputs["tex"], render_latex(wide, "Data set", caption))
    write_json(outputs["provenance"], provenance)
    return long


def ablation(inputs: Sequence[str], table1_runs: Sequence[str], cfg: Mapping, outputs: Mapping,
             provenance: Mapping) -> pd.DataFrame:
    """What separates our Table 1 from the paper's: each variant's mean error, objective and iterations.

    ``table1_runs`` are Table 1's WDA runs; their first splits (the same ones)
    are shown beside as ``Table 1 (cross-validated)``.
    """
    ab = cfg["ablation"]
    runs = pd.concat([read_tsv(p) for p in inputs], ignore_index=True)
    if table1_runs:
        t1 = pd.concat([read_tsv(p) for p in table1_runs], ignore_index=True)
        t1 = t1[t1["split"] < int(ab["splits"])].assign(variant="Table 1 (cross-validated)")
        runs = pd.concat([runs, t1], ignore_index=True)
    # the variants that ran: one whose data sets are all outside `ablation.datasets` is left out (the rule's note)
    present = set(runs["variant"])
    ran = [v for v in ab["variants"] if v in present]
    variants = [*(["Table 1 (cross-validated)"] if table1_runs else []), *ran]
    long = runs.groupby(["dataset", "variant"]).agg(
        method=("method", "first"), error=("error", "mean"), std=("error", "std"), splits=("split", "count"),
        n_train=("n_train", "first"), p=("p", "median"), k=("k", "median"),
        objective=("objective", "mean"), n_iter=("n_iter", "mean"), seconds=("seconds", "sum"),
    ).reset_index()
    long["paper_WDA"] = long["dataset"].map(PUBLISHED["WDA"])
    write_csv(long, outputs["csv"])
    datasets = [d for d in ab["datasets"] if d in set(long["dataset"])]

    def grid(value):
        table = pd.DataFrame(index=datasets)
        for v in variants:
            part = long[long["variant"] == v].set_index("dataset")
            table[v] = [value(v, part.loc[d]) if d in part.index else "" for d in datasets]
        return table

    def error_cell(v, r):
        sized = v in ab["variants"] and ab["variants"][v].get("data")  # a training-size variant says its n
        return f"{r['error']:.2f} ± {r['std']:.2f}" + (f" (n={int(r['n_train'])})" if sized else "")

    errors = grid(error_cell)
    errors.insert(0, "paper WDA", [("" if d not in PUBLISHED.index else f"{PUBLISHED.loc[d, 'WDA']:.2f}")
                                   for d in datasets])
    wda = [v for v in variants if v == "Table 1 (cross-validated)" or ab["variants"][v].get("method", "WDA") == "WDA"]
    objectives = grid(lambda v, r: "" if np.isnan(r["objective"]) else f"{r['objective']:.3g} ({r['n_iter']:.0f} it.)")
    objectives = objectives[wda]
    specs = "\n".join(f"- **{name}**: {spec.get('method', 'WDA')} {spec.get('params') or ''}"
                       + (f", data {spec['data']}" if spec.get("data") else "") for name, spec in ab["variants"].items()
                      if name in ran)
    text = (
        f"WDA ablation: mean kNN test error (%) ± std over the first {int(ab['splits'])} splits of Table 1's "
        f"protocol (p and k cross-validated with {int(cfg['cv_folds'])} folds), n = training samples. "
        "One variant per row of the list below; see docs/wda.md.\n\n"
        f"{specs}\n\n" + render_markdown(errors, "Data set")
        + "\n\nWDA's objective (within / between) at the final fit, mean over splits, and the optimiser's "
        "iterations. It compares only within one cost scaling and one p (the final fit's p is the "
        "cross-validated one); below 1e-6 the within-class couplings are the identity (docs/wda.md):\n\n"
        + render_markdown(objectives, "Data set")
    )
    write_text(outputs["md"], text)
    write_json(outputs["provenance"], provenance)
    return long


def figure2(inputs: Sequence[str], cfg: Mapping, outputs: Mapping) -> pd.DataFrame:
    """Figure 2 of the WDA paper: mean test error against k, one panel per p."""
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_outputs  # sets the Agg backend

    runs = pd.concat([read_tsv(p) for p in inputs], ignore_index=True)
    summary = runs.groupby(["method", "p", "p_used", "k"])["error"].agg(["mean", "std", "count"]).reset_index()
    write_csv(summary, outputs["csv"])
    ps = list(cfg["figure2"]["p"])
    fig, axes = plt.subplots(1, len(ps), figsize=(5 * len(ps), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, p in zip(axes, ps, strict=True):
        for method, part in summary[summary["p"] == p].groupby("method", sort=False):
            used = int(part["p_used"].iloc[0])
            label = method if used == p else f"{method} (p = {used})"
            ax.plot(part["k"], part["mean"], marker="o", ms=3, label=label)
        ax.set_title(f"p = {p}")
        ax.set_xlabel("k of the kNN")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean test error (%)")
    axes[0].legend()
    ds = cfg["figure2"]["dataset"]
    fig.suptitle(f"{ds}: test error against k ({int(cfg['figure2']['splits'])} splits)")
    fig.tight_layout()
    save_outputs(fig, outputs, "WDA Figure 2")
    return summary


def office(inputs: Sequence[str], outputs: Mapping, feature_set: str) -> pd.DataFrame:
    """Mean 1-NN accuracy of each adapter per pair (Office-Caltech), WDA beside the others."""
    from otfs_workflow.tables import pair_label

    runs = pd.concat([read_tsv(p) for p in inputs], ignore_index=True)
    runs = runs[runs["order"] == "Descending"]
    acc = runs.groupby(["pair", "adapter", "n_features"])["accuracy"].mean().reset_index()
    write_csv(acc, outputs["csv"])
    d = int(acc["n_features"].max())
    full = acc[acc["n_features"] == d].pivot(index="pair", columns="adapter", values="accuracy")
    adapters = list(dict.fromkeys(runs["adapter"]))
    full = full[adapters]
    full.loc["Mean"] = full.mean(axis=0)
    full.index = [pair_label(p) if p != "Mean" else p for p in full.index]
    shown = full.map(lambda v: f"{v:.1f}")
    caption = (f"Office-Caltech, {feature_set} (all {d} features): mean 1-NN accuracy (%) over the iterations "
               "after each adaptation; WDA is fitted on the labelled source samples and projects both domains.")
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(shown, "Pair"))
    return acc
