"""The comparison as Markdown and as one self-contained HTML page.

Both are built from the same cells so they never disagree. The HTML page
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
from benchmark.report.notes import WARNING, notes, title

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
    """The report as Markdown; ``images`` maps a caption to a PNG path relative to the file."""
    parts = [f"# {title(comparison)}", ""]
    for note in notes(comparison):
        parts += [note, ""]
    for heading, table in tables(comparison):
        parts += [f"## {heading}", "", markdown_table(*table), ""]
    for caption, src in (images or {}).items():
        parts += [f"## {caption}", "", f"![{caption}]({src})", ""]
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


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def to_html(comparison: Comparison, images: dict[str, Path] | None = None) -> str:
    """One HTML page; ``images`` maps a caption to a PNG file, inlined as a data URI."""
    heading = html.escape(title(comparison))
    paragraphs = "".join(
        f'<p class="{"warn" if n.startswith(WARNING) else "note"}">'
        f"{html.escape(n).replace('`', '')}</p>"
        for n in notes(comparison)
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{heading}</title><style>{STYLE}</style></head><body>",
        f"<h1>{heading}</h1>",
        paragraphs,
    ]
    for name, table in tables(comparison):
        parts += [f"<h2>{html.escape(name)}</h2>", html_table(*table)]
    for caption, png in (images or {}).items():
        alt = html.escape(caption)
        parts.append(f'<h2>{alt}</h2><figure><img alt="{alt}" src="{data_uri(png)}"></figure>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
