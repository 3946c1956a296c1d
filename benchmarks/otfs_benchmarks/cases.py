"""The benchmark cases: each stage of the pipeline against its straightforward version.

Shapes are the paper's: Office-Caltech sources of 200 samples (20 per class,
10 classes), targets of 958 (amazon) or 1,123 (caltech10) samples, and
800 (SURF), 1,024 (GoogleNet) or 4,096 (CaffeNet) features. The data are
generated (:func:`office_like`), so the suite runs on any machine; the
case :func:`ranking_orders` replays the rankings of the real SURF and
GoogleNet runs when their feature caches are present.
"""

from __future__ import annotations

import warnings
from functools import partial
from pathlib import Path

import numpy as np

from otfs.adapters import CorrelationAlignment, LinearTransferComponentAnalysis, PCASubspaceAlignment, get_adapter
from otfs.classification import accuracy_curve
from otfs.rankers._base import descending_order, rank_features
from otfs.rankers._per_feature import mmd2_unbiased
from otfs_benchmarks import reference
from otfs_benchmarks.harness import Case, aligned_relative_difference, relative_difference

__all__ = ["SIZES", "make_cases", "office_like", "ranking_orders", "word_counts"]

#: (n_source, n_target, d) per case family, full and quick.
SIZES = {
    "full": {"surf": (200, 958, 800), "googlenet": (200, 958, 1024), "caffenet": (200, 958, 4096),
             "tca": (200, 1123, 1024), "tca_families": (200, 1000, 50), "ot": (200, 958, 512),
             "words": (200, 1000, 2500),
             "counts": (200, 200, 1000), "scores": (200, 1000, 13), "wda": (898, 10, 30),
             "recommend": (2000, 2000, 400)},
    "quick": {"surf": (40, 90, 64), "googlenet": (40, 90, 96), "caffenet": (40, 90, 256),
              "tca": (40, 110, 96), "tca_families": (40, 400, 12), "ot": (40, 90, 48),
              "words": (40, 400, 600),
              "counts": (40, 40, 30), "scores": (40, 90, 24), "wda": (120, 5, 4),
              "recommend": (60, 60, 16)},
}


def office_like(n_source, n_target, d, n_classes=10, seed=0):
    """Class-structured source and target sets with a shift on a third of the features.

    Each class has a random mean; the target adds an offset and a rescaling
    to a random third of the features. Both sets are z-scored per feature
    with the statistics of their own domain, as the feature caches are.
    """
    rng = np.random.RandomState(seed)
    means = rng.randn(n_classes, d)
    ys = np.arange(n_source) % n_classes + 1
    yt = np.arange(n_target) % n_classes + 1
    Xs = means[ys - 1] + 1.5 * rng.randn(n_source, d)
    shifted = rng.rand(d) < 1 / 3
    Xt = means[yt - 1] + 1.5 * rng.randn(n_target, d)
    Xt[:, shifted] = 2.0 * Xt[:, shifted] + 3.0
    Xs = (Xs - Xs.mean(0)) / Xs.std(0)
    Xt = (Xt - Xt.mean(0)) / Xt.std(0)
    return Xs, ys, Xt, yt


def word_counts(n_source, n_target, d, density=0.03, seed=0):
    """Two domains of l2-normalised word counts, about ``density`` of them nonzero, with shifted word rates.

    Word rates are Gamma-distributed (a few frequent words, many rare ones); the target multiplies each
    rate by a factor in [0.5, 2]; a document without any word gets the first one. Labels are random (the
    cases time the adapters, not their accuracy).
    """
    rng = np.random.RandomState(seed)
    rates = rng.gamma(0.3, density / 0.3, d)
    out = []
    for n, shift in ((n_source, 1.0), (n_target, rng.uniform(0.5, 2.0, d))):
        X = rng.poisson(np.minimum(rates * shift, 5.0), (n, d)).astype(float)
        X[X.sum(axis=1) == 0, 0] = 1.0
        out.append(X / np.linalg.norm(X, axis=1, keepdims=True))
    return out[0], rng.randint(0, 2, n_source), out[1]


def _words_setup(n_source, n_target, d, seed=0):
    Xs, ys, Xt = word_counts(n_source, n_target, d, density=0.02, seed=seed)
    return {"Xs": Xs, "ys": ys, "Xt": Xt}


def _setup(n_source, n_target, d, seed=0):
    Xs, ys, Xt, yt = office_like(n_source, n_target, d, seed=seed)
    order = np.random.RandomState(seed + 1).permutation(d)
    return {"Xs": Xs, "ys": ys, "Xt": Xt, "yt": yt, "order": order}


def _compare_scores(a, b):
    same = np.array_equal(descending_order(a), descending_order(b))
    diff = relative_difference(a, b)
    if same:
        return diff, "identical order"
    moved = int(np.sum(descending_order(a) != descending_order(b)))
    return float("inf"), f"orders differ at {moved} ranks (scores differ by {diff:.2g})"


def _compare_accuracies(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))), ""


def _compare_aligned(a, b):
    return aligned_relative_difference(a, b), ""


def _compare_absolute(a, b):
    return float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)))), ""


def _counts_setup(n_source, n_target, d, seed=0):
    """Word-count-like domains: Poisson counts of rates spread over three orders of magnitude."""
    rng = np.random.RandomState(seed)
    rates = 10 ** rng.uniform(-2.5, 0.5, size=d)
    return {"Xs": rng.poisson(rates, size=(n_source, d)).astype(float),
            "Xt": rng.poisson(rates * rng.uniform(0.5, 2.0, size=d), size=(n_target, d)).astype(float)}


def _scores(D, engine):
    from otfs.classification import make_classifier
    from otfs.k_selection._base import get_rule, score_adapted

    rules = {name: get_rule(name) for name in ("IW", "DEV", "circular", "entropy", "SND")}
    out = score_adapted(D["Xs"], D["ys"], D["Xt"], rules, make_classifier({"name": "knn", "n_neighbors": 5}),
                        2, 0.5, 0, engine=engine)
    return [out[name]["score"] for name in rules]


def _compare(a, b):
    return relative_difference(a, b), ""


def _skada(factory):
    """Run a skada adapter on the stacked domains; return (source, target) outputs."""
    try:
        import skada  # noqa: F401
    except ImportError:  # pragma: no cover - skada is optional
        return None

    def run(data):
        Xs, Xt, ys = data["Xs"], data["Xt"], data["ys"]
        X = np.vstack([Xs, Xt])
        sample_domain = np.r_[np.ones(len(Xs), int), -np.ones(len(Xt), int)]
        y = np.r_[ys, -np.ones(len(Xt), int)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Z = factory(data).fit_transform(X, y, sample_domain=sample_domain)
        return Z[: len(Xs)], Z[len(Xs):]

    return run


def _skada_factory(name):
    import skada

    def components(D):
        return min(80, D["Xs"].shape[0], D["Xt"].shape[0], D["Xs"].shape[1])

    return {
        "CORAL": lambda D: skada.CORALAdapter(reg=1.0),
        "SA": lambda D: skada.SubspaceAlignmentAdapter(n_components=components(D)),
        "TCA": lambda D: skada.TransferComponentAnalysisAdapter(
            kernel="linear", n_components=components(D), mu=1.0),
        "OT": lambda D: skada.OTMappingAdapter(),
        "OT2": lambda D: skada.EntropicOTMappingAdapter(reg_e=2.0, norm="median"),
        "OT3": lambda D: skada.ClassRegularizerOTMappingAdapter(reg_e=2.0, reg_cl=1.0),
    }[name]


def _with_skada(name):
    try:
        return _skada(_skada_factory(name))
    except ImportError:  # pragma: no cover
        return None


def _wda_setup(n):
    """scikit-learn's digits, standardised: the first ``n`` samples (Table 1's digits: 898 for training)."""
    import autograd  # noqa: F401  (both implementations' imports, before the traced calls)
    import pymanopt  # noqa: F401
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X[:n]
    std = X.std(axis=0)
    return {"X": (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0), "y": y[:n]}


def _wda(D, p, max_iter):
    from otfs.reducers._wda import WassersteinDiscriminantAnalysis

    return WassersteinDiscriminantAnalysis(n_components=p, max_iter=max_iter, random_state=0).fit(
        D["X"], D["y"]).components_.T


def _ranking_case(label, size, goal):
    return Case(
        name=f"ranking {label}",
        shape="n_s={}, n_t={}, d={}".format(*size),
        setup=partial(_setup, *size),
        implementations={
            "otfs": lambda D: rank_features(D["Xs"], D["Xt"]).scores,
            "reference": lambda D: reference.rank(D["Xs"], D["Xt"]),
        },
        compare=_compare_scores,
        difference="scores, max relative (inf: order differs)",
        tolerance=1e-6,
        goal=goal,
        goal_text=f">= {goal:g}x, identical order",
        notes=["reference: ot.da.EMDTransport + SinkhornTransport(reg_e=1, norm='log'), POT defaults"],
    )


def _tca_case(name, shape, note, setup=_setup):
    """TCA (the library's default solver choice) against the released code's dense version, at ``shape``."""
    ns, nt, d = shape
    return Case(
        name=name,
        shape=f"n_s+n_t={ns + nt}, d={d}",
        setup=partial(setup, ns, nt, d),
        implementations={
            "otfs": lambda D: LinearTransferComponentAnalysis().adapt(D["Xs"], D["ys"], D["Xt"]),
            "reference": lambda D: reference.tca(D["Xs"], D["Xt"]),
            "skada": _with_skada("TCA"),
        },
        compare=_compare_aligned, difference="max relative, up to coordinate signs", tolerance=1e-6,
        goal=10.0, goal_text=">= 10x",
        notes=[note],
        repeats=3,
    )


def make_cases(size: str = "full") -> list[Case]:
    """All timing cases, at the paper's sizes (``"full"``) or small ones (``"quick"``)."""
    S = SIZES[size]
    cases = [
        _ranking_case("SURF", S["surf"], 5.0),
        _ranking_case("GoogleNet", S["googlenet"], 5.0),
        _ranking_case("CaffeNet", S["caffenet"], 5.0),
    ]
    ns, nt, d = S["caffenet"]
    cases.append(Case(
        name="CORAL",
        shape=f"n_s={ns}, n_t={nt}, d={d}",
        setup=partial(_setup, ns, nt, d),
        implementations={
            "otfs": lambda D: CorrelationAlignment(reg=1.0).adapt(D["Xs"], D["ys"], D["Xt"]),
            "reference": lambda D: reference.coral(D["Xs"], D["Xt"], reg=1.0),
            "skada": _with_skada("CORAL"),
        },
        compare=_compare, difference="max relative", tolerance=1e-6,
        goal=100.0, goal_text=">= 100x, equal to 1e-6",
        notes=["reference: scipy.linalg.sqrtm and inv; skada centres and shrinks (another variant)"],
        repeats=3,
    ))
    cases.append(_tca_case("TCA", S["tca"], "reference: dense L, H, pinv and eigh of the released code"))
    cases.append(_tca_case("TCA, families' size", S["tca_families"],
                           "a data family's pair (1,000 target samples, d/8 features): ARPACK's Lanczos "
                           "(eigen_solver='auto'); reference: dense L, H, pinv and eigh of the released code"))
    cases.append(_tca_case("TCA, word counts", S["words"],
                           "l2-normalised word counts, 2 % nonzero (Amazon 5,000's d/2): ARPACK through the "
                           "features as a sparse matrix (eigen_solver='auto'); reference: dense L, H, pinv and eigh "
                           "of the released code", setup=_words_setup))
    ns, nt, d = S["words"]
    cases.append(Case(
        name="SA, word counts",
        shape=f"n_s={ns}, n_t={nt}, d={d}",
        setup=partial(_words_setup, ns, nt, d),
        implementations={
            "otfs": lambda D: PCASubspaceAlignment().adapt(D["Xs"], D["ys"], D["Xt"]),
            "reference": lambda D: reference.subspace_alignment(D["Xs"], D["Xt"]),
        },
        compare=_compare_aligned, difference="max relative, up to coordinate signs", tolerance=1e-6,
        goal=1.5, goal_text=">= 1.5x",
        notes=["l2-normalised word counts, 2 % nonzero, more words than documents: Lanczos on the never-formed "
               "Gram matrix; reference: scikit-learn PCA(svd_solver='full')"],
        repeats=3,
    ))
    ns, nt, d = S["caffenet"]
    cases.append(Case(
        name="SA",
        shape=f"n_s={ns}, n_t={nt}, d={d}",
        setup=partial(_setup, ns, nt, d),
        implementations={
            "otfs": lambda D: PCASubspaceAlignment().adapt(D["Xs"], D["ys"], D["Xt"]),
            "reference": lambda D: reference.subspace_alignment(D["Xs"], D["Xt"]),
            "skada": _with_skada("SA"),
        },
        compare=_compare_aligned, difference="max relative, up to coordinate signs", tolerance=1e-6,
        goal=0.9, goal_text=">= 0.9x (no slower, within timing noise)",
        notes=["reference: scikit-learn PCA(svd_solver='full')"],
        repeats=3,
    ))
    ns, nt, d = S["ot"]
    for name in ("OT", "OT2", "OT3"):
        cases.append(Case(
            name=name,
            shape=f"n_s={ns}, n_t={nt}, d={d}",
            setup=partial(_setup, ns, nt, d),
            implementations={
                "otfs": partial(lambda D, n: get_adapter(n).adapt(D["Xs"], D["ys"], D["Xt"]), n=name),
                "reference": partial(lambda D, n: reference.ot_adapter(n, D["Xs"], D["ys"], D["Xt"]), n=name),
                "skada": _with_skada(name),
            },
            compare=_compare, difference="max relative", tolerance=1e-9,
            goal=0.9, goal_text=">= 0.9x (no slower than POT, within timing noise)",
            notes=["reference: POT's ot.da classes"],
            repeats=3,
        ))
    ns, nt, d = S["counts"]
    cases.append(Case(
        name="MMD, word counts",
        shape=f"n_s={ns}, n_t={nt}, d={d}, Poisson counts",
        setup=partial(_counts_setup, ns, nt, d),
        implementations={"otfs": lambda D: mmd2_unbiased(D["Xs"], D["Xt"])[0],
                         "reference": lambda D: reference.mmd2_by_pairs(D["Xs"], D["Xt"])},
        compare=_compare_absolute, difference="max absolute", tolerance=1e-12,
        goal=5.0, goal_text=">= 5x, equal to 1e-12",
        notes=["the MMD ranker's 200 samples per domain; reference: every pair of samples, three kernel matrices"],
        repeats=3,
    ))
    ns, nt, d = S["scores"]
    cases.append(Case(
        name="label-free scores",
        shape=f"n_s={ns}, n_t={nt}, d={d}, 5 scorers, 2 splits",
        setup=partial(_setup, ns, nt, d),
        implementations={"otfs": partial(_scores, engine="direct"), "reference": partial(_scores, engine="skada")},
        compare=_compare_absolute, difference="max absolute", tolerance=0.0,
        goal=1.2, goal_text=">= 1.2x, the same numbers",
        notes=["IW, DEV, circular, entropy, SND with a 5-NN, a heart-disease-sized pair: what the direct engine "
               "saves is skada's routing and checks, a share that falls as the arithmetic grows with d",
               "reference: skada's scorers on make_da_pipeline (score_adapted(engine='skada'))"],
        repeats=3,
    ))
    n, p, max_iter = S["wda"]
    cases.append(Case(
        name="WDA",
        shape=f"digits, n={n}, 10 classes, d=64, p={p}, {max_iter} iterations",
        setup=partial(_wda_setup, n),
        implementations={"otfs": partial(_wda, p=p, max_iter=max_iter),
                         "reference": lambda D: reference.wda_autograd(D["X"], D["y"], p, max_iter=max_iter,
                                                                       random_state=0)[0]},
        compare=_compare_absolute, difference="max absolute", tolerance=0.0,
        goal=1.3, goal_text=">= 1.3x, the same projection",
        notes=["the batched objective's gradient written out (reverse mode, autograd's operations in its order) "
               "against autograd's, both under pymanopt's steepest descent: equal to the bit",
               "1 BLAS thread, as the pipeline's WDA jobs"],
        repeats=3, threads=1,
    ))
    ns, nt, d = S["recommend"]
    from otfs.k_selection._label_free import DEFAULT_RANKERS

    rankers = DEFAULT_RANKERS if size == "full" else ("ks", "source-anova")
    cases.append(Case(
        name="Recommendation",
        shape=f"{len(rankers)} rankers x 6 numbers of features, NA, {len(_recommend_rules())} scorers, n_s={ns}, "
              f"n_t={nt}, d={d}",
        setup=partial(_setup, ns, nt, d),
        implementations={"otfs": partial(_recommend, rankers=rankers),
                         "reference": partial(_recommend_reference, rankers=rankers)},
        compare=_compare, difference="max relative (every candidate's scores)", tolerance=1e-12,
        goal=1.0, goal_text="<= 60 s on 2 cores, no slower than the reference, every score equal",
        notes=["otfs: LabelFreeFeatureSelector, one adaptation per (ranker, k), the point of all features once, "
               "the scorers' numbers computed directly on shared splits",
               "reference: each candidate adapted and scored apart by skada's scorers in its pipelines"],
        repeats=1, max_seconds=60.0 if size == "full" else None,
    ))
    for label, key in (("SURF", "surf"), ("CaffeNet", "caffenet")):
        ns, nt, d = S[key]
        counts = [d // 32, *range(d // 16, d + 1, d // 16)]

        def fast(D, counts=counts):
            orders = dict(enumerate(_orders(D)))
            return [r["accuracy"] for r in accuracy_curve(D["Xs"], D["ys"], D["Xt"], D["yt"], orders, counts)]

        def slow(D, counts=counts):
            return [a for o in _orders(D) for a in reference.na_curve(
                D["Xs"], D["ys"], D["Xt"], D["yt"], o, counts)]

        cases.append(Case(
            name=f"NA curve {label}",
            shape=f"3 orders x {len(counts)} counts, n_s={ns}, n_t={nt}, d={d}",
            setup=partial(_setup, ns, nt, d),
            implementations={"otfs": fast, "reference": slow},
            compare=_compare_accuracies, difference="accuracy points", tolerance=0.0,
            goal=10.0, goal_text=">= 10x, same accuracies",
            notes=["reference: a fresh KNeighborsClassifier(1) per point",
                   "1 BLAS thread, as the pipeline's classification jobs"],
            repeats=9, threads=1,
        ))
    return cases


def _recommend_rules() -> tuple[str, ...]:
    from otfs.k_selection._label_free import SCORER_RULES

    return SCORER_RULES


def _recommend(D, rankers):
    """Every candidate's scores from the library's selector (rank average of its default scorers)."""
    from otfs.k_selection import LabelFreeFeatureSelector

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = LabelFreeFeatureSelector(rankers=list(rankers), policy="rank-average", random_state=0).fit(
            D["Xs"], D["ys"], X_target=D["Xt"])
    return sel.candidates_[[f"{r}:score" for r in _recommend_rules()]].to_numpy()


def _recommend_reference(D, rankers):
    """The same candidates the straightforward way: each (ranker, k) ranked, adapted and scored apart (the point
    of all features too), by skada's scorers (``score_adapted(engine="skada")``)."""
    from otfs._checks import derive_seed
    from otfs.classification import make_classifier
    from otfs.k_selection._base import get_rule, score_adapted
    from otfs.k_selection._label_free import DEFAULT_GRID, canonical_row_order, resolve_grid
    from otfs.rankers import FEATURE_RANKERS

    Xs, ys, Xt = D["Xs"], D["ys"], D["Xt"]
    o = canonical_row_order(Xs, ys)  # the selector's order of the rows
    Xs, ys, Xt = Xs[o], ys[o], Xt[canonical_row_order(Xt)]
    d = Xs.shape[1]
    rules = {r: get_rule(r) for r in _recommend_rules()}
    rows, proba, every = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in rankers:
            ranker = FEATURE_RANKERS[name]()
            if "random_state" in ranker.get_params():
                ranker.set_params(random_state=derive_seed(0, name, "ranker"))
            order = ranker.fit(Xs, ys, X_target=Xt).order_
            for k in resolve_grid(list(DEFAULT_GRID), d):
                cols = np.arange(d) if k == d else order[:k]
                Zs, Zt = get_adapter("NA").adapt(Xs[:, cols], ys, Xt[:, cols])
                kept = []
                out = score_adapted(Zs, ys, Zt, rules, make_classifier({"name": "knn", "n_neighbors": 5}), 2, 0.5, 0,
                                    engine="skada", target_proba=kept)
                rows.append({r: out[r]["score"] for r in out})
                proba.append(kept[0])
                every.append(k == d)
    # EnsV by its formula: the agreement of each candidate's argmax with the argmax of the distinct candidates'
    # mean probabilities (the point of all features counted once)
    every = np.asarray(every)
    members = ~every | (np.cumsum(every) == 1)
    pseudo = np.argmax(np.mean([p for p, m in zip(proba, members, strict=True) if m], axis=0), axis=1)
    for row, p in zip(rows, proba, strict=True):
        row["EnsV"] = float(np.mean(np.argmax(p, axis=1) == pseudo))
    return np.asarray([[row[r] for r in _recommend_rules()] for row in rows])


def _orders(D):
    order = D["order"]
    return [order, order[::-1], np.random.RandomState(7).permutation(order.size)]


def ranking_orders(cache_root="data/cache", feature_sets=("surf", "GoogleNet1024"), iterations=19,
                   per_class=20, per_class_overrides=None, log=print) -> list[dict]:
    """Compare the orders of the library's ranking and the reference on real runs.

    For every pair of domains present under ``cache_root`` and every
    iteration, the source subset is drawn as in the pipeline (seeded by
    feature set, pair and iteration; ``per_class`` samples per class, or
    ``per_class_overrides[source]``) and both implementations rank the
    features. Returns one row per feature set.
    """
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.protocol import derive_seed, draw_source_subset, make_pairs, pair_name

    overrides = {"dslr": 8} if per_class_overrides is None else dict(per_class_overrides)
    rows = []
    for fs in feature_sets:
        folder = Path(cache_root) / fs
        domains = sorted(p.stem for p in folder.glob("*.h5"))
        if len(domains) < 2:
            rows.append({"feature_set": fs, "runs": 0, "identical": 0,
                         "note": f"no feature cache under {folder}"})
            continue
        cache = read_domains({d: str(folder / f"{d}.h5") for d in domains})
        runs = identical = 0
        worst = 0.0
        for pair in make_pairs(domains):
            s, t = pair.split("-")
            src, tgt = cache.domain(s), cache.domain(t)
            for it in range(iterations):
                seed = derive_seed(fs, pair_name(s, t), it, "source_subset")
                classes = range(1, len(cache.class_names) + 1)
                sub = draw_source_subset(src.y, overrides.get(s, per_class), random_state=seed, classes=classes)
                fast = rank_features(src.X[sub], tgt.X).scores
                ref = reference.rank(src.X[sub], tgt.X)
                runs += 1
                identical += int(np.array_equal(descending_order(fast), descending_order(ref)))
                worst = max(worst, relative_difference(fast, ref))
        log(f"ranking orders {fs}: {identical}/{runs} identical, scores differ by at most {worst:.2g}")
        rows.append({"feature_set": fs, "runs": runs, "identical": identical,
                     "max_score_difference": worst, "note": ""})
    return rows
