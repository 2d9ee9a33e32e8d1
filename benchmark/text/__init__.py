"""Text utilities every stage shares: token counts, identifiers, terms and cue words.

``tokens`` (counting with an offline encoding), ``identifiers`` (paths, symbols, ids
found in text), ``terms`` and ``cues`` (word lists that mark decisions, errors and
requests). Pure functions of text: they import nothing else from ``benchmark``.
"""
