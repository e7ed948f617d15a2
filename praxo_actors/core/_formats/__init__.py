"""Named tool-call formats: one model family's output each.

The package is imported on first use of a named format; ``_names`` and ``_models`` are light
enough for ``praxo_actors.core`` to import eagerly.
"""
