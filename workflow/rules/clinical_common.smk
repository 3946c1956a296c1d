# The clinical experiment's configuration handle and input functions (its rules: clinical.smk).

CLINICAL_REPETITIONS = list(range(config["clinical"]["iterations"]))
CLINICAL_SOURCE = (
    "synthetic data, otfs.datasets.make_clinical_data"
    if config["clinical"]["data"] == "synthetic"
    else config["clinical"]["data"]
)
CLINICAL_TARGETS = {
    "table4": [f"results/clinical/table4/table4.{e}" for e in ("csv", "md", "tex")],
    "figure3": [f"results/clinical/figure3/figure3.{e}" for e in ("pdf", "png", "csv")],
    "figure4": [f"results/clinical/figure4/figure4.{e}" for e in ("pdf", "png", "csv")],
}


def _check_clinical_data():
    """Name a missing voxel table, and feature counts beyond its width, before anything runs."""
    cfg = config["clinical"]
    data = cfg["data"]
    if data != "synthetic" and not Path(data).is_file():
        raise WorkflowError(
            f"clinical.data: voxel table {data!r} not found (or set it to 'synthetic')"
        )
    if data == "synthetic":
        d, where = cfg["synthetic"]["n_features"], "clinical.synthetic.n_features"
    else:
        d, where = voxel_table_width(data), f"the feature columns of {data}"
    check_clinical_counts(cfg["feature_counts"], d, f"d = {d}, {where}")


_check_clinical_data()
