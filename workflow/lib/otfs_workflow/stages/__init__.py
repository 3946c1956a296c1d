"""Stage runners: one module per pipeline stage, named like its rule and script.

Each ``run`` function reads its inputs from files, calls the algorithms of
the library, and writes its outputs atomically. The Snakemake scripts in
``workflow/scripts/`` only unpack the ``snakemake`` object and call these,
so every stage can also be run and tested without Snakemake.
"""

import builtins
import contextlib
import logging
import os
import sys
import threading
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

__all__ = ["JOB_TIMES_COLUMNS", "JOB_TIMES_ENV", "POT_OPTIONAL_BACKENDS", "PYMANOPT_OPTIONAL_BACKENDS", "JobPairs",
           "check_code_inputs", "domain_caches", "import_pymanopt_alone", "job", "load_plugins", "snakemake_object",
           "source_classes"]

#: The environment variable that names a file to which every job appends one line of :data:`JOB_TIMES_COLUMNS`
#: (``otfs_benchmarks.main_job`` sets it to measure the jobs' overhead); unset, nothing is written.
JOB_TIMES_ENV = "OTFS_JOB_TIMES"
#: A job's line in that file (seconds, tab-separated):
#: ``name``; ``before_s``, from the process's start to the job's code (the interpreter, Snakemake's script
#: preamble, the script's imports, the job's logging and plug-in set-up); ``imports_s``, the imports made while
#: the job's code ran (the outermost ``import`` statements, each with the modules it loads); ``after_s``, the
#: check of the code inputs; ``body_s``, the job's code, its imports included.
JOB_TIMES_COLUMNS = ("name", "before_s", "imports_s", "after_s", "body_s")

#: POT's switches for its optional array backends. The stages pass POT NumPy
#: arrays only, yet ``import ot`` imports torch when it is installed (it is,
#: for the feature extraction): measured 1.2 s and 180 MB of every job that
#: imported POT. The pipeline turns them off before any stage imports POT;
#: a value already set in the environment wins, and ``import otfs`` alone
#: (the library) changes nothing.
POT_OPTIONAL_BACKENDS = (
    "POT_BACKEND_DISABLE_PYTORCH", "POT_BACKEND_DISABLE_JAX",
    "POT_BACKEND_DISABLE_CUPY", "POT_BACKEND_DISABLE_TENSORFLOW",
)
for _key in POT_OPTIONAL_BACKENDS:
    os.environ.setdefault(_key, "1")

#: pymanopt's optional array backends. ``import pymanopt`` imports every one of them that is installed, and has
#: no switch like POT's; PyTorch is installed for the feature extraction, and took 1.3 to 2.5 s of every job
#: that fits WDA, whose objective and gradient go to pymanopt as NumPy functions. A job whose code includes
#: WDA imports pymanopt without them (:func:`import_pymanopt_alone`).
PYMANOPT_OPTIONAL_BACKENDS = ("torch", "jax", "tensorflow")
#: The library module whose jobs fit WDA with pymanopt (``otfs.reducers._wda``), as a code manifest names it.
_WDA_MODULE = ("otfs", "reducers", "_wda.py")


def snakemake_object():
    """The ``snakemake`` object of the running job: what Snakemake's script preamble defines in the script
    it runs (``__main__``). The scripts of ``workflow/scripts/`` take it from here, so that they are plain
    Python to a linter (no undefined name, no ``noqa``)."""
    import __main__

    try:
        return __main__.snakemake
    except AttributeError:
        raise RuntimeError("no Snakemake job here: the scripts of workflow/scripts run through a rule's "
                           "script: directive, which defines `snakemake`") from None


@contextlib.contextmanager
def job(log_path=None, threads: int = 1, name: str = "otfs", code=None):
    """Context of one pipeline job: logging to ``log_path`` and a thread cap.

    The BLAS/OpenMP pools are limited to the job's ``threads``, so parallel
    jobs do not oversubscribe the cores. An exception is logged with its
    traceback, then re-raised so that Snakemake marks the job failed.

    ``code`` is the rule's ``code`` input: the library files a change to
    which reruns the job (derived from the script's imports by
    :mod:`otfs_workflow.codedeps`). When given, the job fails at its end if it ran a
    module of ``otfs`` that is not among them, since a later change to that
    module would leave its result stale without a word.
    """
    # The job's log has everything; the terminal (the main process's log) its errors alone: a warning is
    # recorded under logs/conditions/ too, and the main process prints them counted at the end
    # (otfs_workflow.run_log), so that 800 jobs' warnings are a screen, not thousands of lines.
    stderr = logging.StreamHandler(sys.stderr)
    handlers = [stderr]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
        recorder = _condition_recorder(log_path)
        if recorder is not None:
            stderr.setLevel(logging.ERROR)
            handlers.append(recorder)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    logging.captureWarnings(True)  # a library warning (say, a numerical fallback) lands in the job's log
    logger = logging.getLogger(name)
    times_path = os.environ.get(JOB_TIMES_ENV)
    age = _process_age_s() if times_path else None
    entered = time.perf_counter()
    if code is not None:
        load_plugins(code)
        if _includes_wda(code):
            import_pymanopt_alone()
    clock = _ImportClock() if times_path else contextlib.nullcontext()
    start = time.perf_counter()
    try:
        with threadpool_limits(limits=max(1, int(threads))), clock:
            yield logger
    except BaseException:
        logger.exception("job failed")
        raise
    body = time.perf_counter() - start
    if code is not None:
        check_code_inputs(code, logger)
    logger.info("done in %.2f s", body)
    if times_path:
        before = (age if age is not None else float("nan")) + start - entered
        _append_job_times(times_path, name, before, clock.seconds, time.perf_counter() - start - body, body)


class _ConditionHandler(logging.Handler):
    """Records each warning a job logs (its own, and the library's through ``logging.captureWarnings``) as one
    line of the job's conditions file (:func:`otfs_workflow.run_log.record_condition`)."""

    def __init__(self, log_path, rule, wildcards, key):
        super().__init__(level=logging.WARNING)
        self.log_path, self.rule, self.wildcards, self.key = log_path, rule, wildcards, key

    def emit(self, record):
        from otfs_workflow.run_log import record_condition

        if record.levelno >= logging.ERROR:
            return  # an error is printed where it happens
        try:
            message = record.getMessage()
            category = ""
            if record.name == "py.warnings":  # "<file>:<line>: <Category>: <message>\n  <source line>"
                head = message.strip().splitlines()[0]
                parts = head.split(": ", 2)
                if len(parts) == 3:
                    category, message = parts[1], parts[2]
                else:
                    message = head
            record_condition(self.log_path, self.rule, self.wildcards, self.key, category, message)
        except Exception:  # noqa: BLE001 - a record that cannot be written must not fail the job
            self.handleError(record)


def _condition_recorder(log_path):
    """The conditions handler of the running Snakemake job (None outside one: a test, a library call)."""
    import __main__

    smk = getattr(__main__, "snakemake", None)
    rule = getattr(smk, "rule", None)
    if not isinstance(rule, str):
        return None
    from otfs_workflow.run_log import benchmark_key, clear_conditions

    wc = getattr(smk, "wildcards", None)
    wildcards = {str(k): str(v) for k, v in (wc.items() if hasattr(wc, "items") else ())}
    key = wildcards.get("feature_set") or wildcards.get("family") or wildcards.get("dataset")
    if key is None:
        bench = getattr(smk, "benchmark", None)
        key = benchmark_key(rule, bench[0] if isinstance(bench, (list, tuple)) and bench else bench)
    clear_conditions(log_path)
    return _ConditionHandler(str(log_path), rule, wildcards, key)


def _process_age_s() -> float | None:
    """Seconds since this process started (Linux: ``/proc/self/stat``; None elsewhere), to clock ticks."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))  # field 22: starttime
    except (OSError, IndexError, ValueError):
        return None


class _ImportClock:
    """Wall time spent in the outermost ``import`` statements executed while it is entered (in any thread), each
    with the modules that statement loads; ``builtins.__import__`` is wrapped meanwhile and restored at exit.
    ``importlib.import_module`` itself is not counted, the imports its module makes are."""

    def __init__(self):
        self.seconds = 0.0
        self._local = threading.local()

    def __enter__(self):
        self._original = original = builtins.__import__
        local, clock = self._local, self

        def timed_import(name, globals=None, locals=None, fromlist=(), level=0):
            if getattr(local, "inside", False):
                return original(name, globals, locals, fromlist, level)
            local.inside = True
            t = time.perf_counter()
            try:
                return original(name, globals, locals, fromlist, level)
            finally:
                clock.seconds += time.perf_counter() - t
                local.inside = False

        builtins.__import__ = timed_import
        return self

    def __exit__(self, *exc):
        builtins.__import__ = self._original
        return False


def _append_job_times(path, name, before, imports, after, body) -> None:
    """One line in the job-times file: a single ``write`` of an ``O_APPEND`` file, so concurrent jobs' lines
    do not interleave."""
    line = "\t".join([name.replace("\t", " ")] + [f"{x:.4f}" for x in (before, imports, after, body)]) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def import_pymanopt_alone() -> None:
    """Import pymanopt with its optional array backends (:data:`PYMANOPT_OPTIONAL_BACKENDS`) hidden while it
    loads: each one not imported yet is ``None`` in ``sys.modules`` meanwhile, so pymanopt's ``import torch``
    raises ``ImportError`` as where PyTorch is absent, and pymanopt marks that backend unavailable. The NumPy
    backend, the one the library uses, is unchanged; so are the process's own later imports of PyTorch. Nothing
    happens where pymanopt is imported already or not installed (the library says what to install when it
    needs it)."""
    if "pymanopt" in sys.modules:
        return
    hidden = [name for name in PYMANOPT_OPTIONAL_BACKENDS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None
    try:
        import pymanopt  # noqa: F401
    except ImportError:
        pass
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _includes_wda(code) -> bool:
    """Whether the job's code inputs (its manifest or its files) include WDA's module."""
    return any(Path(f).parts[-3:] == _WDA_MODULE for f in _code_files(code))


def _code_files(code) -> list:
    """The library files of a rule's ``code`` input: those its code manifest lists, or the files themselves."""
    from otfs_workflow.codedeps import manifest_files

    files = [code] if isinstance(code, (str, os.PathLike)) else list(code)
    manifest = _manifest_of(files)
    return manifest_files(manifest) if manifest is not None else files


def _manifest_of(code):
    """The code manifest a rule's ``code`` input is (one ``.json`` file), or None where it lists files."""
    files = [code] if isinstance(code, (str, os.PathLike)) else list(code)
    return files[0] if len(files) == 1 and str(files[0]).endswith(".json") else None


def load_plugins(code) -> None:
    """Have each registry import the plug-in modules the rule's code manifest names (``plugins``: the method
    files of its job), and only them, when the job first looks a method up: that lookup then imports no
    other file of the folder, and the job runs only what its code inputs list
    (:func:`otfs_workflow.codedeps.scoped_manifest`). A job that looks no method up (the NA curves) imports
    none of them (:func:`otfs.registry.defer_modules`)."""
    manifest = _manifest_of(code)
    if manifest is None:
        return
    from otfs.registry import defer_modules
    from otfs_workflow.codedeps import manifest_plugins

    for group, modules in manifest_plugins(manifest).items():
        defer_modules(group, modules)


def check_code_inputs(code, logger=None) -> None:
    """Raise unless every loaded module of ``otfs`` is one of the files ``code``.

    ``code`` is the library files, or the rule's code manifest (one ``.json``
    file of :func:`otfs_workflow.codedeps.scoped_manifest`) that lists them.
    """
    from otfs_workflow.codedeps import loaded_modules

    declared = {Path(c).resolve() for c in _code_files(code)}
    loaded = loaded_modules()
    undeclared = sorted(str(p) for p in loaded - declared)
    if undeclared:
        raise RuntimeError(
            f"this job ran {len(undeclared)} library module(s) that are not among its code inputs: "
            f"{undeclared}. A change to them would not rerun it. The rule's code input is the import "
            "closure of its script (otfs_workflow.codedeps, script_code in workflow/rules/common.smk); an "
            "importlib.import_module of a computed name is not followed: import the module by name."
        )
    if logger is not None:
        logger.info("code inputs: the %d otfs modules this job ran are among its %d code inputs",
                    len(loaded), len(declared))


class JobPairs:
    """The pairs a job runs: its ``{pair}`` wildcard (a one-pair rule such as ``rank_features``), or
    ``params.pairs`` (a rule made per feature set, ``rank_pairs_<feature set>`` and its kin), in their order.

    :meth:`each` gives a named input or output as one file per pair, in that order; :meth:`of` a parameter
    that a batch holds as ``{pair: value}``.
    """

    def __init__(self, sm):
        self.batch = hasattr(sm.params, "pairs")
        self.pairs = list(sm.params.pairs) if self.batch else [sm.wildcards.pair]

    def each(self, files) -> list:
        """``files``, one per pair: a batch's list, or a one-pair job's one file."""
        files = list(files) if self.batch else [files]
        if len(files) != len(self.pairs):
            raise ValueError(f"{len(files)} files for the {len(self.pairs)} pairs {self.pairs}")
        return files

    def of(self, value, pair: str):
        """A parameter's value for ``pair``: a batch's ``value[pair]``, or a one-pair job's ``value``."""
        return value[pair] if self.batch else value


def domain_caches(paths) -> dict[str, str]:
    """``{domain: path}`` from cache paths named ``.../<domain>.h5``."""
    return {Path(p).stem: str(p) for p in paths}


def source_classes(cache, pair: str, selection: bool = True) -> list[int]:
    """The classes (labels ``1..K``) present in the source of ``pair``, whose samples each iteration draws,
    after checking that the pair's domains can run the protocol (:func:`otfs_workflow.protocol.check_pair`: too few
    samples or classes is an error naming the pair, the domain and the minimum; target labels the source
    lacks are logged as a warning).
    """
    import numpy as np

    from otfs_workflow.protocol import check_pair, class_counts, parse_pair

    source, target = parse_pair(pair)
    names = cache.class_names
    src_y, tgt = cache.domain(source).y, cache.domain(target, labels=False)
    tgt_counts = class_counts(tgt.y, names) if tgt.labelled else None
    for message in check_pair(pair, class_counts(src_y, names), tgt_counts, selection=selection,
                              target_rows=int(tgt.X.shape[0])):
        logging.getLogger("otfs").warning(message)
    return [int(c) for c in np.unique(src_y)]
