"""What the workflow plans from its configuration: feature sets, pairs, scopes, parameters and paths.

:class:`Plan` holds the validated configuration and answers every question the rule files ask
while Snakemake parses them: a feature set's settings, domains, pairs and number of features, a
ranker's or adapter's parameters, which domains have data here, the scope and the folders of an
aggregate, and the input functions of the rules (functions of a job's wildcards, read by
attribute, so a :class:`types.SimpleNamespace` stands in for Snakemake's in the tests). It reads
files (a user's table header, the manifests, whether a domain's data are present) but writes
none, and needs no Snakemake object; ``workflow/rules/common.smk`` builds one and binds its
methods to the names the rules use.

What the library answers (registered names, the module that registers a method, a ranker's
traits, an extractor's width) goes through ``answer(question, args, compute)``, which the
workflow points at its plan cache (:class:`otfs_workflow.plan_cache.PlanCache`), so that a parse
after the first imports none of the methods.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakemake.exceptions import WorkflowError

from otfs_workflow.config import pairs_for
from otfs_workflow.protocol import parse_pair, source_per_class, usable_counts

__all__ = ["CONTENT_ADDRESSED_RULES", "OT_RANKER_SETTINGS", "SOURCE_KEYS", "CodeInputs", "PairRule", "Plan",
           "ScopedCode", "ranker_shares",
           "agg_files", "images_dir", "pairs_domains", "rule_convention_problems", "rule_name_part"]

#: The OT rankers (ot, ot-1nn, ot-random) take Algorithm 1's settings from config `sample_selection` and
#: Algorithm 2's from `ranking`; every other ranker its own from `rankers.<name>` (its defaults where absent).
OT_RANKER_SETTINGS = {
    "sample_selection": ("tie_break", "emd_max_iter"),
    "ranking": ("reg", "norm", "method", "max_iter", "tol"),
}
#: Rules that fetch data have no code input: their outputs are checked against the manifests' hashes, whatever
#: code fetched them (editing the acquisition code does not refetch gigabytes).
CONTENT_ADDRESSED_RULES = frozenset({"acquire", "acquire_images", "acquire_uci"})
#: The settings of a dataset that say where its files come from.
SOURCE_KEYS = ("local_dir", "mirror_dirs", "mirror_env", "download", "download_timeout_s")


def _compute(question: str, args: Any, compute: Callable[[], Any]) -> Any:
    return compute()


def images_dir(dataset: str, domain: str) -> str:
    """The acquired images of one domain."""
    return f"data/raw/{dataset}/images/{domain}"


def _paths_by_domain(paths: Iterable[str]) -> dict[str, list[str]]:
    """Image paths ``images/<domain>/<class>/<file>`` by domain (other paths left out)."""
    out: dict[str, list[str]] = {}
    for path in paths:
        parts = path.split("/")
        if len(parts) == 4 and parts[0] == "images":
            out.setdefault(parts[1], []).append(path)
    return out


def rule_name_part(name: str) -> str:
    """``name`` (a feature set's) as part of a rule's name: a character other than a letter, digit or ``_``
    becomes ``_``."""
    return re.sub(r"\W", "_", name)


def repo_file(repo, *parts) -> str:
    """A file of the repository ``repo``, as a path relative to the working directory where it lies inside it
    (the usual case: Snakemake runs in the repository), else absolute. A project folder copied or moved
    elsewhere then keeps the same input paths, and Snakemake reruns nothing."""
    from otfs_workflow.io import cwd_relative

    return cwd_relative(Path(repo).joinpath(*parts))


def pairs_domains(pairs) -> list[str]:
    """Domains that appear in ``pairs``, in first-seen order."""
    return list(dict.fromkeys(d for p in pairs for d in parse_pair(p)))


def agg_files(prefixes, kinds=("per_pair.tsv", "summary.tsv", "provenance.json")) -> list[str]:
    """The files ``kinds`` of each aggregate folder of ``prefixes``."""
    prefixes = [prefixes] if isinstance(prefixes, str) else prefixes
    return [f"{p}/{k}" for p in prefixes for k in kinds]


def reporter(folder: str, category: str, caption_prefix: str = "", subcategory: str | None = None) -> Callable:
    """``output(name, ext, caption=name)``: the output ``<folder>/<name>.<ext>`` flagged for Snakemake's report,
    its caption ``workflow/report/<caption_prefix><caption>.rst``, under ``category`` (and ``subcategory``)."""
    from snakemake.io import report

    def output(name: str, ext: str, caption: str | None = None):
        return report(f"{folder}/{name}.{ext}", caption=f"../report/{caption_prefix}{caption or name}.rst",
                      category=category, subcategory=subcategory)

    return output


def ranker_shares(rankers, per_job: int) -> list[tuple[str, ...]]:
    """``rankers`` (or pairs), in their order, in the fewest contiguous shares of at most ``per_job`` each, as even
    as they divide (the first ones one longer where they do not, as :func:`numpy.array_split` splits)."""
    rankers = tuple(rankers)
    if isinstance(per_job, bool) or not isinstance(per_job, int) or per_job < 1:
        raise ValueError(f"per_job must be a positive integer, got {per_job!r}")
    n_jobs = max(1, -(-len(rankers) // per_job))
    size, extra = divmod(len(rankers), n_jobs)
    bounds = [0]
    for i in range(n_jobs):
        bounds.append(bounds[-1] + size + (i < extra))
    return [rankers[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@dataclass
class PairRule:
    """One rule of the data families' pair jobs: the adapters it runs, its share of the rankers, the feature sets
    it applies to and what its log's and benchmark's names carry (``""``, or ``"_2of3"`` for the second of a
    pair's three jobs)."""

    adapters: tuple[str, ...]
    rankers: tuple[str, ...]
    part: str = ""
    feature_sets: list[str] = field(default_factory=list)


#: The data families' results (workflow/rules/shift.smk).
SHIFT_OUT = "results/shift"
#: The label-free recommendation's results (workflow/rules/recommend.smk).
RECOMMEND_OUT = "results/recommend"
#: The paper's targets by kind, and the extensions of their files (workflow/rules/targets.smk): one file per
#: feature set, one for several feature sets, the toy figures.
TABLE_EXTS, CURVE_EXTS, TOY_EXTS = ["csv", "tex", "md", "comparison.csv"], ["pdf", "png", "csv"], ["pdf", "png"]
PER_FS = {"table1": TABLE_EXTS, "figure1": CURVE_EXTS, "figure2": [*CURVE_EXTS, "comparison.csv"],
          "table3": TABLE_EXTS, "table5": TABLE_EXTS}
MULTI_FS = {"table2": TABLE_EXTS, "table6": TABLE_EXTS, "figure7": CURVE_EXTS}
TOYS = {"figure5": TOY_EXTS, "figure6": TOY_EXTS}
#: What the captions say of the paper's feature sets.
PAPER_FEATURE_SETS = {
    "surf": "the paper's SURF bag of words (released features)",
    "CaffeNet4096": "the paper's CaffeNet fc7 features (released features; the paper's Tables 1, 3, 5 and Figure 1)",
    "GoogleNet1024": "the paper's GoogleNet features (released features; the paper's Figure 2 and Table 6)",
    "EfficientNetLite0": "not the paper's: extracted here from the 2,533 raw images with an ImageNet-pretrained "
                         "EfficientNet-Lite0 (penultimate layer)",
}
#: The clinical study's targets (workflow/rules/clinical.smk): Table 4, Figures 3 and 4.
CLINICAL_TARGETS = {
    "table4": [f"results/clinical/table4/table4.{e}" for e in ("csv", "md", "tex")],
    "figure3": [f"results/clinical/figure3/figure3.{e}" for e in ("pdf", "png", "csv")],
    "figure4": [f"results/clinical/figure4/figure4.{e}" for e in ("pdf", "png", "csv")],
}
#: The keys of the related methods' sections their jobs depend on.
RELATED_KEYS = {
    "boosting": ("methods", "repetitions", "counts", "max_source", "model", "ot_features", "ot_adapters"),
    "invariance": ("iterations", "n_features", "target_per_class", "reg", "output_kernel", "pop_size", "n_gen"),
    "semfs": ("methods", "n_unseen", "counts", "restarts", "alpha", "gamma", "max_iter", "s_steps", "lasso_alpha",
              "spectral", "ot_ranking"),
}
#: The keys of config `wda` every WDA evaluation job depends on.
WDA_EVAL_KEYS = ("methods", "splits", "cv_folds", "p_grid", "k_grid", "noise_features", "train_fraction",
                 "max_train", "max_test", "overrides")


class Plan:
    """The plan of one parse of the workflow.

    Parameters
    ----------
    config : mapping
        The configuration, validated and with its defaults filled (``otfs_workflow.config``).
    answer : callable, optional
        ``answer(question, args, compute)``: ``compute()``, or its answer kept from an earlier parse
        (the workflow's plan cache). By default, computed each time.
    """

    def __init__(self, config: Mapping, answer: Callable[[str, Any, Callable[[], Any]], Any] = _compute):
        self.config = config
        self.answer = answer
        self.iterations = list(range(config["protocol"]["iterations"]))
        self.main_ranker = config["ranking"]["ranker"]
        self._memo: dict = {}

    def _once(self, key, compute):
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    # --- the library's registries ------------------------------------------------------------------------
    def registry_origin(self, group: str, name: str) -> str:
        """The module that registers ``name`` in the registry ``group`` (Registry.origin)."""
        from otfs.registry import get_registry

        return self.answer("registry_origin", [group, name], lambda: get_registry(group).origin(name))

    def registry_origins(self, group: str) -> list[str]:
        """Every module that registers a method of the registry ``group`` (Registry.origins)."""
        from otfs.registry import get_registry

        return self.answer("registry_origins", group, lambda: get_registry(group).origins())

    def registry_names(self, group: str) -> list[str]:
        """Every name registered in ``group``, plug-ins included, sorted."""
        from otfs.registry import get_registry

        return self.answer("registry_names", group, lambda: sorted(get_registry(group)))

    # --- feature sets --------------------------------------------------------------------------------------
    def fs_config(self, feature_set: str) -> dict:
        """The settings of ``feature_set``; an unknown one is an error naming the configured ones."""
        try:
            return self.config["feature_sets"][feature_set]
        except KeyError:
            raise ValueError(
                f"unknown feature set {feature_set!r}; configured: {sorted(self.config['feature_sets'])}"
            ) from None

    def fs_dataset(self, feature_set: str) -> dict:
        return self.config["datasets"][self.fs_config(feature_set)["dataset"]]

    def fs_domains(self, feature_set: str) -> list[str]:
        return self.fs_config(feature_set).get("domains") or self.fs_dataset(feature_set)["domains"]

    def is_extracted(self, feature_set: str) -> bool:
        """Whether a feature set is extracted from images (else read from released files)."""
        return "extractor" in self.fs_config(feature_set)

    def raw_path(self, feature_set: str, relpath: str) -> str:
        """Where the pipeline acquires a file of a feature set's dataset (a manifest path)."""
        return f"data/raw/{self.fs_config(feature_set)['dataset']}/{relpath}"

    def features_file(self, feature_set: str, domain: str) -> str:
        """The extraction output behind one domain of an extracted feature set."""
        fs = self.fs_config(feature_set)
        return f"data/features/{fs['dataset']}/{fs['extractor']}/{domain}.h5"

    def fs_pairs(self, feature_set: str) -> list[str]:
        """The configured pairs of ``feature_set``'s dataset whose domains it has."""
        domains = set(self.fs_domains(feature_set))
        pairs = pairs_for(self.config, self.fs_config(feature_set)["dataset"])
        return [p for p in pairs if set(parse_pair(p)) <= domains]

    def fs_reader(self, feature_set: str):
        """The dataset reader of a feature set read from files (None for an extracted one)."""
        from otfs.datasets._readers import get_reader, reader_spec

        def reader():
            spec = reader_spec(self.fs_config(feature_set))
            return None if spec is None else get_reader(*spec)

        return self._once(("reader", feature_set), reader)

    def dataset_manifest(self, dataset: str):
        """A dataset's parsed manifest, or None where it has none."""
        from otfs_workflow.data.manifest import read_manifest

        path = self.config["datasets"][dataset].get("manifest")
        return self._once(("manifest", dataset), lambda: read_manifest(path) if path else None)

    def reader_files(self, feature_set: str, domain: str) -> list[str]:
        """The manifest paths a feature set's reader reads ``domain`` from ([] for an extracted set)."""
        reader = self.fs_reader(feature_set)
        return [] if reader is None else reader.files(domain)

    def reader_local_files(self, feature_set: str, domain: str) -> list[str]:
        """The files a feature set's reader reads ``domain`` from in place (a user's own tables)."""
        reader = self.fs_reader(feature_set)
        return [] if reader is None else [str(p) for p in reader.local_files(domain)]

    def fs_n_features(self, feature_set: str) -> int:
        """Number of features of a feature set, from its reader or extractor (no data needed); once per
        plan (a user's table's header is read once, however many rules and captions ask)."""
        return self._once(("n_features", feature_set), lambda: self._n_features(feature_set))

    def _n_features(self, feature_set):
        fs = self.fs_config(feature_set)
        if self.is_extracted(feature_set):
            name = fs["extractor"]

            def width():
                from otfs.extractors._base import get_extractor

                return get_extractor(name).n_features

            return self.answer("extractor_n_features", name, width)
        try:
            return self.fs_reader(feature_set).count_features(
                list(self.fs_domains(feature_set)), self.dataset_manifest(fs["dataset"]))
        except (KeyError, ValueError) as exc:
            raise WorkflowError(f"feature set {feature_set!r}: {exc}") from exc

    def counts(self, feature_set: str, specs) -> list[int]:
        """Resolve "d/8"-style specs for a feature set, those that give 0 of its d left out."""
        return usable_counts(specs, self.fs_n_features(feature_set))

    def cache_config(self, feature_set: str) -> dict:
        """The settings of a feature set that its caches depend on: not the protocol keys of later stages
        (`source_per_class`, `inapplicable_adapters`), so that changing those rebuilds no cache."""
        return {k: v for k, v in self.fs_config(feature_set).items()
                if k not in ("source_per_class", "inapplicable_adapters")}

    def applicable_adapters(self, feature_set: str, adapters) -> list[str]:
        """``adapters`` without those the feature set declares inapplicable (`inapplicable_adapters`)."""
        skip = self.fs_config(feature_set).get("inapplicable_adapters") or {}
        return [a for a in adapters if a not in skip]

    def common_adapters(self, feature_sets, adapters) -> list[str]:
        """``adapters`` that apply to every one of ``feature_sets`` (:meth:`applicable_adapters`)."""
        return [a for a in adapters if all(self.applicable_adapters(fs, [a]) for fs in feature_sets)]

    def family_pair_rules(self, feature_sets, rankers, adapters) -> dict[str, PairRule]:
        """The data families' pair rules by name. ``run_family_pair`` runs, for each ranker, the ``adapters``
        that apply to every one of ``feature_sets``; a feature set to which more of them apply (OT3 on WiFi,
        wine and landmine) gets ``run_family_pair_with_<adapters>``, which runs those too, so that an adapter
        that the choice of k also scores adapts each point once for both. A feature set with at most m rankers
        per job (config `shift.rankers_per_job`) gets n = ceil(len(rankers) / m) rules, ``<name>_part<i>of<n>``,
        each with its share of ``rankers`` (:func:`ranker_shares`): each (feature set, pair) is n jobs, and
        every ranker's outputs are the same as in one."""
        common = self.common_adapters(feature_sets, adapters)
        per_job = (self.config.get("shift") or {}).get("rankers_per_job") or {}
        rules: dict[str, PairRule] = {}
        for fs in sorted(feature_sets):
            more = [a for a in self.applicable_adapters(fs, adapters) if a not in common]
            # an identifier, like the other rules' names
            suffix = re.sub(r"\W+", "_", "".join(f"_with_{a}" for a in more)).lower()
            shares = ranker_shares(rankers, per_job.get(fs, max(1, len(rankers))))
            n = len(shares)
            for i, share in enumerate(shares, 1):
                part = f"_{i}of{n}" if n > 1 else ""
                name = f"run_family_pair{suffix}" + (f"_part{i}of{n}" if n > 1 else "")
                rules.setdefault(name, PairRule(tuple(common + more), share, part)).feature_sets.append(fs)
        return rules

    def family_ends_rules(self, pair_rules: Mapping[str, PairRule]) -> dict[str, PairRule]:
        """The rules of the curves' points of all features that a data family's pair split in several jobs
        reads (:meth:`family_pair_ends`): one per set of adapters of the split ``pair_rules``, named
        ``classify_family_all_features`` with the pair rule's suffix (``_with_ot3``), for those rules' feature
        sets. Computed once for the pair, not in each of its jobs."""
        rules: dict[str, PairRule] = {}
        for name, job in pair_rules.items():
            if not job.part:
                continue
            # the pair rule's name less its share's ("_part1of7"), which an adapter's name cannot end with
            suffix = name.removesuffix(f"_part{job.part[1:]}").removeprefix("run_family_pair")
            ends = rules.setdefault(f"classify_family_all_features{suffix}", PairRule(job.adapters, ()))
            ends.feature_sets.extend(fs for fs in job.feature_sets if fs not in ends.feature_sets)
        return rules

    def all_features_job_params(self, adapters) -> dict:
        """The params of a job of the points of all features of one (feature set, pair) on its {grid} wildcard
        (:func:`otfs_workflow.stages.classification.run_all_features`; rules classify_leaderboard_all_features and
        classify_family_all_features*)."""
        return {"adapters": list(adapters), "adapter_params": [self.adapter_params(a) for a in adapters],
                "metrics": lambda w: self.grid_config(w.grid).get("metrics", {}),
                "iterations": lambda w: self.iterations[: self.grid_config(w.grid).get("iterations")],
                "per_class": lambda w: self.pair_source_per_class(w.pair, w.feature_set)}

    def family_curve_ends(self, feature_set: str, pair: str) -> str:
        """The file of the families' grid's points of all features of one (feature set, pair)
        (rules classify_family_all_features*)."""
        return f"results/runs/{feature_set}/all_features/{self.config['shift']['grid']}/{pair}.families.json"

    def family_pair_ends(self, job: PairRule):
        """Input function of the pair rule ``job``: where the pair is split in several jobs, the points of all
        features that each of them reads instead of computing them again, by name: ``curve_ends`` (the
        families' grid, :meth:`family_curve_ends`) and ``ms_ends`` (the choice of k's grid, rule
        score_model_selection_all_features), each where its grid has all d features; a pair in one job
        computes them once itself and reads none."""
        grid, ms_grid = self.config["shift"]["grid"], self.config["model_selection"]["grid"]

        def ends(w) -> dict[str, str]:
            if not job.part:
                return {}
            files = {}
            if self.grid_reads_d(w.feature_set, grid):
                files["curve_ends"] = self.family_curve_ends(w.feature_set, w.pair)
            if self.grid_reads_d(w.feature_set, ms_grid):
                files["ms_ends"] = f"results/runs/{w.feature_set}/all_features/{ms_grid}/{w.pair}.model_selection.tsv"
            return files

        return ends

    def pair_source_per_class(self, pair: str, feature_set: str):
        """Source samples per class of each iteration of ``pair``: the feature set's `source_per_class` where it
        has one (a data family's own protocol), else config `protocol` (with its per-domain overrides)."""
        own = self.fs_config(feature_set).get("source_per_class")
        if own is not None:
            return source_per_class(parse_pair(pair)[0], own, {})
        protocol = self.config["protocol"]
        return source_per_class(parse_pair(pair)[0], protocol["source_per_class"],
                                protocol["source_per_class_overrides"])

    # --- methods -------------------------------------------------------------------------------------------
    def ranker_strategy(self, name: str):
        """The sample-selection strategy whose pairs ranker ``name`` ranks (the OT rankers), else None."""
        params = self.config.get("rankers", {}).get(name)

        def compute():
            from otfs_workflow.stages.ranking import build_ranker, pairs_strategy

            return pairs_strategy(build_ranker(name, params))

        return self._once(("strategy", name), lambda: self.answer("ranker_strategy", [name, params], compute))

    def ranker_needs_class_labels(self, name: str) -> bool:
        """Whether ranker ``name``, with its configured parameters, reads class labels."""
        params = self.config.get("rankers", {}).get(name)

        def compute():
            from otfs_workflow.stages.ranking import build_ranker

            return bool(build_ranker(name, params).needs_class_labels())

        return self.answer("ranker_needs_class_labels", [name, params], compute)

    def ranking_job_params(self, prefix: str = "") -> dict:
        """The params of a ranking job (rule rank_features; run_family_pair's, named with ``prefix``)."""
        return {f"{prefix}ranker_params": lambda w: self.ranker_params(w.ranker),
                f"{prefix}per_class": lambda w: self.pair_source_per_class(w.pair, w.feature_set),
                f"{prefix}iterations": lambda w: self.ranking_iterations(w.feature_set, w.ranker)}

    def k_selection_kind(self, name: str) -> str:
        """The kind of the choice-of-k rule ``name`` (``scorer``, ``data``, ...)."""
        from otfs.registry import get_registry

        return self.answer("k_selection_kind", name, lambda: get_registry("otfs.k_selection")[name].kind)

    def ranker_params(self, name: str) -> dict:
        """A ranker's parameters, as the ranking stage builds it."""
        params = dict(self.config.get("rankers", {}).get(name) or {})
        if self.ranker_strategy(name):
            for section, keys in OT_RANKER_SETTINGS.items():
                params.update({k: self.config[section][k] for k in keys})
        return params

    def adapter_params(self, name: str) -> dict:
        """An adapter's hyper-parameters from config `adapters` (none: its defaults)."""
        return dict(self.config.get("adapters", {}).get(name) or {})

    def grid_config(self, name: str) -> dict:
        """The grid ``name`` of config ``grids``; an unknown one is an error naming the grids."""
        try:
            return self.config["grids"][name]
        except KeyError:
            raise WorkflowError(
                f"unknown grid {name!r} (a file path names it); config grids: {sorted(self.config['grids'])}"
            ) from None

    def curves_job_params(self, adapters, grid=None, prefix="") -> dict:
        """The params of a job that runs the curves of ``adapters`` on one grid: the job's {grid} wildcard
        (rule classify_leaderboard_adapters), or ``grid`` (run_family_pair's, named with ``prefix``)."""

        def of(w):
            return self.grid_config(w.grid if grid is None else grid)

        return {
            f"{prefix}adapters": list(adapters),
            f"{prefix}adapter_params": [self.adapter_params(a) for a in adapters],
            f"{prefix}orders": lambda w: of(w)["orders"],
            f"{prefix}feature_counts": lambda w: of(w)["feature_counts"],
            f"{prefix}iterations": lambda w: of(w).get("iterations"),
            f"{prefix}metrics": lambda w: of(w).get("metrics", {}),
        }

    # --- where the data come from --------------------------------------------------------------------------
    def source_settings(self, dataset: str) -> dict:
        """The settings of a dataset that say where its files come from (and only those, so that editing
        another setting of the dataset does not refetch its files)."""
        ds = self.config["datasets"][dataset]
        return {k: ds[k] for k in SOURCE_KEYS if k in ds}

    def pair_caches(self, w) -> list[str]:
        """Input function: the cache files of the two domains of the pair ``w.pair``."""
        return [f"data/cache/{w.feature_set}/{d}.h5" for d in parse_pair(w.pair)]

    def cache_inputs(self, w) -> dict:
        """Input function: the files a feature set's reader reads a domain from (and the manifest), or an
        extracted feature set's extraction output."""
        if self.is_extracted(w.feature_set):
            return {"features": self.features_file(w.feature_set, w.domain)}
        inputs = {
            "raw": [self.raw_path(w.feature_set, r) for r in self.reader_files(w.feature_set, w.domain)],
            "local": self.reader_local_files(w.feature_set, w.domain),
        }
        inputs = {k: v for k, v in inputs.items() if v}  # Snakemake misplaces an empty named list
        if self.fs_dataset(w.feature_set).get("manifest"):
            inputs["manifest"] = self.fs_dataset(w.feature_set)["manifest"]
        return inputs

    def _search_folders(self, feature_set):
        from otfs_workflow.stages.acquisition import sources_for

        fs = self.fs_config(feature_set)
        return [folder for _, folder in sources_for(fs["dataset"], self.fs_dataset(feature_set), None).folders()]

    def _images_present(self, dataset, domain):
        return self._once(("images", dataset, domain), lambda: self._images_present_now(dataset, domain))

    def _images_present_now(self, dataset, domain):
        """Whether every image of a domain is in the acquired folder or a searched folder."""
        from otfs_workflow.data.manifest import read_manifest
        from otfs_workflow.stages.acquisition import sources_for

        if Path(images_dir(dataset, domain)).is_dir():
            return True
        ds = self.config["datasets"][dataset]
        folders = [str(f) for _, f in sources_for(dataset, ds, None).folders()]
        try:
            manifest = read_manifest(ds["image_manifest"])
        except ValueError:
            return False
        # the manifest's images/<domain>/<class>/<file> paths by domain, grouped once; the jobs that read the
        # images check the rest (otfs_workflow.data.images.domain_images)
        by_domain = self._once(("image_paths", dataset), lambda: _paths_by_domain(manifest.entries))
        paths = by_domain.get(domain, [])
        return bool(paths) and all(any(os.path.isfile(os.path.join(f, p)) for f in folders) for p in paths)

    def _present(self, feature_set, domain):
        """Whether a domain's input is local: the acquired copy or a searched folder."""
        fs = self.fs_config(feature_set)
        if self.is_extracted(feature_set):
            return Path(self.features_file(feature_set, domain)).is_file() or self._images_present(
                fs["dataset"], domain)
        if not all(Path(p).is_file() for p in self.reader_local_files(feature_set, domain)):
            return False
        if not self.reader_files(feature_set, domain):
            return True  # nothing to acquire: generated, or read in place
        folders = self._search_folders(feature_set)
        return all(Path(self.raw_path(feature_set, rel)).is_file() or any((f / rel).is_file() for f in folders)
                   for rel in self.reader_files(feature_set, domain))

    def local_domains(self, feature_set: str) -> list[str]:
        """Domains of a feature set whose input is present locally (raw, local, mirrors), as the plan found them
        (looked up once: the jobs that acquire or extract them run after the plan)."""
        return list(self._once(("local", feature_set),
                               lambda: [d for d in self.fs_domains(feature_set) if self._present(feature_set, d)]))

    def require_obtainable(self, feature_set: str) -> None:
        """Fail while the DAG is built if a file is neither local nor downloadable."""
        if self.fs_dataset(feature_set).get("download"):
            return  # the acquisition job fetches it, or fails naming the file
        missing = [d for d in self.fs_domains(feature_set) if d not in self.local_domains(feature_set)]
        if not missing:
            return
        fs, ds = self.fs_config(feature_set), self.fs_dataset(feature_set)
        if self.is_extracted(feature_set):
            where = ", ".join(f"{Path(ds['local_dir']) / 'images' / d}/<class>/<file>" for d in missing)
        else:
            where = ", ".join(
                [str(Path(ds["local_dir"]) / rel) for d in missing for rel in self.reader_files(feature_set, d)]
                + [p for d in missing for p in self.reader_local_files(feature_set, d) if not Path(p).is_file()])
        how = (f", set {ds['mirror_env']}, or enable datasets.{fs['dataset']}.download"
               if ds.get("mirror_env") else "")
        raise WorkflowError(
            f"feature set {feature_set!r}: the data of domain(s) {missing} cannot be obtained "
            f"(not found locally and downloads are disabled). Put the files at {where}{how}. "
            "`snakemake available` builds every target the present data allows."
        )

    # --- target sets and aggregates ------------------------------------------------------------------------
    def scope_for(self, target_set: str, feature_set: str) -> str:
        """Domain scope of a feature set in a target set: "all", or "a+b+c" when partial."""
        if target_set == "paper":
            self.require_obtainable(feature_set)
            return "all"
        present = self.local_domains(feature_set)
        return "all" if present == list(self.fs_domains(feature_set)) else "+".join(present)

    def scope_pairs(self, feature_set: str, scope: str) -> list[str]:
        """Configured pairs of a feature set within the domains of ``scope``."""
        domains = set(self.fs_domains(feature_set) if scope == "all" else scope.split("+"))
        return [p for p in self.fs_pairs(feature_set) if set(parse_pair(p)) <= domains]

    def target_feature_sets(self, target_set: str, names) -> list[str]:
        """Feature sets a target covers: as configured, or those with data for a pair."""
        if target_set == "paper":
            return list(names)
        return [fs for fs in names if self.scope_pairs(fs, self.scope_for("available", fs))]

    def aggregate_caches(self, w) -> list[str]:
        """Input function: the caches of the domains of an aggregate's pairs (its scope)."""
        return [f"data/cache/{w.feature_set}/{d}.h5"
                for d in pairs_domains(self.scope_pairs(w.feature_set, w.scope))]

    def aggregate_run(self, w, ranker: str, adapter: str) -> dict:
        """The parameters of one aggregate: rule aggregate's `run`, an entry of a batch's `runs`."""
        return {"feature_set": w.feature_set, "scope": w.scope, "ranker": ranker, "adapter": adapter,
                "grid": w.grid, "pairs": len(self.scope_pairs(w.feature_set, w.scope)),
                "iterations": len(self.iterations)}

    def batch_aggregate_tables(self, rankers, adapters) -> Callable:
        """Input function: the run tables of a batch of aggregates, every (ranker, adapter) in the outputs'
        order (rules aggregate_family, aggregate_leaderboard; script aggregation_batch.py)."""
        return lambda w: [
            f"results/runs/{w.feature_set}/classification/{r}/{a}/{w.grid}/{p}.tsv"
            for r in rankers for a in adapters for p in self.scope_pairs(w.feature_set, w.scope)]

    def batch_aggregate_params(self, rankers, adapters) -> Callable:
        """Params function: the `runs` of a batch of aggregates, in the same order."""
        return lambda w: [self.aggregate_run(w, r, a) for r in rankers for a in adapters]

    @staticmethod
    def batch_aggregate_outputs(name: str, rankers, adapters) -> list[str]:
        """One of rule aggregate's files (``name``) of every (ranker, adapter) of a batch (a pattern of the
        wildcards feature_set, scope and grid)."""
        return [f"results/aggregate/{{feature_set}}/{{scope}}/{r}/{a}/{{grid}}/{name}"
                for r in rankers for a in adapters]

    def agg(self, target_set: str, feature_set: str, ranker=None, adapter="NA", grid="curves") -> str:
        """Folder of one aggregate, for the scope of ``feature_set`` in ``target_set``."""
        scope = self.scope_for(target_set, feature_set)
        return f"results/aggregate/{feature_set}/{scope}/{ranker or self.main_ranker}/{adapter}/{grid}"

    def available_pairs(self, feature_set: str) -> list[str]:
        """The configured pairs of ``feature_set`` whose domains have data (the `available` scope)."""
        return self.scope_pairs(feature_set, self.scope_for("available", feature_set))

    def rankings(self, feature_sets, rankers) -> list[str]:
        """The rankings of ``rankers`` on every available pair of ``feature_sets``."""
        return [f"results/runs/{fs}/ranking/{r}/{p}.json" for fs in feature_sets for r in rankers
                for p in self.available_pairs(fs)]

    def choice_of_k_tables(self, feature_sets, rankers, pairs=None) -> list[str]:
        """The choice of k's per-pair tables (on `model_selection.grid`) of ``rankers`` on ``pairs`` of each of
        ``feature_sets`` (None: its available pairs)."""
        grid = self.config["model_selection"]["grid"]
        return [f"results/runs/{fs}/model_selection/{r}/{grid}/{p}.tsv" for fs in feature_sets for r in rankers
                for p in (self.available_pairs(fs) if pairs is None else pairs)]

    def grid_reads_d(self, feature_set: str, grid: str) -> bool:
        """Whether ``grid``'s numbers of features include all d of ``feature_set``."""
        from otfs_workflow.protocol import resolve_feature_counts

        d = self.fs_n_features(feature_set)
        return d in resolve_feature_counts(self.grid_config(grid)["feature_counts"], d)

    def all_features_ends(self, feature_set: str, grid: str, pairs) -> list[str]:
        """The points of all features of ``pairs`` (rule classify_leaderboard_all_features), where ``grid`` has
        d (else none)."""
        if not self.grid_reads_d(feature_set, grid):
            return []
        return [f"results/runs/{feature_set}/all_features/{grid}/{p}.json" for p in pairs]

    # --- the leaderboard and the label-free choice of k (workflow/rules/leaderboard.smk, model_selection.smk)
    def leaderboard_feature_sets(self) -> list[str]:
        """The leaderboard's feature sets that have data for a pair (the `available` scope)."""
        return self.target_feature_sets("available", self.config["leaderboard"]["feature_sets"])

    def leaderboard_inputs(self, kind: str) -> list[str]:
        """The leaderboard's aggregates (``kind`` "aggregates") or rankings ("rankings")."""
        board = self.config["leaderboard"]
        if kind == "aggregates":
            return [f"{self.agg('available', fs, ranker=r, adapter=a, grid=board['grid'])}/long.tsv"
                    for fs in self.leaderboard_feature_sets() for r in board["rankers"] for a in board["adapters"]]
        if kind == "rankings":
            return self.rankings(self.leaderboard_feature_sets(), board["rankers"])
        raise ValueError(f"unknown kind of the leaderboard's inputs {kind!r}")

    def model_selection_feature_sets(self) -> list[str]:
        """The feature sets of `model_selection` that have data for a pair (the `available` scope)."""
        return self.target_feature_sets("available", self.config["model_selection"]["feature_sets"])

    def model_selection_pair_tables(self) -> list[str]:
        return self.choice_of_k_tables(self.model_selection_feature_sets(), self.config["model_selection"]["rankers"])

    def model_selection_job_params(self, grid=None, prefix="") -> dict:
        """The params of a job that scores the choice of k of one (feature set, ranker, pair) on one grid: the
        job's {grid} wildcard (rule score_model_selection), or ``grid`` (run_family_pair's, named with
        ``prefix``)."""
        ms = self.config["model_selection"]

        def adapters(w):
            return self.applicable_adapters(w.feature_set, ms["adapters"])

        def of(w):
            return self.grid_config(w.grid if grid is None else grid)

        return {
            f"{prefix}adapters": adapters,
            f"{prefix}adapter_params": lambda w: [self.adapter_params(a) for a in adapters(w)],
            f"{prefix}rules": ms["rules"],
            f"{prefix}classifier": ms["classifier"],
            f"{prefix}second_classifier": ms.get("second_classifier"),
            f"{prefix}cv": ms["cv"],
            f"{prefix}feature_counts": lambda w: of(w)["feature_counts"],
            f"{prefix}iterations": lambda w: of(w).get("iterations"),
        }

    # --- the label-free recommendation (config `recommend`; workflow/rules/recommend.smk) -------------------
    @property
    def recommend_rankers(self) -> list[str]:
        """The candidate rankers: those whose choice-of-k rows the evaluation reads."""
        return list(self.config["recommend"]["rankers"] or self.config["model_selection"]["rankers"])

    def k_rules_of_kind(self, kind: str) -> list[str]:
        """The label-free k rules of `model_selection` of ``kind``: "data" (they read the data, not a scorer's
        candidates) or "scorer"."""
        return [n for n in self.config["model_selection"]["rules"] if self.k_selection_kind(n) == kind]

    def recommend_feature_sets(self) -> list[str]:
        """The feature sets of target `recommend` that have data for a pair (the `available` scope)."""
        names = self.config["recommend"]["feature_sets"] or self.config["model_selection"]["feature_sets"]
        return self.target_feature_sets("available", names)

    def recommend_pair_outputs(self, ext: str) -> list[str]:
        """Every pair's recommendation file of target `recommend`."""
        return [f"{RECOMMEND_OUT}/{fs}/{p}/recommendation.{ext}" for fs in self.recommend_feature_sets()
                for p in self.available_pairs(fs)]

    def recommend_evaluation_families(self) -> dict[str, str]:
        """{feature set: family} of every task the evaluation reads: each feature set of `model_selection` is a
        family of its own (the images), and the data families' feature sets are theirs."""
        out = {fs: fs for fs in self.model_selection_feature_sets()}
        for family in self.shift_families():
            out.update({fs: family for fs in self.shift_feature_sets(family)})
        return out

    def recommend_task_summaries(self) -> list[str]:
        """The summary of every task of the evaluation (rule recommend_task)."""
        return [f"results/runs/{fs}/recommend/{p}.parquet" for fs in self.recommend_evaluation_families()
                for p in self.available_pairs(fs)]

    def recommend_task_tables(self, feature_set: str, pair: str) -> list[str]:
        """The choice of k's tables of every candidate ranker on the task (``feature_set``, ``pair``)."""
        return self.choice_of_k_tables([feature_set], self.recommend_rankers, [pair])

    def recommend_evaluation_ready(self) -> bool:
        """Whether the evaluation has what it needs: the choice of k's rows of three families or more (a nested
        leave one family out). A configuration of a user's own data alone has none of the benchmark's."""
        families = self.recommend_evaluation_families()
        return len({families[fs] for fs in families if self.available_pairs(fs)}) >= 3

    def recommend_selector_params(self) -> dict:
        """The library selector's parameters of a per-pair recommendation (otfs.k_selection._label_free)."""
        ms, rec = self.config["model_selection"], self.config["recommend"]
        return {"rankers": self.recommend_rankers, "adapter": rec["adapter"],
                "n_features_grid": list(self.grid_config(ms["grid"])["feature_counts"]), "policy": rec["policy"],
                "classifier": ms["classifier"], "n_splits": ms["cv"]["n_splits"], "test_size": ms["cv"]["test_size"],
                "scorers": self.k_rules_of_kind("scorer")}

    # --- the paper's targets and what they read (workflow/rules/targets.smk) -----------------------------------
    def shift_family_feature_sets(self) -> frozenset:
        """The feature sets of the data families (config `shift.families`)."""
        return self._once("shift_family_feature_sets", lambda: frozenset(
            fs for names in self.config["shift"]["families"].values() for fs in names))

    def shift_data_feature_sets(self) -> frozenset:
        """The feature sets of the shift data (config `shift`): those of a family, and every other one read
        from a manifest of a family's or a regression's dataset (a family that a smaller configuration
        leaves out of `shift.families` is not thereby one of the paper's image feature sets)."""

        def compute():
            members = self.shift_family_feature_sets()
            manifests = {self.fs_dataset(fs).get("manifest") for fs in members} | {
                self.config["datasets"][c["dataset"]].get("manifest")
                for c in self.config["shift"].get("regression", {}).values()}
            manifests.discard(None)
            return frozenset(members) | {fs for fs in self.config["feature_sets"]
                                         if self.fs_dataset(fs).get("manifest") in manifests}

        return self._once("shift_data_feature_sets", compute)

    def listed_feature_sets(self) -> frozenset:
        """The feature sets that a section of config lists by name (`targets.*`, `leaderboard`,
        `model_selection`, the related methods' experiments): their grids may read every iteration."""
        return self._once("listed_feature_sets", lambda: frozenset(
            fs for sec in [*self.config.values(), *self.config["targets"].values()]
            if isinstance(sec, Mapping) and isinstance(sec.get("feature_sets"), list) for fs in sec["feature_sets"]))

    def all_iteration_rankers(self) -> frozenset:
        """The rankers that the paper's grids read on every iteration: `ranking.ranker` and the rankers a
        target of `targets` names (Table 5's sample-selection strategies)."""
        def compute():
            names = {self.config["ranking"]["ranker"]}
            for section in self.config["targets"].values():
                if isinstance(section, Mapping):
                    names.update(section.get("rankers") or [])
            return frozenset(names)

        return self._once("all_iteration_rankers", compute)

    def _first_iterations(self, reads):
        """ranked_iterations' form for grids that read the first ``reads`` iterations (None: every one)."""
        if not reads or None in reads or max(reads) >= len(self.iterations):
            return self.iterations
        return {"ranked": self.iterations[: max(reads)], "protocol": len(self.iterations)}

    def ranking_iterations(self, feature_set: str, ranker: str | None = None):
        """What rank_features ranks (otfs_workflow.protocol.ranked_iterations): the protocol's iterations, or
        the first n that every grid reading the ranking reads, with the protocol's count (a reader of more
        fails, naming the file):

        - a feature set of the shift data that no other section lists: the grids `shift.grid` and
          `model_selection.grid`;
        - a ``ranker`` that no paper target reads (:meth:`all_iteration_rankers`) and that `leaderboard` or
          `model_selection` lists for this feature set: the grids of the sections that list it (the
          leaderboard's zoo reads 5 of 19).

        Anything else (a ranking asked for by its path included) is ranked on every iteration."""
        board, ms = self.config["leaderboard"], self.config["model_selection"]
        if feature_set in self.shift_data_feature_sets() and feature_set not in self.listed_feature_sets():
            return self._first_iterations([self.grid_config(g).get("iterations")
                                           for g in (self.config["shift"]["grid"], ms["grid"])])
        if ranker is None or ranker in self.all_iteration_rankers():
            return self.iterations
        return self._first_iterations([self.grid_config(section["grid"]).get("iterations")
                                       for section in (board, ms)
                                       if feature_set in section["feature_sets"] and ranker in section["rankers"]])

    def batched_pairs(self, feature_set: str) -> list[str]:
        """The pairs of ``feature_set`` that the rules made per feature set (rank_pairs_, classify_pairs_,
        score_pairs_ <feature set>) run in one job: those with data, the `available` scope that the
        leaderboard and model selection read; none for the shift data's feature sets (whose data families
        run each pair in one job, rule run_family_pair)."""
        if feature_set in self.shift_data_feature_sets():
            return []
        return self._once(("batched_pairs", feature_set), lambda: self.available_pairs(feature_set))

    def pair_shares(self, feature_set: str) -> list[tuple[str, list[str]]]:
        """``[(part, pairs)]``: the :meth:`batched_pairs` of ``feature_set`` whose choice-of-k scores one job of a
        ranker computes (rules score_pairs_<feature set><part>), in the fewest contiguous shares of at most
        config ``model_selection.pairs_per_job[feature_set]`` pairs (all in one where it names none); ``part`` is
        ``""`` for one share, else ``"_part<i>of<n>"``."""
        pairs = self.batched_pairs(feature_set)
        per_job = (self.config["model_selection"].get("pairs_per_job") or {}).get(feature_set)
        shares = ranker_shares(pairs, per_job) if per_job and pairs else [tuple(pairs)]
        return [("" if len(shares) == 1 else f"_part{i}of{len(shares)}", list(share))
                for i, share in enumerate(shares, 1)]

    def score_pair_rules(self) -> list[tuple[str, str, list[str]]]:
        """``[(feature_set, part, pairs)]``: one rule score_pairs_<feature set><part> each (:meth:`pair_shares` of
        every :meth:`batched_feature_sets` of model selection)."""
        return [(fs, part, pairs) for fs in self.batched_feature_sets("model_selection")
                for part, pairs in self.pair_shares(fs)]

    def batched_feature_sets(self, section: str) -> list[str]:
        """The feature sets of config ``section`` (`leaderboard`, `model_selection`) that have pairs to batch."""
        return [fs for fs in self.config[section]["feature_sets"] if self.batched_pairs(fs)]

    def model_selection_rankers(self) -> list[str]:
        """The rankers whose choice-of-k rows a target reads on `model_selection`'s feature sets: its own, and
        the label-free recommendation's candidates (config `recommend.rankers`, recommend.smk)."""
        return list(dict.fromkeys([*self.config["model_selection"]["rankers"],
                                   *(self.config["recommend"]["rankers"] or [])]))

    def pair_batched_rankings(self) -> dict[str, list[str]]:
        """``{feature_set: rankers}`` ranked one job per (feature set, ranker) for all its :meth:`batched_pairs`
        (rules rank_pairs_<feature set>): the rankers of the leaderboard and model selection that no paper
        target reads (:meth:`ranking_iterations` ranks them on the iterations those grids read). Each such
        ranking of a pair takes seconds; one job per pair paid as much again for its interpreter and imports."""
        batched: dict[str, set] = {}
        by_section = {"leaderboard": self.config["leaderboard"]["rankers"],
                      "model_selection": self.model_selection_rankers()}
        for section, rankers in by_section.items():
            for fs in self.batched_feature_sets(section):
                for r in rankers:
                    if r not in self.all_iteration_rankers():
                        batched.setdefault(fs, set()).add(r)
        return {fs: sorted(rankers) for fs, rankers in batched.items()}

    def per_fs_sets(self, target_set: str, target: str) -> list[str]:
        """Feature sets of a per-feature-set target: as configured for the paper; every feature set with data
        for the available set, except Figure 2 which is GoogleNet's (its configured list), and except the
        shift data's feature sets (:meth:`shift_data_feature_sets`), which have their own targets. Table 1's
        counts that give 0 of a small feature set's d leave it out (a note says so)."""
        from otfs_workflow.protocol import left_out

        targets = self.config["targets"]
        if target_set == "paper" or target == "figure2":
            names = targets[target]["feature_sets"]
        else:
            shift = self.shift_data_feature_sets()
            names = [fs for fs in self.config["feature_sets"] if fs not in shift]
        if target == "table1":
            spec = targets["table1"]["n_features"]
            names = [fs for fs in names if not left_out(spec, self.fs_n_features(fs))]
        return self.target_feature_sets(target_set, names)

    def multi_fs_sets(self, target_set: str, target: str) -> list[str]:
        return self.target_feature_sets(target_set, self.config["targets"][target]["feature_sets"])

    def target_files(self, target_set: str, target: str) -> list[str]:
        """Output files of one target in one target set."""
        base = f"results/{target_set}/{target}"
        if target in PER_FS:
            return [f"{base}/{fs}.{e}" for fs in self.per_fs_sets(target_set, target) for e in PER_FS[target]]
        if target in MULTI_FS:
            if not self.multi_fs_sets(target_set, target):
                return []
            return [f"{base}/{target}.{e}" for e in MULTI_FS[target]]
        return [f"{base}/{target}.{e}" for e in TOYS[target]]

    def all_target_files(self, target_set: str) -> list[str]:
        return [f for target in [*PER_FS, *MULTI_FS, *TOYS] for f in self.target_files(target_set, target)]

    def target_aggregates(self, target_set: str) -> list[str]:
        """Aggregate folders behind the curve-based targets of a target set."""
        targets, out = self.config["targets"], []
        for target, grid in (("table1", "table1"), ("figure2", "curves"), ("table3", "table3")):
            out += [self.agg(target_set, fs, adapter=a, grid=grid) for fs in self.per_fs_sets(target_set, target)
                    for a in targets[target]["adapters"]]
            if target == "table1":
                out += [self.agg(target_set, fs) for fs in self.per_fs_sets(target_set, "figure1")]
        out += [self.agg(target_set, fs, ranker=r) for fs in self.per_fs_sets(target_set, "table5")
                for r in targets["table5"]["rankers"]]
        for target in MULTI_FS:
            out += [self.agg(target_set, fs) for fs in self.multi_fs_sets(target_set, target)]
        return list(dict.fromkeys(out))

    def feature_tables(self, target_set: str) -> list[str]:
        """The paper ranker's features by name (features.tsv) of every feature set of a target set's curves."""
        return [f"{self.agg(target_set, fs).rsplit('/', 2)[0]}/features.tsv"
                for fs in self.per_fs_sets(target_set, "figure1")]

    def comparison_files(self, target_set: str) -> list[str]:
        return [f for f in self.all_target_files(target_set) if f.endswith(".comparison.csv")]

    def main_target_files(self, target_set: str, related: Callable[[], Iterable[str]] = tuple) -> list[str]:
        """What `all` (target set paper) or `available` builds, but its data notes; ``related()``: the related
        experiments' target files, which the paper's set builds (`available` builds the data families with
        files present instead, and their verdict)."""
        files = [*self.all_target_files(target_set), *self.feature_tables(target_set),
                 f"results/{target_set}/comparison/summary.csv", f"results/{target_set}/results_long.tsv",
                 *[f for files in CLINICAL_TARGETS.values() for f in files]]
        return files + (list(related()) if target_set == "paper" else self.shift_available_targets())

    def report_category(self, stem: str, section: str):
        """The report's category of an output: the paper's ``section``, but for a per-feature-set output (``stem``
        has ``{feature_set}``) of a feature set not of the paper's datasets (a user's), a category of its own."""
        if "{feature_set}" not in stem:
            return section

        def category(wildcards):
            fs = wildcards.feature_set
            paper = {self.fs_config(f)["dataset"] for f in PAPER_FEATURE_SETS if f in self.config["feature_sets"]}
            dataset = self.fs_config(fs)["dataset"]
            return section if dataset in paper else f"Feature set {fs} (dataset {dataset})"

        return category

    def table_outputs(self, stem: str, caption: str, section: str, subcategory: str) -> dict:
        """A table rule's outputs (``<stem>.{csv,tex,md,comparison.csv}``), the CSV and the comparison in the
        report under :meth:`report_category`."""
        from snakemake.io import report

        category = self.report_category(stem, section)
        return {"csv": report(f"{stem}.csv", caption=caption, category=category, subcategory=subcategory),
                "tex": f"{stem}.tex", "md": f"{stem}.md",
                "comparison": report(f"{stem}.comparison.csv", caption="../report/comparison.rst", category=category,
                                     subcategory=subcategory)}

    def curve_outputs(self, stem: str, caption: str, section: str, subcategory: str) -> dict:
        """A figure rule's outputs (``<stem>.{pdf,png,csv}``), the PNG in the report under
        :meth:`report_category`."""
        from snakemake.io import report

        return {"pdf": f"{stem}.pdf", "png": report(f"{stem}.png", caption=caption, category=self.report_category(
            stem, section), subcategory=subcategory), "csv": f"{stem}.csv"}

    def staged_files(self) -> list[str]:
        """Every file `all` reads from outside: each feature set's released files, or the images its features
        are extracted from, for every configured domain."""
        files = []
        for feature_set in self.config["feature_sets"]:
            self.require_obtainable(feature_set)
            dataset = self.fs_config(feature_set)["dataset"]
            for domain in self.fs_domains(feature_set):
                if self.is_extracted(feature_set):
                    files.append(images_dir(dataset, domain))
                else:
                    files += [self.raw_path(feature_set, r) for r in self.reader_files(feature_set, domain)]
        return list(dict.fromkeys(files))

    # --- what the captions say (computed from the configuration: a user's dataset is described as what it is)
    def feature_count_notes(self) -> list[str]:
        """What the configuration's numbers of features leave out, feature set by feature set
        (:func:`otfs_workflow.config.check_feature_counts`, which raises for a count out of range)."""
        from otfs_workflow.config import check_feature_counts

        return self._once("feature_count_notes", lambda: check_feature_counts(self.config, self.fs_n_features))

    def count_notes(self, feature_set: str) -> list[str]:
        """The notes of :meth:`feature_count_notes` about one feature set (for its tables' captions)."""
        return [n for n in self.feature_count_notes() if f"feature set {feature_set!r}" in n]

    def fs_title(self, feature_set: str, target_set: str, extra: str = "") -> str:
        from otfs_workflow.formatting import FEATURE_SET_NAMES

        scope = self.scope_for(target_set, feature_set)
        where = "" if scope == "all" else f", domains {scope.replace('+', ', ')}"
        return (f"{FEATURE_SET_NAMES.get(feature_set, feature_set)} (d = {self.fs_n_features(feature_set)})"
                f"{where}{extra}")

    def fs_about(self, feature_set: str, target_set: str = "available") -> str:
        """One sentence on a feature set for the captions: its name, d, domains, where its features come
        from, its preprocessing, and what the grids leave out for it."""
        from otfs.datasets._readers import reader_spec

        fs = self.fs_config(feature_set)
        scope = self.scope_for(target_set, feature_set)
        domains = self.fs_domains(feature_set) if scope == "all" else scope.split("+")
        if feature_set in PAPER_FEATURE_SETS:
            source = PAPER_FEATURE_SETS[feature_set]
        elif self.is_extracted(feature_set):
            source = f"extracted by {fs['extractor']} from the images of dataset {fs['dataset']}"
        else:
            name, params = reader_spec(fs)
            source = f"read by the {name} reader"
            if name == "tabular":
                files = ", ".join(str(params["files"][d]) for d in domains if d in params["files"])
                source += f" from {files}, label column {params.get('label') or 'label'!r}"
                if params.get("missing", "error") != "error":
                    source += f", missing values imputed by the {params['missing']} of " + (
                        "the domain" if params.get("impute_from", "domain") == "domain" else "every domain")
        text = (f"Feature set **{feature_set}** (dataset {fs['dataset']}; domains {', '.join(domains)}; "
                f"d = {self.fs_n_features(feature_set)}): {source}; preprocessing "
                f"{', '.join(fs['preprocessing']) or 'none'}.")
        notes = self.count_notes(feature_set)
        return text + (" Left out: " + "; ".join(notes) + "." if notes else "")

    def run_caption(self, feature_sets=None, versions: str = "") -> str:
        """The run's protocol for the captions (every key read here exists: the schema requires it); the
        per-domain overrides of the source samples are those of ``feature_sets``' domains; ``versions``, the
        packages' versions."""
        p, sel, r = self.config["protocol"], self.config["sample_selection"], self.config["ranking"]
        domains = {d for fs in (feature_sets or self.config["feature_sets"]) for d in self.fs_domains(fs)}
        overrides = ", ".join(f"{d}: {n}" for d, n in p["source_per_class_overrides"].items() if d in domains)
        per_class = ("every source sample" if p["source_per_class"] == "all"
                     else f"{p['source_per_class']} source samples per class")
        return (f"{p['iterations']} iterations per pair, {per_class}" + (f" ({overrides})" if overrides else "")
                + f", all target samples; Algorithm 1: exact OT sample selection (ties: {sel['tie_break']}, "
                f"iteration limit {sel['emd_max_iter']}); Algorithm 2: entropic OT between the features, reg "
                f"{r['reg']}, cost {r['norm']}, POT method {r['method']!r}; seeds SHA-256(feature "
                f"set|pair|iteration|purpose). Versions: {versions}.")

    # --- the related methods' experiments (workflow/rules/boosting.smk, invariance.smk, semfs.smk, clinical.smk)
    def related_params(self, section: str) -> dict:
        """The part of config ``section`` (`boosting`, `invariance`, `semfs`) its jobs depend on (editing another
        key reruns nothing)."""
        return {k: self.config[section][k] for k in RELATED_KEYS[section]}

    def boosting_task(self, name: str) -> dict:
        """The task ``name`` of config `boosting.tasks`."""
        return next(t for t in self.config["boosting"]["tasks"] if t["name"] == name)

    def related_runs(self, section: str) -> list[str]:
        """Every run file of the experiment of config ``section`` (`boosting`, `invariance`, `semfs`)."""
        if section not in RELATED_KEYS:
            raise ValueError(f"no runs of a related experiment {section!r}")
        cfg = self.config[section]
        fs = cfg["feature_set"]
        if section == "boosting":
            return [f"results/boosting/runs/{fs}/{p}/{t['name']}/{r}.tsv" for p in cfg["pairs"] for t in cfg["tasks"]
                    for r in range(cfg["repetitions"])]
        if section == "invariance":
            return [f"results/invariance/runs/{fs}/{p}.json" for p in self.fs_pairs(fs)]
        return [f"results/semfs/runs/{fs}/{p}/{s}.tsv" for p in cfg["pairs"] for s in range(cfg["splits"])]

    def check_clinical_data(self) -> None:
        """Name a missing voxel table (config `clinical.data`), and feature counts beyond its width."""
        from otfs_workflow.config import check_clinical_counts

        cfg = self.config["clinical"]
        data = cfg["data"]
        if data == "synthetic":
            d, where = cfg["synthetic"]["n_features"], "clinical.synthetic.n_features"
        elif not Path(data).is_file():
            raise WorkflowError(f"clinical.data: voxel table {data!r} not found (or set it to 'synthetic')")
        else:
            from otfs.datasets._clinical import voxel_table_width

            d, where = voxel_table_width(data), f"the feature columns of {data}"
        check_clinical_counts(cfg["feature_counts"], d, f"d = {d}, {where}")

    def clinical_user_table(self) -> dict:
        """The user's voxel table, where config `clinical.data` names one (else no input)."""
        data = self.config["clinical"]["data"]
        return {} if data == "synthetic" else {"table": data}

    # --- the WDA paper's experiments (config `wda`; workflow/rules/wda.smk) ---------------------------------
    @staticmethod
    def uci_raw(dataset: str) -> list[str]:
        """Raw files of one UCI data set (none for those scikit-learn ships)."""
        from otfs.datasets._uci import raw_files

        return [f"data/uci/raw/{p}" for p in raw_files(dataset)]

    def wda_eval_cfg(self, extra=()) -> dict:
        """The part of config `wda` a job depends on (editing another key reruns nothing)."""
        return {k: self.config["wda"][k] for k in (*WDA_EVAL_KEYS, *extra)}

    def wda_ablation_cfg(self, variant: str) -> dict:
        """An ablation job's part of config `wda`: Table 1's protocol keys and its own variant only."""
        ab = self.config["wda"]["ablation"]
        return {**self.wda_eval_cfg(), "ablation": {"splits": ab["splits"],
                                                    "variants": {variant: ab["variants"][variant]}}}

    def wda_ablation_datasets(self) -> tuple[dict[str, list[str]], list[str]]:
        """Each variant's data sets, and the notes: those of `wda.ablation.datasets`, or the part of them its own
        `datasets` names. A smaller configuration thus narrows every variant with `ablation.datasets` alone,
        whatever variants it inherits from config.yaml (Snakemake merges a --configfile into the defaults, key
        by key). A variant left with none is left out, with a note."""
        ab = self.config["wda"]["ablation"]
        runs, notes = {}, []
        for v, spec in ab["variants"].items():
            own = spec.get("datasets")
            runs[v] = [d for d in (own or ab["datasets"]) if d in ab["datasets"]]
            if not runs[v]:
                notes.append(f"wda.ablation.variants.{v}: its datasets {own} are not among wda.ablation.datasets "
                             f"{ab['datasets']}: left out")
        return runs, notes

    def wda_ablation_runs(self) -> list[str]:
        """(data set, variant) runs of the WDA ablation (:meth:`wda_ablation_datasets`)."""
        return [f"results/wda/ablation/runs/{d}/{v}.tsv" for v, datasets in self.wda_ablation_datasets()[0].items()
                for d in datasets]

    def wda_ablation_table1_runs(self) -> list[str]:
        """Table 1's WDA runs of the ablation's data sets (their first splits are shown beside the variants)."""
        wda = self.config["wda"]
        if "WDA" not in wda["methods"]:
            return []
        return [f"results/wda/runs/{d}/WDA.tsv" for d in wda["ablation"]["datasets"] if d in wda["datasets"]]

    def wda_office_inputs(self) -> list[str]:
        """The Office-Caltech curves WDA's comparison reads (config `wda.office`)."""
        office = self.config["wda"]["office"]
        fs = office["feature_set"]
        return [f"results/runs/{fs}/classification/{self.main_ranker}/{a}/{office['grid']}/{p}.tsv"
                for a in office["adapters"] for p in self.fs_pairs(fs)]

    # --- the data families (config `shift`; workflow/rules/shift.smk) ------------------------------------
    def shift_feature_sets(self, family: str) -> list[str]:
        """The feature sets of ``family`` that have data for a pair (the `available` scope)."""
        return self.target_feature_sets("available", self.config["shift"]["families"][family])

    def shift_families(self) -> list[str]:
        """The families with data for at least one pair: what `shift` and `available` build."""
        return [f for f in self.config["shift"]["families"] if self.shift_feature_sets(f)]

    def shift_inputs(self, kind: str, family: str) -> list[str]:
        """A family's inputs: its leaderboard aggregates (``kind`` "aggregates"), its rankings ("rankings") or its
        choice of k's per-pair tables ("k_selection", config `model_selection`)."""
        board, fss = self.config["leaderboard"], self.shift_feature_sets(family)
        if kind == "aggregates":
            grid = self.config["shift"]["grid"]
            return [f"{self.agg('available', fs, ranker=r, adapter=a, grid=grid)}/long.tsv" for fs in fss
                    for r in board["rankers"] for a in self.applicable_adapters(fs, board["adapters"])]
        if kind == "rankings":
            return self.rankings(fss, board["rankers"])
        if kind == "k_selection":
            return self.choice_of_k_tables(fss, self.config["model_selection"]["rankers"])
        raise ValueError(f"unknown kind of a family's inputs {kind!r}")

    def regression_file(self, family: str) -> str:
        """Where the pipeline acquires a regression family's file."""
        cfg = self.config["shift"]["regression"][family]
        return f"data/raw/{cfg['dataset']}/{cfg['file']}"

    def regression_families(self) -> list[str]:
        """The regression families whose file is acquired or in a searched folder (local folder, mirrors)."""
        from otfs_workflow.stages.acquisition import sources_for

        def present(family):
            cfg = self.config["shift"]["regression"][family]
            folders = [f for _, f in sources_for(cfg["dataset"], self.config["datasets"][cfg["dataset"]],
                                                 None).folders()]
            return Path(self.regression_file(family)).is_file() or any((f / cfg["file"]).is_file()
                                                                      for f in folders)

        return [f for f in self.config["shift"]["regression"] if present(f)]

    def regression_outputs(self, family: str) -> list[str]:
        return [f"{SHIFT_OUT}/{family}/{r}/results_long.parquet"
                for r in self.config["shift"]["regression"][family]["responses"]]

    def shift_verdict_inputs(self, kind: str) -> list[str]:
        """Every family's leaderboard Parquet (``kind`` "leaderboard", the regression families' too) or its
        choice of k's choices ("k_selection")."""
        if kind == "leaderboard":
            return ([f"{SHIFT_OUT}/{f}/results_long.parquet" for f in self.shift_families()]
                    + [p for f in self.regression_families() for p in self.regression_outputs(f)])
        return [f"{SHIFT_OUT}/{f}/k_selection/choices.parquet" for f in self.shift_families()]

    @staticmethod
    def shift_targets(families) -> list[str]:
        return [f"{SHIFT_OUT}/{f}/{name}" for f in families
                for name in ("table.csv", "ranks.csv", "versus.csv", "k_selection/table.csv")]

    def shift_family_targets(self, family: str) -> Callable:
        """The input function of target shift_<family>: an error naming what is missing where no pair has data."""

        def targets(w):
            if not self.shift_feature_sets(family):
                raise WorkflowError(
                    f"shift_{family}: none of the feature sets {self.config['shift']['families'][family]} has data "
                    f"for a configured pair (protocol.pairs: {self.config['protocol']['pairs']}); put the files of "
                    "data/manifests/shift.tsv in a mirror (OTFS_SHIFT_MIRROR) or data/local/shift/")
            return self.shift_targets([family])

        return targets

    def shift_available_targets(self) -> list[str]:
        """What `available` and `shift` build: every family with data, and the verdict over them (none without)."""
        families = self.shift_families()
        regression = [p for f in self.regression_families() for p in self.regression_outputs(f)]
        verdict = ["results/leaderboard/verdict.md"] if families or regression else []
        return self.shift_targets(families) + regression + verdict

    # --- a user's own tables -------------------------------------------------------------------------------
    def user_table_findings(self, inspect_folder) -> tuple[list[str], list[tuple[str, str]]]:
        """A user's tables (a reader with ``inspect()``: otfs.datasets.tabular), read and checked: every bad
        cell or column of every file, and each configured pair's domains (enough samples and classes, labels
        in common). Returns ``(problems, notes)``, a note being ``(feature set, text)``. What was found is
        remembered in ``inspect_folder`` while the files and the reader's parameters stay the same; a feature
        set whose files are not all there is left to `available` (it leaves it out) and `all` (it says
        where to put them)."""
        from otfs_workflow.data.inspection import inspect_files
        from otfs_workflow.protocol import DegenerateDomainError, check_pair

        problems, notes = [], []
        for fs in self.config["feature_sets"]:
            reader = None if self.is_extracted(fs) else self.fs_reader(fs)
            if not hasattr(reader, "inspect"):
                continue
            files = [p for d in self.fs_domains(fs) for p in self.reader_local_files(fs, d)]
            if not all(Path(p).is_file() for p in files):
                continue
            try:
                found = inspect_files(reader, Path(inspect_folder))
            except ValueError as exc:
                problems.append(f"feature set {fs!r}: {exc}")
                continue
            for domain, found_domain in found["domains"].items():
                if found_domain.get("constant") and domain in self.fs_domains(fs):
                    notes.append((fs, f"feature set {fs!r}: domain {domain!r}: {len(found_domain['constant'])} "
                                      f"feature(s) constant there {found_domain['constant']}: they carry nothing in it"))
            for pair in self.fs_pairs(fs):
                s, t = parse_pair(pair)
                src, tgt = found["domains"][s], found["domains"][t]
                try:
                    pair_notes = check_pair(pair, None if src.get("unlabelled") else src["labels"],
                                            None if tgt.get("unlabelled") else tgt["labels"], target_rows=tgt["rows"])
                except DegenerateDomainError as exc:
                    problems.append(f"feature set {fs!r}: {exc}")
                    continue
                notes.extend((fs, f"feature set {fs!r}: {note}") for note in pair_notes)
        return problems, notes


class ScopedCode:
    """A rule's code input where the methods are wildcards: an input function of the job's wildcards.

    Every manifest a job could ask for, one per module that registers a method of the kind (the folder's
    files, an entry point's module, the module of a namespace such as skada:NAME), is written when the
    workflow is parsed (a file written while Snakemake builds the DAG could be missed by its listing of the
    folder, taken once).
    """

    def __init__(self, code: CodeInputs, script: str, methods: Mapping):
        self.code, self.script, self.methods = code, script, dict(methods)
        fixed = {kind: tuple(v) for kind, v in self.methods.items() if not isinstance(v, str)}
        for kind in (kind for kind, v in self.methods.items() if isinstance(v, str)):
            group = CodeInputs.SCOPED_KINDS[kind]
            for module in code.plan.registry_origins(group):
                code.manifest(script, _key({**code.modules_of(fixed), group: [module]}))

    def __call__(self, wildcards) -> str:
        names = {kind: [wildcards[v]] if isinstance(v, str) else list(v) for kind, v in self.methods.items()}
        return self.code.manifest(self.script, _key(self.code.modules_of(names)))


def _key(plugins: Mapping) -> tuple:
    return tuple(sorted((g, tuple(sorted(set(m)))) for g, m in plugins.items()))


class CodeInputs:
    """The rules' code inputs: the code manifest of each script and set of methods.

    Snakemake does not follow a script's imports, so each rule depends on the library files its script
    imports, transitively, derived from the code (:mod:`otfs_workflow.codedeps`: every import, at module
    level and inside functions), never kept by hand, and listed with their content's digest in one file under
    ``.snakemake/otfs-code/``, rewritten when parsing finds that an edit changed it. Of the rankers' and the
    adapters' folders, only the files of the methods a job runs count.

    Parameters
    ----------
    repo : path
        The repository (its packages, :func:`otfs_workflow.codedeps.package_dirs`, and ``workflow/scripts``).
    plan : Plan
        Answers which module registers each method.
    write : bool
        Whether this process writes the manifests (the one that schedules jobs); another reads them.
    """

    #: The registries whose methods a rule names, by the keyword :meth:`script_code` takes.
    SCOPED_KINDS = {"rankers": "otfs.rankers", "adapters": "otfs.adapters"}

    def __init__(self, repo, plan: Plan, write: bool):
        repo = Path(repo)
        from otfs_workflow.codedeps import package_dirs

        self.package_dirs = package_dirs(repo)
        self.scripts_dir = repo / "workflow" / "scripts"
        self.scripts = {p.name for p in self.scripts_dir.glob("*.py")}
        self.plan, self.write = plan, write
        self._manifests: dict = {}
        self._states: tuple | None = None

    def script_code(self, script: str, **methods):
        """The code manifest of ``workflow/scripts/<script>``: a rule's ``code`` input.

        ``rankers=`` and ``adapters=`` name the methods whose files count, as a wildcard
        (``rankers="ranker"``: the job's own; the input is then a :class:`ScopedCode`) or a list of names. So
        a new ranker file reruns no existing job, and an edit of one adapter reruns that adapter's jobs alone.
        Each job imports those files first, and checks at its end that every module it ran is among the files
        listed (otfs_workflow.stages.job): a job that loads a method it did not name fails, naming the module.
        """
        if script not in self.scripts:
            raise WorkflowError(f"script_code({script!r}): no workflow/scripts/{script}")
        unknown = sorted(set(methods) - set(self.SCOPED_KINDS))
        if unknown:
            raise WorkflowError(f"script_code({script!r}): unknown keyword {unknown}; use {sorted(self.SCOPED_KINDS)}")
        if any(isinstance(v, str) for v in methods.values()):
            return ScopedCode(self, script, methods)
        return self.manifest(script, _key(self.modules_of(methods)))

    def modules_of(self, methods: Mapping) -> dict:
        """``{registry group: [module, ...]}`` of ``{kind: [method name, ...]}``."""
        out = {}
        for kind, names in methods.items():
            group = self.SCOPED_KINDS[kind]
            out[group] = sorted({self.plan.registry_origin(group, n) for n in names})
        return out

    def manifest(self, script: str, plugins: tuple) -> str:
        """The path of the manifest of ``script`` with the plug-in modules ``plugins`` (written once)."""
        from otfs_workflow.codedeps import scoped_manifest, source_states

        if (script, plugins) not in self._manifests:
            if self._states is None:  # one walk of the packages' files for every manifest of this parse
                self._states = source_states(self.package_dirs)
            self._manifests[script, plugins] = str(scoped_manifest(
                self.scripts_dir / script, self.package_dirs, {group: list(modules) for group, modules in plugins},
                write=self.write, states=self._states))
        return self._manifests[script, plugins]


def check_rule_conventions(rules) -> None:
    """Raise a WorkflowError listing every :func:`rule_convention_problems` of ``rules``, if any."""
    problems = rule_convention_problems(rules)
    if problems:
        raise WorkflowError("workflow conventions broken:\n" + "\n".join(problems))


def rule_convention_problems(rules, content_addressed=CONTENT_ADDRESSED_RULES) -> list[str]:
    """What breaks the conventions every rule follows: a rule with a script lists that script's code manifest
    as its ``code`` input (``content_addressed`` rules aside), and every benchmark file lies under
    ``logs/benchmarks/<rule>/`` (otfs_workflow.cluster maps a file to its rule by it). ``rules``: Snakemake's
    rule objects (``name``, ``benchmark``, ``script``, ``input``)."""
    problems = []
    for r in rules:
        if r.benchmark is not None and not str(r.benchmark).startswith(f"logs/benchmarks/{r.name}/"):
            problems.append(f"rules.{r.name}: benchmark {r.benchmark} is not under logs/benchmarks/{r.name}/")
        if not r.script or r.name in content_addressed:
            continue
        script = Path(r.script).name
        if "code" not in r.input.keys():
            if not any(callable(f) for f in r.input):  # an unpacked input function may give it: the tests check
                problems.append(f'rules.{r.name}: no code input; write code=script_code("{script}")')
            continue
        declared = r.input.get("code")
        if isinstance(declared, ScopedCode):
            if declared.script != script:
                problems.append(f"rules.{r.name}: its code input is the code manifest of {declared.script}, "
                                f'not of its script {script}; write code=script_code("{script}", ...)')
            continue
        declared = {str(declared)} if isinstance(declared, str) else {str(f) for f in declared}
        if not declared or not all(Path(d).name.split("@")[0].removesuffix(".json") == script for d in declared):
            problems.append(f"rules.{r.name}: its code input is not the code manifest of {script}; "
                            f'write code=script_code("{script}")')
    return problems
