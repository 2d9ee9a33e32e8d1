"""A point's compacted context as run files, the uncompacted session written once.

Where a point's context is the session prefix itself (``policy=none``, or a point
whose policy kept everything), writing it whole at every point repeats the session
again and again: disk and time grow with points x session length. Such a context
is appended, message by message, to ``contexts/<transcript>/session.jsonl`` and
``session.txt`` (only what the file does not hold yet), and the point's files say
where it is: ``point_<k>.json`` holds ``{"session": "session.jsonl", "messages":
N}`` (its first N lines) and ``point_<k>.txt`` one line naming ``session.txt`` and
its first L lines. Any other context (a compacted one) is written whole, as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmark.llm.prompting import render_all
from benchmark.run.results import PointResult
from benchmark.transcript.models import Message

SESSION = "session"


class ContextFiles:
    """Writes each point's context under ``folder``; keeps the current transcript's shared
    session messages (references, not copies) to tell whether a context extends them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.transcript: str | None = None
        self.shared: list[Message] = []
        self.lines = 0  # lines of session.txt so far

    def write(self, point: PointResult) -> str:
        """Write ``point``'s context files; return the ``.txt`` path, relative to ``folder``."""
        tid, ordinal = point.point.transcript_id, point.point.ordinal
        where = self.folder / tid
        where.mkdir(parents=True, exist_ok=True)
        if tid != self.transcript:
            self.transcript, self.shared, self.lines = tid, [], 0
        head: dict[str, Any] = {
            "point": point.point.model_dump(),
            "tokens_after": point.tokens_after,
        }
        json_path, txt_path = where / f"point_{ordinal}.json", where / f"point_{ordinal}.txt"
        if self._extends(point):
            self._append(where, point.context[len(self.shared) :])
            n = len(point.context)
            json_path.write_text(
                json.dumps({**head, "session": f"{SESSION}.jsonl", "messages": n}, indent=1),
                encoding="utf-8",
            )
            txt_path.write_text(
                f"This point's context is the uncompacted session up to message {n - 1}: the "
                f"first {self.lines} lines of {SESSION}.txt in this folder (its first {n} "
                f"messages, the first {n} lines of {SESSION}.jsonl).\n",
                encoding="utf-8",
            )
        else:
            messages = [m.model_dump(exclude_none=True) for m in point.context]
            json_path.write_text(json.dumps({**head, "messages": messages}, indent=1), "utf-8")
            txt_path.write_text(render_all(point.context) + "\n", encoding="utf-8")
        return f"contexts/{tid}/point_{ordinal}.txt"

    def _extends(self, point: PointResult) -> bool:
        """The context is the session prefix up to the point (every message kept, no token
        saved) and begins with what the session file holds."""
        context = point.context
        if len(context) != point.point.end or point.tokens_after != point.point.tokens_before:
            return False
        if len(context) < len(self.shared):
            return False
        return all(a is b or a == b for a, b in zip(self.shared, context, strict=False))

    def _append(self, where: Path, new: list[Message]) -> None:
        if not new:
            return
        with open(where / f"{SESSION}.jsonl", "a", encoding="utf-8") as file:
            for m in new:
                file.write(json.dumps(m.model_dump(exclude_none=True)) + "\n")
        text = render_all(new) + "\n"
        with open(where / f"{SESSION}.txt", "a", encoding="utf-8") as file:
            file.write(("\n" if self.lines else "") + text)  # blocks apart, as render_all
        self.lines += text.count("\n") + (1 if self.lines else 0)
        self.shared.extend(new)
