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

Everything else is Snakemake's own loading. The wrapper is applied once,
and if Snakemake's loader is not where it is expected (another Snakemake
version), nothing is changed.

The plug-in is also a small logger, ``--logger otfs``: every record of the
run as one JSON line, in ``logs/snakemake-events.jsonl`` (job ids, rules,
times), for scripts that follow a run.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from snakemake_interface_logger_plugins.base import LogHandlerBase

__all__ = ["LogHandler", "wrap_configfile_loader"]

_MARK = "_otfs_named_yaml_errors"
EVENTS = Path("logs") / "snakemake-events.jsonl"


def _yaml_problem(path):
    """``(line, column, text)`` of the first YAML problem of ``path`` (a syntax error, or a key given twice in
    one mapping), or None."""
    import yaml

    class Strict(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                self.flatten_mapping(node)
                seen = {}
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    try:
                        hash(key)
                    except TypeError:
                        continue
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"the key {key!r} is given twice in one mapping (first at line "
                            f"{seen[key] + 1}); YAML would keep the last one in silence", key_node.start_mark)
                    seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    try:
        with open(path, encoding="utf-8") as fh:
            yaml.load(fh, Loader=Strict)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        text = " ".join(str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x)
        return (mark.line + 1, mark.column + 1, text or str(exc)) if mark is not None else (None, None, str(exc))
    except (OSError, UnicodeDecodeError):
        return None
    return None


def wrap_configfile_loader() -> bool:
    """Wrap ``snakemake.common.configfile._load_configfile`` to name YAML problems; return whether it was."""
    try:
        from snakemake.common import configfile
        from snakemake_interface_common.exceptions import WorkflowError
    except ImportError:
        return False
    original = getattr(configfile, "_load_configfile", None)
    if original is None:
        return False
    if getattr(original, _MARK, False):
        return True

    def _load_configfile(configpath_or_obj, filetype="Config"):
        is_path = isinstance(configpath_or_obj, (str, Path))
        try:
            loaded = original(configpath_or_obj, filetype)
        except WorkflowError:
            found = _yaml_problem(configpath_or_obj) if is_path else None
            if found is None:
                raise
            line, column, text = found
            where = f"{configpath_or_obj}, line {line}, column {column}" if line else str(configpath_or_obj)
            raise WorkflowError(f"{filetype} file {where}: invalid YAML: {text}") from None
        if is_path and str(configpath_or_obj).endswith((".yaml", ".yml")):
            found = _yaml_problem(configpath_or_obj)
            if found is not None:
                line, column, text = found
                raise WorkflowError(f"{filetype} file {configpath_or_obj}, line {line}, column {column}: {text}")
        return loaded

    setattr(_load_configfile, _MARK, True)
    configfile._load_configfile = _load_configfile
    return True


try:  # never let the hook stop Snakemake's command line
    wrap_configfile_loader()
except Exception:  # noqa: BLE001, S110
    pass


class LogHandler(LogHandlerBase):
    """``--logger otfs``: each log record as one JSON line in ``logs/snakemake-events.jsonl``."""

    def __post_init__(self) -> None:
        EVENTS.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(EVENTS, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.setLevel(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        event = {"time": time.time(), "level": record.levelname, "message": record.getMessage()}
        for key in ("event", "jobid", "rule_name", "wildcards", "output", "input", "threads", "resources"):
            if hasattr(record, key):
                event[key] = str(getattr(record, key))
        self._file.write(json.dumps(event, sort_keys=True) + "\n")
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
