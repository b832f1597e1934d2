"""Auto memory (issue 25 items 4 and 5): what clawnb learns about the person and the project,
kept across sessions as Markdown files.

* :mod:`clawnb.memory.store` — one file per memory with frontmatter, the capped ``MEMORY.md``
  index, the user's folder and the project's (``.claw/memory``), the index text loaded into
  the context (the project's only in a trusted workspace), evidence that went stale;
* :mod:`clawnb.memory.extract` — after a turn, off the critical path, one tool-less model call
  reviews the turn and answers with create/update/delete operations;
* :mod:`clawnb.memory.consolidate` — the gates and the lock file of consolidation.

Nothing here is imported by ``import clawnb``; a session imports it when memory is on.
"""
