"""The HTML report's landing page: the answer first.

Snakemake's report opens on its landing page where ``--report-metadata`` gives one (the workflow profile
does, ``workflow/report/landing.yaml``): the workflow's description (``workflow/report/workflow.rst``), then
the metadata. The description includes the report's own "at a glance" results, reStructuredText files the
verdict and the recommendation's evaluation write (:func:`glance`) and the rules mark for the report, so the
page shows the results of the report's targets and nothing older.
"""

from __future__ import annotations

import re

__all__ = ["glance", "markdown_section", "markdown_to_rst"]


def _inline(text: str) -> str:
    """Markdown's inline code (```x```) as reStructuredText's literal (````x````); bold is the same in both."""
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", text)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_to_rst(markdown: str) -> str:
    """The paragraphs, bullet lists and pipe tables of a Markdown text as reStructuredText (a table becomes a
    ``list-table``; a heading becomes a bold line)."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[-:| ]+\|\s*$", lines[i + 1]):
            header, body = _cells(line), []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            out += ["", ".. list-table::", "   :header-rows: 1", ""]
            for row in [header, *body]:
                row = (row + [""] * len(header))[:len(header)]
                out.append(f"   * - {_inline(row[0]) or ' '}")
                out += [f"     - {_inline(c) or ' '}" for c in row[1:]]
            out.append("")
            continue
        heading = re.match(r"^#+\s+(.*)$", line)
        out.append(f"**{heading.group(1).strip()}**" if heading else _inline(line))
        i += 1
    return "\n".join(out).strip() + "\n"


def markdown_section(markdown: str, heading: str, until: str | None = None) -> str:
    """The lines of ``markdown`` after the line ``heading`` up to the next heading of the same level or above
    (or to the first line starting with ``until``); an error naming the heading where there is none."""
    lines = markdown.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    start = next((i for i, line in enumerate(lines) if line.strip() == heading.strip()), None)
    if start is None:
        raise ValueError(f"no section {heading!r} in the page")
    stop = next((j for j in range(start + 1, len(lines)) if re.match(rf"^#{{1,{level}}}\s", lines[j])), len(lines))
    part = lines[start + 1:stop]
    if until is not None:
        part = part[:next((j for j, line in enumerate(part) if line.startswith(until)), len(part))]
    return "\n".join(part)


def glance(title: str, markdown: str, source: str) -> str:
    """One "at a glance" block of the landing page: ``title`` as a section, then ``markdown`` as
    reStructuredText and the page it comes from (``source``)."""
    return f"{title}\n{'-' * len(title)}\n\n{markdown_to_rst(markdown)}\nThe whole page: ``{source}``.\n"
