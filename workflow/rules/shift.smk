# The shift data families (docs/data-families.md; config `shift`): the
# leaderboard's rankers and adapters (config `leaderboard`) on each family's
# feature sets, on the grid `grids.leaderboard`, compared per family by the
# leaderboard's own stage: tables, average ranks with Friedman's and Nemenyi's
# tests, the reference ranker against each other one, a critical-difference
# diagram and the tidy Parquet results, in results/shift/<family>/.


SHIFT_CONFIG = config["shift"]

# A family's feature sets are configured ones: otfs_workflow.config.validate_config checks it
# when the workflow is parsed, before any rule is made.


# The families' feature sets, the leaderboard's rankers, and its adapters that apply to
# every one of them: rule run_family_pair runs these in its jobs of each (feature set, pair).
FAMILY_FEATURE_SETS = sorted(shift_family_feature_sets())
FAMILY_RANKERS = list(LEADERBOARD_CONFIG["rankers"])
FAMILY_ADAPTERS = P.common_adapters(FAMILY_FEATURE_SETS, LEADERBOARD_CONFIG["adapters"])


# The families' pair rules by name, each with its adapters, its share of the rankers and its feature sets
# (otfs_workflow.plan.Plan.family_pair_rules; config `shift.rankers_per_job`).
FAMILY_PAIR_RULES = P.family_pair_rules(
    FAMILY_FEATURE_SETS, FAMILY_RANKERS, LEADERBOARD_CONFIG["adapters"]
)


# A regression family's dataset is configured, and its name is not a classification family's:
# otfs_workflow.config.validate_config checks it.
SHIFT_REGRESSION = SHIFT_CONFIG.get("regression", {})


# The families' inputs and targets (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
shift_feature_sets, shift_families = P.shift_feature_sets, P.shift_families
regression_file, regression_families = P.regression_file, P.regression_families
regression_outputs, shift_verdict_inputs = P.regression_outputs, P.shift_verdict_inputs
shift_targets, shift_available_targets = P.shift_targets, P.shift_available_targets
shift_family_targets = P.shift_family_targets
# A family's report outputs: results/shift/<family>/<name>.<ext>, captioned by workflow/report/leaderboard_<name>.rst.
shift_report = reporter(
    f"{SHIFT_OUT}/{{family}}", "Data families", "leaderboard_", "{family}"
)


# The rankers that read class labels, each asked with its parameters (a regression
# family leaves them out; its source-only relevance ranking is the stage's own
# `source-correlation`), and the adapters that need none.
CLASS_RANKERS = tuple(
    r for r in LEADERBOARD_CONFIG["rankers"] if ranker_needs_class_labels(r)
)
REGRESSION_ADAPTERS = ("NA", "SA", "CORAL", "TCA")


# One data family's (feature set, pair) in one job, for every ranker of `leaderboard.rankers`
# (FAMILY_RANKERS), or in a few jobs, each for a contiguous share of them (config
# `shift.rankers_per_job`): each ranker's ranking, its curves under every adapter of
# `leaderboard.adapters` that applies to the feature set and the label-free scores of the
# choice of k. It writes the same files as rank_features, one classify job per adapter and
# score_model_selection would, with the same parameters. One rule per set of adapters and share
# of the rankers (FAMILY_PAIR_RULES, otfs_workflow.plan.Plan.family_pair_rules): run_family_pair
# runs the adapters that apply to all the families' feature sets (FAMILY_ADAPTERS),
# run_family_pair_with_ot3 adds OT3 where it applies (WiFi, wine, landmine); an adapter that the
# choice of k scores too (OT3) adapts each point once for the curve and the scores. Why several
# rankers in one job: a job's imports take 3 to 6 s, while a small family's pair computes for
# well under a second per ranker (heart disease: 6.6 s per (ranker, pair) job for about 0.5 s of
# work), and the shift test of the choice of k, the same for every ranker, runs once per
# iteration of a job. Why a share of them on Amazon 5,000: its pair takes about 4 minutes of one
# core for 14 rankers, the longest chain of the plan. A pair in shares reads the points of all
# features of its curves and its choice of k (with the shift test's choices) from one job each
# (Plan.family_pair_ends) instead of computing them in every share. The trade: an edit of a
# ranker reruns its share of the families' pairs, one of an adapter or a scorer every ranker's.
for _rule, _job in FAMILY_PAIR_RULES.items():

    rule:
        name:
            _rule
        input:
            unpack(P.family_pair_ends(_job)),
            caches=pair_caches,
            code=script_code(
                "family_pair.py",
                rankers=_job.rankers,
                adapters=sorted(
                    set(_job.adapters) | set(MODEL_SELECTION_CONFIG["adapters"])
                ),
            ),
        output:
            json=expand(
                "results/runs/{{feature_set}}/ranking/{ranker}/{{pair}}.json",
                ranker=_job.rankers,
            ),
            tsv=expand(
                "results/runs/{{feature_set}}/classification/{ranker}/{adapter}/{grid}/{{pair}}.tsv",
                ranker=_job.rankers,
                adapter=_job.adapters,
                grid=SHIFT_CONFIG["grid"],
            ),
            scores=expand(
                "results/runs/{{feature_set}}/model_selection/{ranker}/{grid}/{{pair}}.tsv",
                ranker=_job.rankers,
                grid=MODEL_SELECTION_CONFIG["grid"],
            ),
        log:
            f"logs/shift/pairs/{{feature_set}}/{{pair}}{_job.part}.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{feature_set}}/{{pair}}.tsv"
        wildcard_constraints:
            feature_set="|".join(re.escape(fs) for fs in _job.feature_sets),
        conda:
            "../../envs/otfs.yaml"
        threads: 1
        # Measured with 14 rankers (4 adapters, 5 iterations, two jobs on 2 cores; 2026-11-27):
        # 22 s (heart disease) to 565 s on average, 642 s at most (Amazon reviews, 5,000
        # words), 1,283 MB; the requests are 3x and 1.5x (docs/cluster.md). An Amazon 5,000
        # pair alone on one core (2026-12-04): 219 s in one job; 77, 77 and 82 s in three
        # (rankers_per_job 5), 1,341 MB at most (the share with hsic-lasso). Its jobs one
        # after another on one core (2026-12-06): 240-267 s in one job; in seven
        # (rankers_per_job 2) 37, 33, 30, 42, 26, 61 (rulsif, hsic-lasso) and 30 s, after 10 s
        # and 8 s for the points of all features. WiFi t1-t3 (with OT3): 51 and 57 s in two
        # (rankers_per_job 7). A 20 Newsgroups pair in one job, two jobs on 2 cores
        # (2026-12-07): 64-72 s; 85-90 s in two (rankers_per_job 7) with its two jobs of the
        # points of all features.
        resources:
            mem_mb=2304,
            runtime=33,
        params:
            **curves_job_params(_job.adapters, SHIFT_CONFIG["grid"], "curves_"),
            **model_selection_job_params(MODEL_SELECTION_CONFIG["grid"], "ms_"),
            rankers=_job.rankers,
            rank_ranker_params=lambda w, _r=_job.rankers: {
                r: ranker_params(r) for r in _r
            },
            rank_per_class=lambda w: pair_source_per_class(w.pair, w.feature_set),
            rank_iterations=lambda w: ranking_iterations(w.feature_set),
            grid=SHIFT_CONFIG["grid"],
        script:
            "../scripts/family_pair.py"

    # `ruleorder:` takes literal names; these rules' names come from the configuration
    workflow.ruleorder(_rule, "rank_features")
    workflow.ruleorder(_rule, "classify_leaderboard_adapters", "classify")
    workflow.ruleorder(_rule, "score_model_selection")


# The points of all features on the families' grid of one (feature set, pair) whose pair
# is split in several jobs (config `shift.rankers_per_job`), under the adapters of its
# pair rule, on each iteration's source subset: what each of those jobs would compute
# alike, computed once (otfs_workflow.plan.Plan.family_ends_rules); the choice of k's are
# rule score_model_selection_all_features'. A pair in one job computes both itself.
for _rule, _ends in P.family_ends_rules(FAMILY_PAIR_RULES).items():

    rule:
        name:
            _rule
        input:
            caches=pair_caches,
            code=script_code("classification_all_features.py", adapters=_ends.adapters),
        output:
            json="results/runs/{feature_set}/all_features/{grid}/{pair}.families.json",
        log:
            "logs/classification/{feature_set}/all_features/{grid}/{pair}.families.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{feature_set}}/{{grid}}/{{pair}}.tsv"
        wildcard_constraints:
            feature_set="|".join(re.escape(fs) for fs in _ends.feature_sets),
            grid=re.escape(SHIFT_CONFIG["grid"]),
        conda:
            "../../envs/otfs.yaml"
        threads: 1
        resources:
            mem_mb=1024,
            runtime=5,
        params:
            **P.all_features_job_params(_ends.adapters),
        script:
            "../scripts/classification_all_features.py"


# A data family's feature set's aggregates, every (ranker, adapter) of run_family_pair in
# one job: each writes what rule aggregate writes for it. Why: an aggregate takes about
# 1.3 s, nearly all of it the interpreter and imports, and a family's grid has 28 per
# feature set (427 in all). OT3's, where it applies, stay rule aggregate's.
if FAMILY_ADAPTERS:

    rule aggregate_family:
        input:
            runs=batch_aggregate_tables(FAMILY_RANKERS, FAMILY_ADAPTERS),
            caches=aggregate_caches,
            code=script_code("aggregation_batch.py"),
        output:
            long=batch_aggregate_outputs("long.tsv", FAMILY_RANKERS, FAMILY_ADAPTERS),
            per_pair=batch_aggregate_outputs(
                "per_pair.tsv", FAMILY_RANKERS, FAMILY_ADAPTERS
            ),
            summary=batch_aggregate_outputs(
                "summary.tsv", FAMILY_RANKERS, FAMILY_ADAPTERS
            ),
            provenance=batch_aggregate_outputs(
                "provenance.json", FAMILY_RANKERS, FAMILY_ADAPTERS
            ),
        log:
            "logs/aggregation/{feature_set}/{scope}/family_{grid}.log",
        benchmark:
            "logs/benchmarks/aggregate_family/{feature_set}/{scope}/{grid}.tsv"
        wildcard_constraints:
            feature_set="|".join(re.escape(fs) for fs in FAMILY_FEATURE_SETS),
            grid=re.escape(SHIFT_CONFIG["grid"]),
        conda:
            "../../envs/otfs.yaml"
        threads: 1
        # Measured: about 8 s for a family's 28 aggregates of 12 pairs.
        resources:
            mem_mb=1024,
            runtime=5,
        params:
            runs=batch_aggregate_params(FAMILY_RANKERS, FAMILY_ADAPTERS),
        script:
            "../scripts/aggregation_batch.py"

    ruleorder: aggregate_family > aggregate

    localrules:
        aggregate_family,


rule make_shift_family:
    input:
        aggregates=lambda w: P.shift_inputs("aggregates", w.family),
        rankings=lambda w: P.shift_inputs("rankings", w.family),
        recovery="results/shift_recovery/runs.csv",
        code=script_code("leaderboard.py"),
    output:
        parquet=f"{SHIFT_OUT}/{{family}}/results_long.parquet",
        table_csv=shift_report("table", "csv"),
        table_md=f"{SHIFT_OUT}/{{family}}/table.md",
        table_tex=f"{SHIFT_OUT}/{{family}}/table.tex",
        ranks_csv=shift_report("ranks", "csv"),
        ranks_md=f"{SHIFT_OUT}/{{family}}/ranks.md",
        ranks_tex=f"{SHIFT_OUT}/{{family}}/ranks.tex",
        posthoc=f"{SHIFT_OUT}/{{family}}/posthoc.csv",
        versus_csv=shift_report("versus", "csv"),
        versus_md=f"{SHIFT_OUT}/{{family}}/versus.md",
        versus_tex=f"{SHIFT_OUT}/{{family}}/versus.tex",
        cd_pdf=f"{SHIFT_OUT}/{{family}}/cd.pdf",
        cd_png=shift_report("cd", "png"),
        heatmap_pdf=f"{SHIFT_OUT}/{{family}}/heatmap.pdf",
        heatmap_png=f"{SHIFT_OUT}/{{family}}/heatmap.png",
        recovery_pdf=f"{SHIFT_OUT}/{{family}}/recovery.pdf",
        recovery_png=f"{SHIFT_OUT}/{{family}}/recovery.png",
        provenance=f"{SHIFT_OUT}/{{family}}/provenance.json",
    log:
        "logs/shift/{family}.log",
    benchmark:
        "logs/benchmarks/make_shift_family/{family}.tsv"
    wildcard_constraints:
        family="|".join(re.escape(f) for f in SHIFT_CONFIG["families"]),
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured: the leaderboard's stage, about 10 s and 300 MB for four small families.
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        n_features=lambda w: {
            fs: fs_n_features(fs) for fs in shift_feature_sets(w.family)
        },
        fraction=lambda w: {
            fs: counts(fs, [LEADERBOARD_CONFIG["fraction"]])[0]
            for fs in shift_feature_sets(w.family)
        },
        alpha=LEADERBOARD_CONFIG["alpha"],
        reference=LEADERBOARD_CONFIG["reference"],
        leaderboard=LEADERBOARD_CONFIG,
        grid=lambda w: grid_config(SHIFT_CONFIG["grid"]),
        iterations=ITERATIONS,
    script:
        "../scripts/leaderboard.py"


rule make_shift_k_selection:
    input:
        tables=lambda w: P.shift_inputs("k_selection", w.family),
        code=script_code("model_selection.py"),
    output:
        choices=f"{SHIFT_OUT}/{{family}}/k_selection/choices.parquet",
        summary_csv=f"{SHIFT_OUT}/{{family}}/k_selection/summary.csv",
        summary_md=f"{SHIFT_OUT}/{{family}}/k_selection/summary.md",
        table_csv=f"{SHIFT_OUT}/{{family}}/k_selection/table.csv",
        table_md=f"{SHIFT_OUT}/{{family}}/k_selection/table.md",
        regret_pdf=f"{SHIFT_OUT}/{{family}}/k_selection/regret.pdf",
        regret_png=f"{SHIFT_OUT}/{{family}}/k_selection/regret.png",
        provenance=f"{SHIFT_OUT}/{{family}}/k_selection/provenance.json",
    log:
        "logs/shift/{family}_k_selection.log",
    benchmark:
        "logs/benchmarks/make_shift_k_selection/{family}.tsv"
    wildcard_constraints:
        family="|".join(re.escape(f) for f in SHIFT_CONFIG["families"]),
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured: like make_model_selection, a few seconds per family.
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        model_selection=MODEL_SELECTION_CONFIG,
        grid=lambda w: grid_config(MODEL_SELECTION_CONFIG["grid"]),
    script:
        "../scripts/model_selection.py"


rule make_shift_regression:
    input:
        mat=lambda w: regression_file(w.family),
        code=script_code(
            "regression.py",
            adapters=[
                a for a in LEADERBOARD_CONFIG["adapters"] if a in REGRESSION_ADAPTERS
            ],
            rankers=[
                r for r in LEADERBOARD_CONFIG["rankers"] if r not in CLASS_RANKERS
            ],
        ),
    output:
        parquet=f"{SHIFT_OUT}/{{family}}/{{response}}/results_long.parquet",
        table_csv=f"{SHIFT_OUT}/{{family}}/{{response}}/table.csv",
        provenance=f"{SHIFT_OUT}/{{family}}/{{response}}/provenance.json",
    log:
        "logs/shift/{family}_{response}.log",
    benchmark:
        "logs/benchmarks/make_shift_regression/{family}/{response}.tsv"
    wildcard_constraints:
        family="|".join(re.escape(f) for f in SHIFT_REGRESSION) or "^$",
        response="|".join(
            re.escape(r) for c in SHIFT_REGRESSION.values() for r in c["responses"]
        )
        or "^$",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured: 1 response, 6 pairs, 2 repetitions, 7 rankers, 4 adapters: 118 s on
    # 2 cores shared with 2 other jobs.
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        rankers=lambda w: {
            r: ranker_params(r)
            for r in LEADERBOARD_CONFIG["rankers"]
            if r not in CLASS_RANKERS
        },
        adapters=lambda w: {
            a: adapter_params(a)
            for a in LEADERBOARD_CONFIG["adapters"]
            if a in REGRESSION_ADAPTERS
        },
        counts=lambda w: grid_config(SHIFT_CONFIG["grid"])["feature_counts"],
        iterations=lambda w: SHIFT_REGRESSION[w.family].get("iterations", 5),
        selection_rules=MODEL_SELECTION_CONFIG["rules"],
    script:
        "../scripts/regression.py"


rule make_shift_verdict:
    input:
        leaderboards=lambda w: shift_verdict_inputs("leaderboard"),
        k_selection=lambda w: shift_verdict_inputs("k_selection"),
        recommend=f"{RECOMMEND_OUT}/tasks.csv",
        code=script_code("verdict.py"),
    output:
        md="results/leaderboard/verdict.md",
        csv=report(
            "results/leaderboard/verdict.csv",
            caption="../report/verdict.rst",
            category="Data families",
            subcategory="verdict",
        ),
        k_csv="results/leaderboard/verdict_k.csv",
        versus_csv="results/leaderboard/verdict_versus.csv",
        pdf="results/leaderboard/verdict.pdf",
        png=report(
            "results/leaderboard/verdict.png",
            caption="../report/verdict.rst",
            category="Data families",
            subcategory="verdict",
        ),
        cd_pdf="results/leaderboard/verdict_cd.pdf",
        cd_png=report(
            "results/leaderboard/verdict_cd.png",
            caption="../report/verdict.rst",
            category="Data families",
            subcategory="verdict",
        ),
        provenance="results/leaderboard/verdict_provenance.json",
        # the table at a glance, for the report's landing page (workflow/report/workflow.rst)
        glance=report(
            "results/leaderboard/verdict_glance.rst",
            caption="../report/glance.rst",
            category="At a glance",
        ),
    log:
        "logs/shift/verdict.log",
    benchmark:
        "logs/benchmarks/make_shift_verdict/verdict.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        families=lambda w: {
            **{f: shift_feature_sets(f) for f in shift_families()},
            **{
                f: [f"{f}_{r}" for r in SHIFT_REGRESSION[f]["responses"]]
                for f in regression_families()
            },
        },
        leaderboards=lambda w: {
            **{f: [f"{SHIFT_OUT}/{f}/results_long.parquet"] for f in shift_families()},
            **{f: regression_outputs(f) for f in regression_families()},
        },
        n_features=lambda w: {
            **{
                fs: fs_n_features(fs)
                for f in shift_families()
                for fs in shift_feature_sets(f)
            },
            **{
                f"{f}_{r}": get_reader(
                    SHIFT_REGRESSION[f]["dataset"], {"response": r}
                ).n_features
                for f in regression_families()
                for r in SHIFT_REGRESSION[f]["responses"]
            },
        },
        protocol=lambda w: {
            fs: {
                k: fs_config(fs).get(k)
                for k in ("source_per_class", "max_samples", "reader", "preprocessing")
            }
            for f in shift_families()
            for fs in shift_feature_sets(f)
        },
        # the paper's ranker: the first of `leaderboard.reference`
        reference=references(LEADERBOARD_CONFIG["reference"])[0],
        relevance=["source-anova", "source-correlation"],
        per_feature=["wasserstein1d", "ks", "mmd", "domain-auc", "fmmd"],
        alpha=LEADERBOARD_CONFIG["alpha"],
        adapters=LEADERBOARD_CONFIG["adapters"],
        primary_metrics=SHIFT_CONFIG["primary_metrics"],
    script:
        "../scripts/verdict.py"


# --- targets -------------------------------------------------------------------
localrules:
    make_shift_family,
    make_shift_regression,
    make_shift_k_selection,
    make_shift_verdict,


# One target per family, shift_<family> (e.g. shift_wine), and `shift` for every
# family with data present and the verdict over them; `available` builds the same.
for _family in SHIFT_CONFIG["families"]:

    rule:
        name:
            f"shift_{_family}"
        input:
            shift_family_targets(_family),


rule shift:
    input:
        lambda w: shift_available_targets(),
