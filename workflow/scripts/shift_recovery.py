"""Snakemake wrapper of otfs_workflow.stages.shift_recovery (rules shift_recovery_run, make_shift_recovery_table)."""

from otfs_workflow.provenance import provenance_record
from otfs_workflow.stages import job, shift_recovery, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "shift_recovery", code=sm.input.code):
    if sm.rule == "shift_recovery_run":
        shift_recovery.run(
            rankers=sm.params.rankers,
            ranker_params=sm.params.ranker_params,
            data_params=sm.params.data,
            seeds=sm.params.seeds,
            output=sm.output.csv,
        )
    elif sm.rule == "make_shift_recovery_table":
        cfg = sm.params.config
        shift_recovery.table(
            runs_path=sm.input.runs,
            outputs=dict(sm.output.items()),
            provenance=provenance_record(inputs=[sm.input.runs], params={"shift_recovery": cfg}, config=sm.config),
            caption=(f"Recovery of planted shifts: fraction of each kind's planted features among the last-ranked "
                     f"({cfg['data']['per_kind']} per kind, {cfg['data']['n_features']} features, "
                     f"mean ± std over {cfg['seeds']} seeds)."),
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
