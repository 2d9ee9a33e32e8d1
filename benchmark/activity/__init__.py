"""What the agent did in a transcript: actions (tool calls, text command blocks)
paired with their results, and the file operations they performed.

Shared by probe extraction (artifact and recall probes) and the
``anchor_index`` policy, so both read a session the same way.
"""

from benchmark.activity.actions import Action, extract
from benchmark.activity.operations import FileOp, file_ops

__all__ = ["Action", "FileOp", "extract", "file_ops"]
