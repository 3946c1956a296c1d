"""otfs's Snakemake logger plug-in, ``--logger otfs`` (the workflow profile selects it for every run).

Snakemake reads the files given with ``--configfile`` before it reads the
Snakefile, and on a YAML syntax error says only "Config file is not valid
JSON or YAML", naming neither the file nor the line. Through the logger
plug-in interface alone (no Snakemake internals), this handler sees that
error's record and names the problem: it reads each file of the command
line's ``--configfile`` strictly (``otfs_workflow/_yaml.py``) and writes the
file, the line and the column to standard error. (A key given twice in one
mapping, which Snakemake keeps in silence, the workflow names when it is
parsed: ``workflow/rules/common.smk`` reads each ``--configfile`` again.)

With ``--logger-otfs-events PATH`` it also writes every record of the run
as one JSON line to PATH (event, job id, rule, wildcards, input and output
files, group job and its members, resources, times), for scripts that
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

__all__ = ["EVENT_FIELDS", "LogHandler", "LogHandlerSettings", "configfiles", "name_yaml_problems"]

#: The start of Snakemake's message for a configuration file it cannot read.
_NOT_YAML = "file is not valid JSON or YAML"


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


def configfiles(argv) -> list[str]:
    """The files of ``--configfile``/``--configfiles`` on a Snakemake command line (``argv`` without the
    program), as Snakemake's parser takes them: each option's values up to the next option, or the one value
    of ``--configfile=F``."""
    out, taking = [], False
    for arg in argv:
        if arg.startswith("-"):
            name, _, value = arg.partition("=")
            taking = name in ("--configfile", "--configfiles") and not value
            if name in ("--configfile", "--configfiles") and value:
                out.append(value)
            continue
        if taking:
            out.append(arg)
    return out


def name_yaml_problems(paths) -> list[str]:
    """For each file of ``paths`` that is not valid YAML: ``<file>, line L, column C: invalid YAML: <why>``."""
    strict = _strict_yaml()
    if strict is None:
        return []
    lines = []
    for path in paths:
        found = strict.yaml_problem(path)
        if found is not None:
            line, column, text = found
            where = f"{path}, line {line}, column {column}" if line else str(path)
            lines.append(f"{where}: invalid YAML: {text}")
    return lines


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    """``--logger-otfs-events PATH``: where ``--logger otfs`` writes its JSON lines (none where not given)."""

    # no `from __future__ import annotations` here: Snakemake reads the type to parse the option
    events: Optional[str] = field(  # noqa: UP045 - Snakemake calls the type: Optional, not the | union
        default=None,
        metadata={"help": "a JSON-lines file --logger otfs appends every record of the run to (default: none)",
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
        if not hasattr(self, "filters"):  # snakemake-interface-logger-plugins 1.x leaves logging.Handler unset
            logging.Handler.__init__(self)
        events = getattr(self.settings, "events", None)
        self._file = None
        if events:
            path = Path(events)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
            self.baseFilename = str(path.resolve())  # where Snakemake says a file-writing handler logs
        self._named = False
        self.setLevel(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.levelno >= logging.ERROR and _NOT_YAML in message and not self._named:
            import sys

            self._named = True
            for line in name_yaml_problems(configfiles(sys.argv[1:])):
                sys.stderr.write(f"{line}\n")
        if self._file is None:
            return
        event = {"time": time.time(), "level": record.levelname, "message": message}
        for key in EVENT_FIELDS:
            if hasattr(record, key):
                event[key] = _plain(getattr(record, key))
        self._file.write(json.dumps(event, sort_keys=True, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        super().close()

    @property
    def writes_to_stream(self) -> bool:
        return False

    @property
    def writes_to_file(self) -> bool:
        return self._file is not None

    @property
    def has_filter(self) -> bool:
        return False

    @property
    def has_formatter(self) -> bool:
        return False

    @property
    def needs_rulegraph(self) -> bool:
        return False
