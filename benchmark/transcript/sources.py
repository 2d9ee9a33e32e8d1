"""Where a job's transcripts come from: generated sessions or files on disk."""

from __future__ import annotations

from benchmark.config import FileTranscripts, SyntheticTranscripts
from benchmark.transcript.loader import load_file
from benchmark.transcript.models import Transcript


def load_transcripts(config: SyntheticTranscripts | FileTranscripts) -> list[Transcript]:
    if isinstance(config, SyntheticTranscripts):
        from benchmark.transcript.synthetic import generate

        return [
            generate(
                seed=config.seed + i,
                target_tokens=config.target_tokens,
                transcript_id=f"synthetic-s{config.seed + i}",
            )
            for i in range(config.sessions)
        ]
    transcripts = [load_file(path) for path in config.paths]
    ids = [t.id for t in transcripts]
    # Two files with the same stem would collide in probe ids and artifacts.
    return [
        t if ids.count(t.id) == 1 else t.model_copy(update={"id": f"{t.id}-{i}"})
        for i, t in enumerate(transcripts)
    ]
