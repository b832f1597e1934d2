"""Tools that look into the live kernel: inspect a variable, run Python in the user namespace.

``inspect_variable`` is read-only (type, shape, length, a truncated repr; no code is evaluated,
only names and attributes are looked up). It refuses private and dunder attributes and the
kernel's own objects (``get_ipython``, the kernel session and its HMAC key, sockets), and shows ``os.environ`` with the values of secret-looking variables masked. ``run_python`` executes code in the notebook's own
namespace — it can change anything the user can, so it is *not* read-only: every call goes
through approval, in every permission mode (see :class:`clawnb.notebook.runner.NotebookGate`).
Its stdout, stderr and the value of a final expression come back, truncated.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import traceback
from typing import Any

from ..control.secrets import is_secret_name
from ..control.trust import ControlSnapshot, control_change_approved, undone_message
from ..tools.base import BaseTool, ToolError, require_str
from ..types import JSON, ToolDefinition, ToolTraits

__all__ = ["InspectVariableTool", "RunPythonTool", "describe_value"]

_MAX_OUTPUT = 10_000


def _truncate(text: str, limit: int = _MAX_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [truncated, {len(text) - limit} more characters]"


def describe_value(value: Any, *, limit: int = 2000) -> str:
    """Type, shape/dtype/length where the object has them, and a truncated repr."""
    kind = type(value)
    lines = [f"type: {kind.__module__}.{kind.__qualname__}".replace("builtins.", "")]
    for attr in ("shape", "dtype"):
        try:
            extra = getattr(value, attr, None)
        except Exception:
            extra = None
        if extra is not None and not callable(extra):
            lines.append(f"{attr}: {extra}")
    try:
        lines.append(f"len: {len(value)}")
    except Exception:
        pass
    columns = getattr(value, "columns", None)
    if columns is not None and not callable(columns):
        with contextlib.suppress(Exception):
            lines.append(f"columns: {list(columns)[:50]}")
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<repr failed: {exc}>"
    lines.append("repr:\n" + _truncate(text, limit))
    return "\n".join(lines)


# Names IPython puts into the user namespace: the shell, its history and exit helpers.
KERNEL_NAMES = frozenset({"get_ipython", "exit", "quit", "In", "Out"})
# Objects of these packages are the kernel's machinery (the shell, the session and its HMAC
# key, sockets), not the user's data.
_INTERNAL_MODULES = (
    "IPython",
    "ipykernel",
    "jupyter_client",
    "jupyter_core",
    "zmq",
    "traitlets",
    "tornado",
    "comm",
)


def _user_name(name: str) -> bool:
    return not name.startswith("_") and name not in KERNEL_NAMES


def _is_internal(value: Any) -> bool:
    for obj in (value, getattr(value, "__self__", None)):
        if obj is None:
            continue
        module = getattr(type(obj), "__module__", "") or ""
        if module.split(".")[0] in _INTERNAL_MODULES:
            return True
    return False


def refuse_kernel_internals(name: str, value: Any) -> None:
    """:class:`ToolError` when ``value`` belongs to the kernel's or the agent's machinery."""
    if _is_internal(value):
        raise ToolError(
            f"'{name}' is part of the kernel or the agent itself "
            f"({type(value).__module__}.{type(value).__qualname__}), not a user variable"
        )


def hide_secret_env(value: Any) -> Any:
    """``os.environ`` (or a copy) with the values of secret-looking names masked, so
    inspecting the environment shows which variables exist, never a token or password."""
    if isinstance(value, os._Environ) or (
        isinstance(value, dict)
        and value
        and all(isinstance(k, str) for k in value)
        and any(is_secret_name(k) for k in value)
        and "PATH" in value
    ):
        return {k: ("***" if _secret_key(k) else v) for k, v in value.items()}
    return value


def _secret_key(name: Any) -> bool:
    return is_secret_name(os.fsdecode(name) if isinstance(name, bytes) else str(name))


# Values this short are not masked inside other text: "yes" or "1" would mangle everything.
_MIN_MASKED = 6


def hide_secret_values(text: str) -> str:
    """``text`` with the values of the environment's secret-looking variables masked wherever
    they appear: a repr reaches ``os.environ`` by many roads (``os.environ.copy`` is a bound
    method whose repr is the whole mapping, a ``ChainMap`` or a list holding it, a user
    object keeping it), and checking each road's shape would always miss the next one."""
    values = {
        v for k, v in os.environ.items() if is_secret_name(k) and len(v.strip()) >= _MIN_MASKED
    }
    for value in sorted(values, key=len, reverse=True):
        for spelled in {value, repr(value)[1:-1]}:
            if spelled in text:
                text = text.replace(spelled, "***")
    return text


class _KernelTool(BaseTool):
    """A tool over the kernel's user namespace (the notebook's live variables)."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace


class InspectVariableTool(_KernelTool):
    traits = ToolTraits(read_only=True)

    definition = ToolDefinition(
        "inspect_variable",
        "Describe a variable of the user's live Python kernel: type, shape, length and a "
        "truncated repr. Use a plain name or a dotted attribute path (df.columns); no code "
        "runs, so for an expression such as df.head() use run_python.",
    ).param("name", "string", "Variable name, e.g. df or model.config", required=True)

    async def call(self, args: JSON) -> str:
        name = require_str(args, "name").strip()
        head, *rest = name.split(".")
        if not head.isidentifier() or not all(p.isidentifier() for p in rest):
            raise ToolError(f"'{name}' is not a variable name (no expressions, only a.b.c)")
        private = [p for p in rest if p.startswith("_")]
        if private:
            raise ToolError(
                f"'{name}': private and dunder attributes ({private[0]}) are not inspected"
            )
        if head not in self.namespace or head.startswith("_") or head in KERNEL_NAMES:
            visible = sorted(k for k in self.namespace if _user_name(k))[:40]
            raise ToolError(f"no variable '{head}' in the kernel; defined: {', '.join(visible)}")
        value = self.namespace[head]
        for attr in rest:
            refuse_kernel_internals(name, value)
            try:
                value = getattr(value, attr)
            except Exception as exc:
                raise ToolError(f"cannot get '{attr}' of {name}: {exc}") from exc
        refuse_kernel_internals(name, value)
        return f"{name}\n" + hide_secret_values(describe_value(hide_secret_env(value)))

    def bind_value(self, base: str, value: object) -> str:
        """Put ``value`` (an MCP tool's big structured result) into the kernel under a fresh
        name — ``mcp_<base>``, then ``mcp_<base>_2`` … — that the model and the person can
        look into; never over an existing variable."""
        stem = "mcp_" + "".join(c if c.isalnum() or c == "_" else "_" for c in base).lower()
        name, n = stem, 2
        while name in self.namespace:
            name, n = f"{stem}_{n}", n + 1
        self.namespace[name] = value
        return name


class RunPythonTool(_KernelTool):
    """Run code in the kernel namespace. ``always_ask``: the notebook gate asks even in
    bypass mode.

    Code that runs in the kernel is not sandboxed, and an allow policy (``CLAWNB_APPROVAL``,
    "always allow") may have let it run without a person reading it, so what it does to the
    control files is judged by its effect, as for unsandboxed bash: unless the person approved
    this very call as a change to a control file, a :class:`ControlSnapshot` taken before it
    puts them back after it, and the result says so."""

    # code in the person's own kernel: asked about in every mode
    traits = ToolTraits(always_asks=True, destructive=True)

    def __init__(
        self, namespace: dict[str, Any], *, workspace: str | os.PathLike[str] | None = None
    ) -> None:
        super().__init__(namespace)
        self.workspace = workspace

    definition = ToolDefinition(
        "run_python",
        "Run Python code in the user's live notebook kernel (its variables are available; "
        "changes persist). Returns stdout, stderr and the value of a final expression.",
    ).param("code", "string", "Python source to execute", required=True)

    async def call(self, args: JSON) -> str:
        code = require_str(args, "code")
        try:
            tree = ast.parse(code, "<run_python>", "exec")
        except SyntaxError as exc:
            raise ToolError(f"syntax error: {exc.msg} (line {exc.lineno})") from exc
        if control_change_approved.get():
            return self._run(tree)
        workspace = self.workspace if self.workspace is not None else os.getcwd()
        guard = ControlSnapshot.take(workspace)  # SafetyViolation: refused before it runs
        try:
            result = self._run(tree)
        except ToolError as exc:
            undone = guard.undo()
            if undone:
                note = undone_message("run_python", undone, workspace, guard.not_restored)
                raise ToolError(f"{exc}\n[{note}]") from None
            raise
        except BaseException:
            guard.undo()  # interrupted: its changes to the control files go too
            raise
        undone = guard.undo()
        if undone:
            note = undone_message("run_python", undone, workspace, guard.not_restored)
            result += f"\n[{note}]"
        return result

    def _run(self, tree: ast.Module) -> str:
        last_expr = None
        if tree.body and isinstance(last := tree.body[-1], ast.Expr):
            tree.body.pop()
            last_expr = ast.Expression(last.value)
        out, err = io.StringIO(), io.StringIO()
        value: Any = None
        failed = ""
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                exec(compile(tree, "<run_python>", "exec"), self.namespace)
                if last_expr is not None:
                    value = eval(compile(last_expr, "<run_python>", "eval"), self.namespace)
            except Exception:
                failed = traceback.format_exc(limit=-3)
        parts = []
        if out.getvalue():
            parts.append(out.getvalue().rstrip("\n"))
        if err.getvalue():
            parts.append("stderr: " + err.getvalue().rstrip("\n"))
        if value is not None:
            parts.append(_truncate(repr(value), 4000))
        if failed:
            parts.append(failed.rstrip("\n"))
        text = _truncate("\n".join(parts)) or "(no output)"
        if failed:
            raise ToolError(text)
        return text
