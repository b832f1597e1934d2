"""``/memory`` and ``%claw memory``: what auto memory keeps (one registry entry,
:mod:`clawnb.session.commands`).

* ``memory`` — every memory, the person's and (in a trusted workspace) the project's, one line
  each; a memory whose evidence changed is marked ``(possibly stale)``;
* ``memory show NAME`` — its file;
* ``memory forget NAME`` — delete it (the person typed it: the model cannot run a command);
* ``memory edit NAME`` — where its file is, to open in an editor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..control.secrets import redact
from ..errors import CommandError
from .store import MemoryStore, is_stale, project_memory_dir, user_memory_dir

USAGE = "memory [show NAME | forget NAME | edit NAME]"


def _stores(session: Any) -> tuple[list[MemoryStore], bool, bool]:
    """(the stores to show, trusted, on)."""
    keeper = getattr(session, "memory", None)
    workspace = Path(session.workspace)
    if keeper is not None:
        trusted = bool(keeper.trusted)
    else:
        from ..control.trust import TrustStore, project_config_path

        trusted = TrustStore().is_trusted(workspace, project_config_path(workspace))
    stores = [MemoryStore(user_memory_dir())]
    if trusted:
        stores.append(MemoryStore(project_memory_dir(workspace)))
    return stores, trusted, keeper is not None


def memory_text(session: Any, argv: list[str], prefix: str = "/") -> str:
    """What ``/memory`` answers for ``argv`` (the words after it)."""
    stores, trusted, on = _stores(session)
    workspace = Path(session.workspace)
    if not argv or argv == ["list"]:
        state = "on" if on else f"off (memory = {session.config.memory!r})"
        lines = [f"auto memory: {state}"]
        for store in stores:
            memories = store.all()
            lines.append(f"{store.root}: {len(memories)} memories")
            for m in memories:
                stale = " (possibly stale)" if is_stale(m, workspace) else ""
                lines.append(f"  {m.name} [{m.type}]{stale} — {m.description}")
        if not trusted:
            lines.append("(the project's memory is used only in a trusted workspace: /trust)")
        lines.append(f"({prefix}memory show NAME, {prefix}memory forget NAME, edit NAME)")
        return redact("\n".join(lines))
    if len(argv) != 2 or argv[0] not in ("show", "forget", "edit"):
        raise CommandError(f"usage: {prefix}{USAGE}")
    action, name = argv
    for store in stores:
        memory = store.get(name)
        if memory is None:
            continue
        path = store.root / f"{memory.slug}.md"
        if action == "show":
            stale = (
                "\n(possibly stale: the file it was learnt from changed since)"
                if is_stale(memory, workspace)
                else ""
            )
            return redact(f"{path}\n{memory.to_text().rstrip()}{stale}")
        if action == "forget":
            store.delete(name)
            keeper = getattr(session, "memory", None)
            if keeper is not None:
                keeper.changed()
            return f"forgot {memory.name} ({path} deleted)"
        return f"edit {path} in an editor; the index is rebuilt at the next change"
    raise CommandError(f"no memory named {name!r} (see {prefix}memory)")
