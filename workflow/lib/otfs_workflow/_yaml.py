"""Strict YAML: PyYAML's safe loader, with a key given twice in one mapping an error.

PyYAML keeps the last of two equal keys in silence; a configuration that
sets a key twice then runs with a value its author may not have meant.
Used by :func:`otfs_workflow.config.load_yaml` and by the Snakemake hook that names a
``--configfile``'s problems (``snakemake_logger_plugin_otfs``), so this
module imports PyYAML only.
"""

from __future__ import annotations

import os

import yaml

__all__ = ["StrictLoader", "describe", "load", "yaml_problem"]


class _RefusesDuplicateKeys:
    """The mapping constructor of :class:`StrictLoader`, for a loader of either parser."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    continue  # PyYAML's own error follows
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} is given twice in one mapping (first at line {seen[key] + 1}); "
                        "YAML would keep the last one in silence", key_node.start_mark)
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


class StrictLoader(_RefusesDuplicateKeys, yaml.SafeLoader):
    """PyYAML's safe loader that refuses a key given twice in one mapping."""


# The same loader on libyaml's parser, where PyYAML has it: about ten times faster on this project's
# configuration and schemas, which every Snakemake invocation reads. Its constructor is the one above; a document
# it refuses is read again by StrictLoader, whose result or error (message and position) is then the answer.
_CStrictLoader = (type("_CStrictLoader", (_RefusesDuplicateKeys, yaml.CSafeLoader), {})
                  if getattr(yaml, "__with_libyaml__", False) else None)


def load(stream):
    """The YAML document of ``stream`` (text or a file opened as text), read with :class:`StrictLoader`."""
    if _CStrictLoader is None:
        return yaml.load(stream, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
    text = stream if isinstance(stream, str) else stream.read()
    try:
        return yaml.load(text, Loader=_CStrictLoader)  # noqa: S506 - a CSafeLoader subclass
    except yaml.YAMLError:
        pass
    return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass


def describe(exc: yaml.YAMLError) -> tuple[int | None, int | None, str]:
    """``(line, column, text)`` of a YAML error (1-based; None where PyYAML gives no position)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    text = " ".join(str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x)
    if mark is None:
        return None, None, text or str(exc)
    return mark.line + 1, mark.column + 1, text or str(exc)


def yaml_problem(path: str | os.PathLike) -> tuple[int | None, int | None, str] | None:
    """``(line, column, text)`` of the first problem of the YAML file ``path`` (a syntax error, or a key given
    twice in one mapping), or None (none, or the file cannot be read as text)."""
    try:
        with open(path, encoding="utf-8") as fh:
            load(fh)
    except yaml.YAMLError as exc:
        return describe(exc)
    except (OSError, UnicodeDecodeError):
        return None
    return None
