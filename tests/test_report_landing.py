"""The report's landing page: the results at a glance, converted from the generated Markdown pages into
reStructuredText that docutils (Snakemake's renderer) turns into the same table and text."""

from __future__ import annotations

import pytest
from docutils.core import publish_parts

from otfs_workflow.report_landing import glance, markdown_section, markdown_to_rst

PAGE = """# Title

## Adapter NA

Goals:

- Never worse: **not met** (`fixed:ot/circular` 5.15).

| family | tasks | regret |
|---|---|---|
| heart | 12 | 6.40 |
| **all tasks** | 48 | 8.31 |

Each fold: the way chosen on the other families

## Adapter OT3

other
"""


def test_a_markdown_section_becomes_the_same_table_and_text_in_docutils():
    part = markdown_section(PAGE, "## Adapter NA", until="Each fold:")
    assert "Each fold" not in part and "other" not in part and "| heart | 12 | 6.40 |" in part
    html = publish_parts(glance("At a glance", part, "results/recommend/evaluation.md"),
                         writer_name="html")["html_body"]
    assert html.count("<table") == 1 and html.count("<tr") == 3  # the header and two rows
    for cell in ("<td>heart</td>", "<td>12</td>", "<td>6.40</td>", "<strong>all tasks</strong>"):
        assert cell in html.replace("<p>", "").replace("</p>", "").replace("\n", ""), cell
    assert "<strong>not met</strong>" in html and '<tt class="docutils literal">fixed:ot/circular</tt>' in html
    assert "results/recommend/evaluation.md" in html
    assert markdown_to_rst("## A heading\n\ntext `x`") == "**A heading**\n\ntext ``x``\n"
    with pytest.raises(ValueError, match="no section '## Adapter XY'"):
        markdown_section(PAGE, "## Adapter XY")
