"""otfs's hook into Snakemake's command line, found as a Snakemake logger plug-in.

Snakemake reads the files given with ``--configfile`` before it reads the
Snakefile, so the workflow cannot check them first. On a YAML syntax error it
says only "Config file is not valid JSON or YAML", naming neither the file
nor the line; a key given twice in one mapping it keeps in silence (the
last one wins). Snakemake imports every installed logger plug-in (a module
named ``snakemake_logger_plugin_*``) when its command line starts, so this
module is imported then, and it wraps Snakemake's configuration-file loader:

- a YAML syntax error is reported with the file, the line and the column;
- a key given twice in one mapping is an error naming the key, the file and
  both lines.

Everything else is Snakemake's own loading. ``_load_configfile`` is private
to Snakemake, so the wrapper is pinned, like the scheduler patches of
:mod:`otfs_workflow.snakemake_scheduler`, to Snakemake
:data:`PATCHED_SNAKEMAKE`: under any other version, or with
``OTFS_UNPATCHED_SNAKEMAKE=1``, nothing is changed here (this module is
imported by every Snakemake command of the environment, so it never stops
one), and the workflow itself stops at start-up naming both versions.

The plug-in is also a small logger, ``--logger otfs``: every record of the
run as one JSON line, in ``logs/snakemake-events.jsonl`` or the file given
with ``--logger-otfs-events PATH`` (event, job id, rule, wildcards, input and
output files, group job and its members, resources, times), for scripts that
follow a run; :mod:`otfs_workflow.cluster` counts a dry run's jobs from it.
"""

import enum
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

__all__ = ["EVENT_FIELDS", "LogHandler", "LogHandlerSettings", "wrap_configfile_loader"]

_MARK = "_otfs_names_yaml_problems"

EVENTS = Path("logs") / "snakemake-events.jsonl"


def _strict_yaml():
    """``otfs_workflow/_yaml.py`` (PyYAML only), loaded from its file under a private name: importing the
    ``otfs_workflow`` package here, before Snakemake reads the Snakefile, would pin it to the installed copy,
    and the Snakefile puts its own checkout's first. None where the pipeline package is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("otfs_workflow")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "_yaml.py"
    module_spec = importlib.util.spec_from_file_location("_otfs_strict_yaml", path)
    if module_spec is None or not path.is_file():
        return None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


#: The Snakemake release whose private loader is wrapped (the same as otfs_workflow.snakemake_scheduler's pin).
PATCHED_SNAKEMAKE = "9.27.1"


def wrap_configfile_loader(version: str | None = None, environ=None) -> bool:
    """Wrap ``snakemake.common.configfile._load_configfile`` to name YAML problems; return whether it was.

    Only under Snakemake :data:`PATCHED_SNAKEMAKE` (``version``: default the installed one's) and without
    ``OTFS_UNPATCHED_SNAKEMAKE=1`` in ``environ`` (default: ``os.environ``)."""
    import os

    environ = os.environ if environ is None else environ
    if environ.get("OTFS_UNPATCHED_SNAKEMAKE") == "1":
        return False
    try:
        from snakemake import __version__ as installed
        from snakemake.common import configfile
        from snakemake_interface_common.exceptions import WorkflowError
    except ImportError:
        return False
    if (version or installed) != PATCHED_SNAKEMAKE:
        return False
    original = getattr(configfile, "_load_configfile", None)
    strict = _strict_yaml()  # the same strict reading as otfs_workflow.config.load_yaml
    if original is None or strict is None:
        return False
    if getattr(original, _MARK, False):
        return True
    yaml_problem = strict.yaml_problem

    def named(path, found):
        line, column, text = found
        where = f"{path}, line {line}, column {column}" if line else str(path)
        return f"{where}: invalid YAML: {text}"

    def _load_configfile(configpath_or_obj, filetype="Config"):
        is_path = isinstance(configpath_or_obj, (str, Path))
        try:
            loaded = original(configpath_or_obj, filetype)
        except WorkflowError:
            found = yaml_problem(configpath_or_obj) if is_path else None
            if found is None:
                raise
            raise WorkflowError(f"{filetype} file {named(configpath_or_obj, found)}") from None
        if is_path and str(configpath_or_obj).endswith((".yaml", ".yml")):
            found = yaml_problem(configpath_or_obj)  # a key given twice: loaded, the last one kept
            if found is not None:
                raise WorkflowError(f"{filetype} file {named(configpath_or_obj, found)}")
        return loaded

    setattr(_load_configfile, _MARK, True)
    configfile._load_configfile = _load_configfile
    return True


try:  # never let the hook stop Snakemake's command line
    wrap_configfile_loader()
except Exception:  # noqa: BLE001, S110
    pass


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    """``--logger-otfs-events PATH``: where ``--logger otfs`` writes its JSON lines."""

    # no `from __future__ import annotations` here: Snakemake reads the type to parse the option
    events: Optional[str] = field(  # noqa: UP045 - Snakemake calls the type: Optional, not the | union
        default=None,
        metadata={"help": f"the JSON-lines file of --logger otfs (default: {EVENTS}); appended to",
                  "env_var": False, "required": False},
    )


#: The fields of Snakemake's log records that an event keeps, where the record has them.
EVENT_FIELDS = ("event", "jobid", "rule_name", "wildcards", "input", "output", "log", "threads", "resources",
                "group_id", "jobs", "local", "is_checkpoint", "reason")


def _plain(value):
    """A record's field as JSON: an enum by its value, a job by its id, a group's jobs as a sorted list of ids,
    named lists (wildcards, resources) as mappings."""
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if hasattr(value, "jobid") and hasattr(value, "rule"):  # a job
        return value.jobid
    if isinstance(value, dict) or (hasattr(value, "items") and hasattr(value, "keys")):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        items = [_plain(v) for v in value]
        return sorted(items, key=str)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


class LogHandler(LogHandlerBase):
    """``--logger otfs``: each log record as one JSON line (:data:`EVENT_FIELDS`, the time, level and message)."""

    def __post_init__(self) -> None:
        path = Path(getattr(self.settings, "events", None) or EVENTS)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.baseFilename = str(path.resolve())  # where Snakemake says a file-writing handler logs (FileHandler's name)
        self.setLevel(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        event = {"time": time.time(), "level": record.levelname, "message": record.getMessage()}
        for key in EVENT_FIELDS:
            if hasattr(record, key):
                event[key] = _plain(getattr(record, key))
        self._file.write(json.dumps(event, sort_keys=True, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
        super().close()

    @property
    def writes_to_stream(self) -> bool:
        return False

    @property
    def writes_to_file(self) -> bool:
        return True

    @property
    def has_filter(self) -> bool:
        return False

    @property
    def has_formatter(self) -> bool:
        return False

    @property
    def needs_rulegraph(self) -> bool:
        return False
