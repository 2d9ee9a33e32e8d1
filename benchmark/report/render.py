"""The comparison as Markdown and as one self-contained HTML page.

Both are built from the same cells so they never disagree, and read in the same order:
the header block (what produced the numbers), warnings, the tables, the figures, and
last the Method section. The HTML page
inlines its figures as base64 ``data:`` URIs and its style in a ``<style>``
element: it opens from a mail attachment or an MLflow artifact view with no
other file, no network and no script.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from benchmark.report.cells import Cell, tables
from benchmark.report.compare import Comparison
from benchmark.report.notes import method, title, top_warnings
from benchmark.report.task_section import CAPTION as TASK_CAPTION
from benchmark.report.task_section import HEADING as TASK_HEADING
from benchmark.report.task_section import lines as task_lines
from benchmark.report.task_section import tables as task_tables

METHOD_HEADING = "Method"

# ---- Markdown -----------------------------------------------------------------------------


def markdown_table(header: list[str], body: list[list[Cell]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    aligns = ["---"] + ["---:"] * (len(header) - 1)
    rows = [
        line([f"[{c.text()}]({c.href})" if c.href else c.text() for c in cells]) for cells in body
    ]
    return "\n".join([line(header), "| " + " | ".join(aligns) + " |", *rows])


def to_markdown(comparison: Comparison, images: dict[str, str] | None = None) -> str:
    """The report as Markdown; ``images`` maps a caption to a PNG path relative to the file.
    Numbers first: header block, warnings, tables, figures; the Method section last."""
    parts = [f"# {title(comparison)}", ""]
    parts += [f"- **{line.name}**: {line.value}" for line in comparison.header]
    parts += [""] if comparison.header else []
    for note in top_warnings(comparison):
        parts += [note, ""]
    for heading, table in tables(comparison):
        parts += [f"## {heading}", "", markdown_table(*table), ""]
    images = dict(images or {})
    task_image = images.pop(TASK_CAPTION, None)
    if comparison.task is not None:
        parts += [f"## {TASK_HEADING}", ""]
        parts += [part for line in task_lines(comparison.task) for part in (line, "")]
        for caption, table in task_tables(comparison.task):
            parts += [f"### {caption}", "", markdown_table(*table), ""]
        if task_image:
            parts += [f"![{TASK_CAPTION}]({task_image})", ""]
    for caption, src in images.items():
        parts += [f"## {caption}", "", f"![{caption}]({src})", ""]
    parts += [f"## {METHOD_HEADING}", ""]
    for note in method(comparison):
        parts += [note, ""]
    return "\n".join(parts)


# ---- HTML ---------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem;
       color: #222; max-width: 100rem; }
div.scroll { overflow-x: auto; max-width: 100%; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: right;
         white-space: nowrap; vertical-align: top; }
th { white-space: normal; max-width: 7rem; }
th { background: #f0f3f8; } td:first-child, th:first-child { text-align: left; }
td:first-child { white-space: normal; min-width: 9rem; max-width: 18rem; }
tr:nth-child(even) td { background: #fafafa; }
span.ci { color: #666; font-size: 0.75rem; }
td.up { color: #1a5d1a; background: #eef7ee !important; }
td.down { color: #8a1c1c; background: #fbeeee !important; }
td.faint { background: none !important; } td.sig { font-weight: 600; }
p.note { color: #555; font-size: 0.9rem; max-width: 60rem; }
ul.header { list-style: none; padding: 0; margin: 0.5rem 0 1rem; font-size: 0.95rem; }
ul.header li { margin: 0.15rem 0; }
p.warn { color: #7a4b00; background: #fff6e0; border-left: 4px solid #e0a000;
         padding: 0.4rem 0.6rem; font-size: 0.9rem; max-width: 60rem; }
figure { margin: 1rem 0; } img { max-width: 100%; border: 1px solid #ddd; }
"""


def html_table(header: list[str], body: list[list[Cell]]) -> str:
    """Figures on the first line of a cell, their interval below in small type; the table
    scrolls sideways in its own box rather than widening the page."""
    head = "".join(f"<th>{html.escape(h.replace('_', ' '))}</th>" for h in header)
    rows = []
    for cells in body:
        tds = []
        for cell in cells:
            classes = " ".join(c for c in (cell.tone, "sig" if cell.significant else "") if c)
            attr = f' class="{classes}"' if classes else ""
            mark = " *" if cell.significant else ""
            detail = "".join(
                f'<br><span class="ci">{html.escape(line)}</span>'
                for line in cell.detail.splitlines()
            )
            main = html.escape(cell.main)
            if cell.href:
                main = f'<a href="{html.escape(cell.href)}">{main}</a>'
            tds.append(f"<td{attr}>{main}{mark}{detail}</td>")
        rows.append(f"<tr>{''.join(tds)}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'


def _text(markdown: str) -> str:
    """A note's Markdown as HTML text: escaped, its code backticks dropped."""
    return html.escape(markdown).replace("`", "")


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def to_html(comparison: Comparison, images: dict[str, Path] | None = None) -> str:
    """One HTML page; ``images`` maps a caption to a PNG file, inlined as a data URI."""
    heading = html.escape(title(comparison))
    header = "".join(
        f"<li><b>{html.escape(line.name)}</b>: {_text(line.value)}</li>"
        for line in comparison.header
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{heading}</title><style>{STYLE}</style></head><body>",
        f"<h1>{heading}</h1>",
        f'<ul class="header">{header}</ul>' if header else "",
        "".join(f'<p class="warn">{_text(n)}</p>' for n in top_warnings(comparison)),
    ]
    for name, table in tables(comparison):
        parts += [f"<h2>{html.escape(name)}</h2>", html_table(*table)]
    images = dict(images or {})
    task_png = images.pop(TASK_CAPTION, None)
    if comparison.task is not None:
        parts.append(f"<h2>{TASK_HEADING}</h2>")
        parts += [f'<p class="note">{_text(line)}</p>' for line in task_lines(comparison.task)]
        for caption, table in task_tables(comparison.task):
            parts += [f"<h3>{html.escape(caption)}</h3>", html_table(*table)]
        if task_png is not None:
            alt = html.escape(TASK_CAPTION)
            parts.append(f'<figure><img alt="{alt}" src="{data_uri(task_png)}"></figure>')
    for caption, png in images.items():
        alt = html.escape(caption)
        parts.append(f'<h2>{alt}</h2><figure><img alt="{alt}" src="{data_uri(png)}"></figure>')
    parts.append(f"<h2>{METHOD_HEADING}</h2>")
    parts.append("".join(f'<p class="note">{_text(n)}</p>' for n in method(comparison)))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
