"""The order the main job runs in: the paper's reproduction first, the images' multi-thread jobs never
starved. The rules' priorities and threads are read from the parsed workflow; the order is simulated with
Snakemake's own schedulers, job by job: ilp (its default, which picks the jobs of the largest sum of
priorities) and greedy (which takes them by priority)."""

from __future__ import annotations

import heapq
import logging
import os

import pytest

from .conftest import REPO, mirror_dir

IMAGE_RULES = ("acquire_images", "extract_features")

# PuLP 3.3 warns at every variable and solver Snakemake's ilp scheduler builds (its API moves in PuLP 4)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pulp.*")


@pytest.fixture(scope="module")
def rules() -> dict[str, tuple[int, int]]:
    """Each rule's (priority, threads) as the workflow declares them."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, Quietness, ResourceSettings

    saved, cwd = dict(os.environ), os.getcwd()
    os.environ["OTFS_DATA_MIRROR"] = str(mirror_dir())
    os.chdir(REPO)
    try:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            workflow = api.workflow(resource_settings=ResourceSettings(cores=2), snakefile=REPO / "Snakefile")
            return {r.name: (r.priority, r.resources["_cores"].value) for r in workflow._workflow.rules}
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


class _File(str):
    def is_flagged(self, flag):
        return False


class _Job:
    """What Snakemake's scheduler reads of a job."""

    def __init__(self, name, priority, threads, seconds, input_bytes, after=None):
        self.name, self.priority, self.seconds, self.after = name, priority, seconds, after
        self.threads = threads
        self.input = [_File(f"{name} input")]
        self.input_bytes = input_bytes
        self.scheduler_resources = {}

    def __repr__(self):
        return self.name


def _simulate(jobs: list[_Job], cores: int, kind: str) -> dict[str, float]:
    """Each job's start time under Snakemake's scheduler ``kind`` (``ilp`` or ``greedy``), rounds run
    whenever a job ends."""
    from snakemake.scheduling import greedy, milp

    log = logging.getLogger("test")
    fallback = greedy.Scheduler(None, greedy.SchedulerSettings(), log)
    scheduler = milp.Scheduler(None, milp.SchedulerSettings(), log) if kind == "ilp" else fallback
    for job in jobs:
        job.scheduler_resources = {"_cores": min(job.threads, cores), "_nodes": 1}
    now, free, start, running, done = 0.0, cores, {}, [], set()
    while len(start) < len(jobs):
        ready = [j for j in jobs if j.name not in start and (j.after is None or j.after in done)]
        sizes = {j.input[0]: j.input_bytes for j in ready}
        if free == 0:  # Snakemake selects nothing then
            chosen = []
        else:  # where ilp selects nothing (None), Snakemake asks greedy
            chosen = scheduler.select_jobs(ready, ready, {"_cores": free, "_nodes": len(jobs)}, sizes)
            if chosen is None:
                chosen = fallback.select_jobs(ready, ready, {"_cores": free, "_nodes": len(jobs)}, sizes)
        for job in chosen:
            start[job.name] = now
            free -= job.scheduler_resources["_cores"]
            heapq.heappush(running, (now + job.seconds, job.name, job.scheduler_resources["_cores"]))
        assert free >= 0
        now, name, threads = heapq.heappop(running)
        done.add(name)
        free += threads
    return start


def _main_job(rules, domains=4, paper=40, others=400):
    """The image jobs of ``domains`` domains beside ``paper`` 1-thread paper jobs and ``others`` 1-thread jobs
    of the families' grid, all ready at the start; the 1-thread jobs take staggered times, so that the
    cores free one at a time (as in a run of the families' grid). The scheduler breaks a tie of priorities
    by the size of the inputs: an image job reads a manifest (kilobytes), the others feature caches."""
    (p_acq, t_acq), (p_ext, t_ext) = rules["acquire_images"], rules["extract_features"]
    p_paper = rules["make_table2"][0]
    jobs = []
    for d in range(domains):
        jobs.append(_Job(f"acquire_images {d}", p_acq, t_acq, 1.0, 10**5))
        jobs.append(_Job(f"extract_features {d}", p_ext, t_ext, 15.0, 10**5, after=f"acquire_images {d}"))
    jobs += [_Job(f"paper {i}", p_paper, 1, 3.0 + (i % 7) / 3, 10**6) for i in range(paper)]
    jobs += [_Job(f"grid {i}", 0, 1, 20.0 + (i % 11) / 2, 10**7) for i in range(others)]
    return jobs


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["ilp", "greedy"])
@pytest.mark.parametrize("cores", [1, 2, 16])
def test_the_image_jobs_wait_for_no_one_thread_job(rules, cores, kind):
    """The images' extraction (needed by Tables 2 and 6 and the comparison) starts as soon as its acquisition
    ends; without PRIORITY_IMAGES, or with more threads than acquire_images frees, a stream of 1-thread jobs
    holds the cores one at a time and the extraction waits for the end of the run. Under ilp, a priority
    above the paper's by one is not enough: two 1-thread paper jobs on 2 cores outweigh one image job."""
    jobs = _main_job(rules)
    start = _simulate(jobs, cores, kind)
    ends = {j.name: start[j.name] + j.seconds for j in jobs}
    image_jobs = [j for j in jobs if j.name.split()[0] in IMAGE_RULES]
    last_image_start = max(start[j.name] for j in image_jobs)
    # only image jobs run until the last of them has started, on a machine of any size
    assert all(start[j.name] >= last_image_start for j in jobs if j not in image_jobs)
    # the paper's 1-thread jobs all start before the first job of the grid
    first_grid = min(start[j.name] for j in jobs if j.name.startswith("grid"))
    assert all(start[j.name] <= first_grid for j in jobs if j.name.startswith("paper"))
    if cores == 16:  # the four domains' images take 16 cores at the start, their extractions the cores freed
        assert all(start[f"acquire_images {d}"] == 0.0 for d in range(4))
        assert all(start[f"extract_features {d}"] == ends[f"acquire_images {d}"] for d in range(4))


def test_the_images_outrank_every_other_rule_and_extraction_fits_in_acquisitions_threads(rules):
    top = max(priority for priority, _ in rules.values())
    assert all(rules[name][0] == top for name in IMAGE_RULES)
    # ilp: one image job outweighs the 1-thread jobs of the highest other priority on the cores it takes
    second = max(priority for name, (priority, _) in rules.items() if name not in IMAGE_RULES)
    assert top > second * rules["acquire_images"][1]
    assert all(priority < top for name, (priority, _) in rules.items() if name not in IMAGE_RULES)
    assert rules["extract_features"][1] <= rules["acquire_images"][1]
    # every other rule of more than one thread is a benchmark's (workflow/rules/benchmarks.smk), run on its own
    benchmarks = (REPO / "workflow/rules/benchmarks.smk").read_text()
    many_threads = {name for name, (_, threads) in rules.items() if threads > 1} - set(IMAGE_RULES)
    assert many_threads and all(f"rule {name}:" in benchmarks for name in many_threads), many_threads
