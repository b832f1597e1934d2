"""A real ipykernel driven through jupyter_client, with a tiny fake frontend that renders
widget views (bumps ``_view_count``) and clicks buttons by description."""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@dataclass
class Frontend:
    render: bool = True  # answer displayed widget views like a browser would
    click: str | None = None  # description of the button to click when it appears


@dataclass
class Run:
    outputs: list[dict[str, Any]] = field(default_factory=list)  # after clear_output
    all_messages: list[dict[str, Any]] = field(default_factory=list)
    status: str = ""
    interrupt_to_idle: float | None = None
    widget_states: dict[str, dict[str, Any]] = field(default_factory=dict)  # the final states
    # every state the kernel sent, in order: (comm id, the state or the part that changed).
    # Intermediate states live here, not in ``widget_states``, which later updates overwrite.
    widget_updates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)  # input() prompts the kernel sent

    @property
    def text(self) -> str:
        parts = []
        for out in self.outputs:
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif out["output_type"] in ("display_data", "execute_result"):
                parts.append(out["data"].get("text/plain", ""))
            elif out["output_type"] == "error":
                parts.append(f"{out['ename']}: {out['evalue']}")
        return "".join(parts)


def kernel_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CLAWNB_") and k not in ("OPENROUTER_API_KEY", "OPENAI_API_KEY")
    }
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["XDG_CONFIG_HOME"] = str(tmp / ".config")
    env["PYTHONWARNINGS"] = "ignore"
    env.update(extra)
    return env


class Kernel:
    def __init__(self, cwd: Path, env: dict[str, str], kernel_name: str = "python3") -> None:
        from jupyter_client import KernelManager

        self.km = KernelManager(kernel_name=kernel_name)
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def _comm(self, comm_id: str, data: dict[str, Any]) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)

    def execute(
        self,
        code: str,
        *,
        frontend: Frontend | None = None,
        allow_stdin: bool = True,
        interrupt_after: float | None = None,
        interrupt_when: str | None = None,
        interrupt_if: Callable[[Run], bool] | None = None,
        timeout: float = 30,
        stdin_reply: str | None = None,
    ) -> Run:
        """Run ``code``; interrupt after a delay, once ``interrupt_when`` appears in the
        output, or once ``interrupt_if(run so far)`` holds; return the outputs as a notebook
        would keep them."""
        frontend = frontend or Frontend(render=False)
        run = Run()
        msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        start = time.monotonic()
        interrupted_at: float | None = None
        seen_text = ""
        clicked: set[str] = set()
        while time.monotonic() - start < timeout:
            now = time.monotonic()
            want_interrupt = (
                (interrupt_after is not None and now - start > interrupt_after)
                or (
                    interrupt_when is not None
                    and (
                        interrupt_when in seen_text or any(interrupt_when in p for p in run.prompts)
                    )
                )
                or (interrupt_if is not None and interrupt_if(run))
            )
            if want_interrupt and interrupted_at is None:
                self.km.interrupt_kernel()
                interrupted_at = time.monotonic()
            if allow_stdin:
                try:
                    request = self.kc.get_stdin_msg(timeout=0)
                except queue.Empty:
                    request = None
                if request is not None and request["msg_type"] == "input_request":
                    run.prompts.append(request["content"]["prompt"])
                    if stdin_reply is not None:
                        self.kc.input(stdin_reply)
            try:
                msg = self.kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            kind, content = msg["msg_type"], msg["content"]
            run.all_messages.append(msg)
            update: dict[str, Any] | None = None
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                update = dict(content["data"].get("state", {}))
                run.widget_states[content["comm_id"]] = dict(update)
            elif kind == "comm_msg":
                data = content.get("data", {})
                if data.get("method") == "update":
                    update = dict(data.get("state", {}))
                    run.widget_states.setdefault(content["comm_id"], {}).update(update)
            if update is not None:
                run.widget_updates.append((content["comm_id"], update))
                if "waiting for approval" in str(update.get("value", "")):
                    seen_text += "waiting for approval"
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if kind == "status" and content["execution_state"] == "idle":
                if interrupted_at is not None:
                    run.interrupt_to_idle = time.monotonic() - interrupted_at
                break
            if kind == "clear_output":
                run.outputs.clear()
            elif kind == "stream":
                run.outputs.append({"output_type": "stream", "text": content["text"]})
                seen_text += content["text"]
            elif kind in ("display_data", "execute_result"):
                run.outputs.append({"output_type": kind, "data": content["data"]})
                seen_text += content["data"].get("text/plain", "")
                model = content["data"].get(WIDGET_MIME, {}).get("model_id")
                if model and frontend.render:
                    self._comm(
                        model, {"method": "update", "state": {"_view_count": 1}, "buffer_paths": []}
                    )
            elif kind == "error":
                run.outputs.append(
                    {"output_type": "error", "ename": content["ename"], "evalue": content["evalue"]}
                )
            # click a button as soon as it exists
            if frontend.click:
                for comm_id, state in run.widget_states.items():
                    if state.get("description") == frontend.click and comm_id not in clicked:
                        clicked.add(comm_id)
                        self._comm(comm_id, {"method": "custom", "content": {"event": "click"}})
        else:
            raise TimeoutError(f"cell did not finish in {timeout}s; outputs: {run.outputs}")
        reply = self.kc.get_shell_msg(timeout=10)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=10)
        run.status = reply["content"]["status"]
        return run
