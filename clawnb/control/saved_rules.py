"""Rules a person saved from an approval question ("always allow ``git status*``").

Two files hold them, each written by clawnb alone, whole and atomically
(:func:`clawnb.control.files.replace_file`):

* **this project** — ``.claw/rules.local.toml`` next to the project's ``.claw/config.toml``.
  It is the project's *local* file: keep it out of version control (clawnb writes a
  ``.claw/.gitignore`` naming it when there is none). A repository cannot ship one: clawnb
  records the fingerprint of what it wrote in the user's own config directory
  (``saved_rules.json``) and reads the file only while it still has that fingerprint; a file
  clawnb did not write is ignored with one warning.
* **you, everywhere** — ``rules.toml`` in the user config directory
  (``~/.config/clawnb/rules.toml``), beside ``config.toml`` (which clawnb never rewrites: it
  is the person's own text).

Both hold one list, ``[permissions] allow``, and are read by
:meth:`clawnb.config.ConfigLoader.load` as layers named ``saved`` (``/rules`` shows them with
their file; ``/rules forget PATTERN`` removes one). Anything else in them is an error naming
the file, as for every config file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from .files import replace_file
from .trust import project_config_path, user_config_dir

__all__ = [
    "LOCAL_RULES_FILE",
    "always_rows",
    "SAVE_PLACES",
    "USER_RULES_FILE",
    "forget_rule",
    "read_saved",
    "rules_path",
    "save_rule",
    "saved_rule_files",
]

LOCAL_RULES_FILE = "rules.local.toml"
USER_RULES_FILE = "rules.toml"
RECORD_FILE = "saved_rules.json"
# how long an "always" lasts: this session, saved for this project, saved for the person
SAVE_PLACES = ("session", "project", "user")

_HEADER = (
    '# Written by clawnb: rules saved from approval questions ("always").\n'
    "# /rules (or %claw rules) lists them; /rules forget PATTERN removes one.\n"
)


class SavedRulesError(ValueError):
    """A saved-rules file that cannot be read or written; the message is one line."""


def rules_path(
    where: str,
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
) -> Path:
    """The file an "always" saved ``where`` (``"project"`` or ``"user"``) goes to."""
    if where == "project":
        return project_config_path(workspace).parent / LOCAL_RULES_FILE
    if where == "user":
        return user_config_dir(config_home) / USER_RULES_FILE
    raise ValueError(f"rules are saved in 'project' or 'user', not {where!r}")


def saved_rule_files(
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
) -> list[tuple[str, Path]]:
    """``[("project", FILE), ("user", FILE)]``: where saved rules live for ``workspace``."""
    return [(w, rules_path(w, workspace, config_home=config_home)) for w in ("project", "user")]


def _fingerprint(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _record_path(config_home: str | os.PathLike[str] | None) -> Path:
    return user_config_dir(config_home) / RECORD_FILE


def _records(config_home: str | os.PathLike[str] | None) -> dict[str, str]:
    try:
        data = json.loads(_record_path(config_home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return {k: v for k, v in files.items() if isinstance(v, str)} if isinstance(files, dict) else {}


def _remember(path: Path, data: bytes | None, config_home: str | os.PathLike[str] | None) -> None:
    records = _records(config_home)
    key = os.path.realpath(path)
    if data is None:
        records.pop(key, None)
    else:
        records[key] = _fingerprint(data)
    record = _record_path(config_home)
    record.parent.mkdir(parents=True, exist_ok=True)
    replace_file(record, (json.dumps({"files": records}, indent=2) + "\n").encode())


def read_saved(
    where: str,
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
) -> tuple[Path, list[str], str | None]:
    """``(file, rules, notice)``: the rules saved ``where``. A project file clawnb did not
    write (a repository shipped it, or it was edited by hand) gives no rules and a notice."""
    path = rules_path(where, workspace, config_home=config_home)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return path, [], None
    except OSError as exc:
        raise SavedRulesError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if where == "project" and _records(config_home).get(os.path.realpath(path)) != _fingerprint(
        data
    ):
        return (
            path,
            [],
            f"clawnb: {path} was not written by clawnb here (a repository cannot grant itself "
            "allow rules), so it is ignored; delete it, or save rules again from an approval",
        )
    return path, _parse(path, data), None


def _parse(path: Path, data: bytes) -> list[str]:
    try:
        table = tomllib.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SavedRulesError(f"{path}: invalid TOML: {exc}") from None
    permissions = table.get("permissions", {})
    extra = [k for k in table if k != "permissions"]
    if isinstance(permissions, dict):
        extra += [f"permissions.{k}" for k in permissions if k != "allow"]
    if extra or not isinstance(permissions, dict):
        shown = ", ".join(extra) or "permissions"
        raise SavedRulesError(
            f"{path}: key '{shown}': a saved-rules file holds only [permissions] allow"
        )
    allow = permissions.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(r, str) for r in allow):
        raise SavedRulesError(f"{path}: key 'permissions.allow': expected a list of strings")
    return list(dict.fromkeys(allow))


def _write(
    path: Path, rules: list[str], where: str, config_home: str | os.PathLike[str] | None
) -> None:
    lines = [_HEADER, "[permissions]\n", "allow = [\n"]
    lines += [f"  {json.dumps(rule, ensure_ascii=False)},\n" for rule in rules]
    lines.append("]\n")
    data = "".join(lines).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if where == "project":
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            replace_file(
                ignore, f"# clawnb's local files: not for version control\n{path.name}\n".encode()
            )
    replace_file(path, data)
    if where == "project":
        _remember(path, data, config_home)


def save_rule(
    rule: str,
    where: str,
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
) -> Path:
    """Add the allow ``rule`` to the file for ``where``; returns the file."""
    path, rules, _notice = read_saved(where, workspace, config_home=config_home)
    if rule not in rules:
        rules.append(rule)
    _write(path, rules, where, config_home)
    return path


def forget_rule(
    rule: str,
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Remove the saved allow ``rule`` (its exact text) from both files; the files it left."""
    left: list[Path] = []
    for where in ("project", "user"):
        path, rules, _notice = read_saved(where, workspace, config_home=config_home)
        if rule in rules:
            _write(path, [r for r in rules if r != rule], where, config_home)
            left.append(path)
    return left


def always_rows(offers: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """``(rule, save, text)`` for each scoped "always" the gate offered and how long it may
    last: for this session, or — a saveable one — saved for this project or for the person,
    in the file the gate named (``offer["files"]``). The chat and the notebook's stdin number the same rows."""
    rows: list[tuple[str, str, str]] = []
    for offer in offers:
        rule, label = str(offer["rule"]), str(offer["label"])
        rows.append((rule, "session", f"{label}  for this session"))
        files = offer.get("files") or {}
        if offer.get("saveable"):
            for where, what in (("project", "this project"), ("user", "you, everywhere")):
                rows.append((rule, where, f"{label}  saved for {what} ({files.get(where, '?')})"))
    return rows
