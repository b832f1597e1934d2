"""Prompts that talk about the notebook: ``{name}`` variables and ``In[n]``/``Out[n]``/``Err[n]``.

* ``{name}`` (or ``{name.attr}``) is replaced by ``str()`` of a kernel variable. Unknown names and
  anything that is not a plain dotted name (``{1+1}``, ``{ x }``, a JSON snippet) are left
  untouched — prompts often contain braces that were never meant as templates. ``{{`` and ``}}``
  give literal braces. No code is evaluated: only names and attribute look-ups. A value that
  holds a known key (:mod:`clawnb.control.secrets`) is refused with :class:`SecretInPromptError`.
* ``In[3]``, ``Out[3]``, ``Err[3]`` and a bare ``Err`` (the last error) are *references*: the
  prompt keeps them as written and the referenced cell source, output repr or error traceback is
  attached below the prompt, so the model sees what the user points at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..control.secrets import redact
from ..errors import SecretInPromptError

__all__ = ["SecretInPromptError", "collect_references", "expand_prompt", "interpolate"]

_TEMPLATE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")
_REFERENCE = re.compile(r"\b(In|Out|Err)\[(\d+)\]|\bErr\b(?!\[)")
_MISSING = object()
_MAX_VALUE = 4000


def _lookup(namespace: Mapping[str, Any], dotted: str) -> Any:
    head, *rest = dotted.split(".")
    if head not in namespace or head.startswith("_"):
        return _MISSING
    value = namespace[head]
    for attr in rest:
        if attr.startswith("_"):
            return _MISSING  # private attributes stay private
        try:
            value = getattr(value, attr)
        except Exception:
            return _MISSING
    return value


def _full_text(value: Any) -> str:
    try:
        return str(value)
    except Exception as exc:  # a broken __str__ must not break the prompt
        return f"<{type(value).__name__}: str() failed: {exc}>"


def _cut(text: str) -> str:
    # Cut only after looking for keys: a key straddling the cut would otherwise go out minus
    # its last characters, which no redactor recognises.
    if len(text) > _MAX_VALUE:
        text = text[:_MAX_VALUE] + f"… [{len(text) - _MAX_VALUE} more characters]"
    return text


def interpolate(prompt: str, namespace: Mapping[str, Any]) -> str:
    """Replace ``{name}`` by kernel variables; see the module docstring for the rules."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        value = _lookup(namespace, match.group(1))
        if value is _MISSING:
            return token
        text = _full_text(value)
        if redact(text) != text:
            raise SecretInPromptError(
                f"{{{match.group(1)}}} holds an API key or a token (it matches a known secret), "
                "so it was not put into the prompt; pass the part you mean without the key"
            )
        return _cut(text)

    return _TEMPLATE.sub(replace, prompt)


def collect_references(
    prompt: str,
    *,
    inputs: list[str] | None = None,
    outputs: Mapping[int, Any] | None = None,
    errors: Mapping[int, str] | None = None,
) -> list[tuple[str, str]]:
    """``[(label, text)]`` for every ``In[n]``/``Out[n]``/``Err[n]``/``Err`` the prompt names,
    in order of first mention; references to cells that do not exist say so."""
    inputs = inputs or []
    outputs = outputs or {}
    errors = errors or {}
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for match in _REFERENCE.finditer(prompt):
        kind, number = match.group(1), match.group(2)
        if kind is None:  # bare Err: the most recent error
            label = "Err"
            if errors:
                last = max(errors)
                text = f"(from cell {last})\n{errors[last]}"
            else:
                text = "(no error has happened in this kernel)"
        else:
            n = int(number)
            label = f"{kind}[{n}]"
            if kind == "In":
                text = inputs[n] if 0 < n < len(inputs) else f"(there is no input cell {n})"
            elif kind == "Out":
                text = (
                    _cut(redact(_full_text(repr(outputs[n]))))
                    if n in outputs
                    else f"(cell {n} has no output)"
                )
            else:
                text = errors.get(n, f"(cell {n} raised no error)")
        if label not in seen:
            seen.add(label)
            found.append((label, text))
    return found


def _raw_inputs(shell: Any) -> list[str]:
    # the raw cells (a %%claw cell's transformed text would be an `await …` line)
    history = getattr(shell, "history_manager", None)
    raw = getattr(history, "input_hist_raw", None)
    if raw:
        return list(raw)
    return list(shell.user_ns.get("In", []) or [])


def expand_prompt(prompt: str, shell: Any = None, errors: Mapping[int, str] | None = None) -> str:
    """The prompt the model gets: variables interpolated, references attached below it."""
    if shell is None:
        return prompt
    text = interpolate(prompt, shell.user_ns)
    refs = collect_references(
        prompt,
        inputs=_raw_inputs(shell),
        outputs=dict(shell.user_ns.get("Out", {}) or {}),
        errors=errors,
    )
    if not refs:
        return text
    # a referenced output or traceback may quote a key: it goes to the model redacted
    blocks = [f"--- {label} ---\n{redact(body)}" for label, body in refs]
    return text + "\n\nReferenced notebook context:\n" + "\n\n".join(blocks)
