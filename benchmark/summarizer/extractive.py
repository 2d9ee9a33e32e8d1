"""The offline summarizer: requested sections filled with verbatim material from the region.

Deterministic and LLM-free, so the summarizing policies run (and are tested)
without a key or network. It can only lose information, never invent it:
every item comes from the region or from the previous summary it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.summarizer.base import SummaryRequest
from benchmark.summarizer.sections import EXTRACTORS, Region, kind_of
from benchmark.text import tokens

EMPTY = "(nothing recorded)"
INDENT = "  "  # continuation lines of a multi-line item


def render_item(item: str) -> str:
    first, *rest = item.split("\n")
    return "\n".join([f"- {first}", *(INDENT + line for line in rest)])


def render(sections: list[tuple[str, list[str]]]) -> str:
    """Markdown: one ``## heading`` per section, ``- item`` lines or the empty marker."""
    blocks = []
    for heading, items in sections:
        body = "\n".join(render_item(i) for i in items) if items else EMPTY
        blocks.append(f"## {heading}\n{body}")
    return "\n\n".join(blocks)


def parse(summary: str) -> dict[str, list[str]]:
    """Items per heading (lower-cased) of a summary in :func:`render`'s format.

    Text outside ``## heading`` sections and ``- item`` lines (prose, the
    empty marker) is ignored, so only itemized material is carried forward.
    """
    found: dict[str, list[str]] = {}
    items: list[str] | None = None
    for line in summary.splitlines():
        if line.startswith("## "):
            items = found.setdefault(line[3:].strip().lower(), [])
        elif items is None:
            continue
        elif line.startswith("- ") and line[2:].strip():
            items.append(line[2:].rstrip())
        elif line.startswith(INDENT) and line.strip() and items:
            items[-1] += "\n" + line[len(INDENT) :].rstrip()
    return found


@dataclass
class _Section:
    heading: str
    items: list[str]
    costs: list[int]

    @property
    def cost(self) -> int:
        return sum(self.costs)


def fit(sections: list[tuple[str, list[str]]], max_tokens: int) -> str:
    """The rendered sections within ``max_tokens``, oldest items dropped first.

    While over budget, the section currently costing the most tokens loses
    its first (oldest) item; ties go to the earlier section. Costs are
    estimated per line, then the exact count of the rendered text decides.
    """
    costs = tokens.count_many([render_item(i) + "\n" for _, items in sections for i in items])
    state: list[_Section] = []
    for heading, items in sections:
        state.append(_Section(heading, list(items), costs[: len(items)]))
        costs = costs[len(items) :]
    frame = tokens.count(render([(h, []) for h, _ in sections]))
    while frame + sum(s.cost for s in state) > max_tokens and _drop(state):
        pass
    text = render([(s.heading, s.items) for s in state])
    while tokens.count(text) > max_tokens and _drop(state):
        text = render([(s.heading, s.items) for s in state])
    return text if tokens.count(text) <= max_tokens else tokens.truncate(text, max_tokens)


def _drop(state: list[_Section]) -> bool:
    """Drop the oldest item of the costliest section; ``False`` when nothing is left."""
    candidates = [s for s in state if s.items]
    if not candidates:
        return False
    top = max(s.cost for s in candidates)
    section = next(s for s in candidates if s.cost == top)
    section.items.pop(0)
    section.costs.pop(0)
    return True


class ExtractiveSummarizer:
    """Fill each requested section with verbatim region material chosen by its heading.

    Headings map to material by keyword (see
    :data:`benchmark.summarizer.sections.KEYWORDS`): user messages, the
    first request, files with their operations, error lines from tool
    output, decisions stated with a reason, open checklist items, ticked
    items and commands run, the latest assistant statement, the latest
    stated next step, exact identifiers. A heading with no keyword gets the
    empty marker. With a previous summary, its items under the same heading
    are kept ahead of the new ones (duplicates once), so the oldest are the
    first dropped when the budget binds.
    """

    def summarize(self, request: SummaryRequest) -> str:
        region = Region(list(request.region))
        previous = parse(request.previous_summary or "")
        sections: list[tuple[str, list[str]]] = []
        for heading in request.sections:
            kind = kind_of(heading)
            fresh = EXTRACTORS[kind](region) if kind else []
            items: list[str] = []
            for item in [*previous.get(heading.strip().lower(), []), *fresh]:
                if item and item not in items:
                    items.append(item)
            sections.append((heading, items))
        return fit(sections, request.max_tokens)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
