"""Play the learner: take a chapter notebook's solution cells, introduce one typical bug, run
the cells as a kernel would, and hand the resulting objects to ``check()`` exactly as the
notebook's check cell does."""

from __future__ import annotations

import ast
import json
import linecache
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
_SAFE = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Bug:
    """One typical mistake: in ``notebook``, ``old`` becomes ``new`` (each must occur once)."""

    id: str
    chapter: str  # what the check cell passes to check()
    notebook: str
    kind: str  # the family of mistake, for the trial table
    old: str
    new: str
    fails: str  # the test that must report it
    extra: tuple[tuple[str, str], ...] = ()  # further (old, new) edits of the same bug
    limit: float = 3.0  # check()'s per-test time limit (short for the bugs that loop)
    slower: float = 0.0  # seconds more the whole check may take (its tests start real servers)


def _defines_only(statement: ast.stmt) -> bool:
    """Imports, definitions and plain constants; not the "try it" code that runs things."""
    if isinstance(statement, _SAFE):
        return True
    return isinstance(statement, ast.Assign) and not any(
        isinstance(n, (ast.Call, ast.Await)) for n in ast.walk(statement)
    )


def _cells(notebook: str) -> list[dict[str, Any]]:
    path = next(NOTEBOOKS.glob(f"{notebook}_*.ipynb"))
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def check_call(notebook: str) -> tuple[str, list[str]]:
    """The chapter and the keyword names of the notebook's ``check(...)`` cell."""
    for cell in _cells(notebook):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "from clawnb.course import check" in source:
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check":
                    return node.args[0].value, [k.arg for k in node.keywords]
    raise LookupError(f"no check cell in {notebook}")


def learner_objects(notebook: str, edits: list[tuple[str, str]]) -> dict[str, Any]:
    """Run the notebook's definition cells with ``edits`` applied; return its check's objects."""
    sources = []
    for cell in _cells(notebook):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or "from clawnb.course import check" in source:
            continue
        solution = {"solution", "parts"} & set(cell.get("metadata", {}).get("tags", []))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if solution or all(_defines_only(s) for s in tree.body):
            sources.append(source)
    code = "\n\n".join(sources)
    for old, new in edits:
        assert code.count(old) == 1, f"the bug's text must occur once in {notebook}: {old!r}"
        code = code.replace(old, new)
    filename = f"<learner {notebook}>"
    # Like IPython: register the source so inspect.getsource (stub detection) can read it.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    # A real module, as ``__main__`` is in a kernel (dataclasses look their module up).
    module = types.ModuleType(f"learner_{notebook}")
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    exec(compile(code, filename, "exec"), namespace)
    _, names = check_call(notebook)
    return {name: namespace[name] for name in names}


BUGS = [
    Bug(
        "mock-pops-from-the-end",
        "ch01",
        "01",
        "wrong order",
        "return self._queue.popleft()",
        "return self._queue.pop()",
        "test_mock_steps_through_sequence",
    ),
    Bug(
        "mock-empty-text-becomes-none",
        "ch01",
        "01",
        'None vs ""',
        "return self._queue.popleft()",
        "turn = self._queue.popleft()\n        turn.text = turn.text or None\n        return turn",
        "test_mock_empty_text_is_some",
    ),
    Bug(
        "mock-waits-forever-for-a-response",
        "ch01",
        "01",
        "infinite retry loop",
        'if not self._queue:\n            raise RuntimeError("MockProvider: no more responses")',
        "while not self._queue:\n            pass  # wait until a response arrives",
        "test_mock_empty_responses_exhausted",
        limit=0.5,
    ),
    Bug(
        "mock-consumes-the-callers-list",
        "ch01",
        "01",
        "mutates its argument",
        "self._queue = deque(responses)",
        "self._queue = responses",
        "test_mock_leaves_the_callers_list_alone",
        (("return self._queue.popleft()", "return self._queue.pop(0)"),),
    ),
    Bug(
        "read-numbers-the-lines",
        "ch02",
        "02",
        "output not exactly the file",
        "return Path(path).read_text()",
        'return "".join(f"{n}: {line}" for n, line in enumerate(Path(path).read_text().splitlines(True), 1))',
        "test_read_read_file",
    ),
    Bug(
        "single-turn-results-before-the-turn",
        "ch03",
        "03",
        "wrong order",
        "    messages.append(Message.Assistant(turn))\n    messages.extend(Message.ToolResult(c.id, r) for c, r in zip(turn.tool_calls, results, strict=True))",
        "    messages.extend(Message.ToolResult(c.id, r) for c, r in zip(turn.tool_calls, results, strict=True))\n    messages.append(Message.Assistant(turn))",
        "test_single_turn_sends_a_valid_history",
    ),
    Bug(
        "single-turn-files-results-under-the-tool-name",
        "ch03",
        "03",
        "wrong key",
        "    messages.extend(Message.ToolResult(c.id, r) for c, r in zip(turn.tool_calls, results, strict=True))\n    final",
        "    messages.extend(Message.ToolResult(c.name, r) for c, r in zip(turn.tool_calls, results, strict=True))\n    final",
        "test_single_turn_files_each_result_under_its_call_id",
    ),
    Bug(
        "run-call-swallows-the-error-message",
        "ch03",
        "03",
        "information lost",
        '        return f"error: {exc}"',
        '        return "error: the tool failed"',
        "test_single_turn_keeps_the_tools_error_message",
    ),
    Bug(
        "sse-done-not-recognised",
        "ch05a",
        "05a",
        "missing case",
        '    if data == "[DONE]":\n        return [StreamEvent.Done()]\n',
        "",
        "test_streaming_parse_done",
    ),
    Bug(
        "agent-forgets-the-final-answer",
        "ch07",
        "07",
        "history invariant",
        '                text = turn.text or ""\n                messages.append(Message.Assistant(turn))\n',
        '                text = turn.text or ""\n',
        "test_simple_agent_chat_appends_final_turn",
    ),
    Bug(
        "edit-without-uniqueness-check",
        "ch09",
        "09",
        "missing uniqueness check",
        "        if count > 1:\n            raise ToolError(f\"old_string appears {count} times in '{path}', must be unique\")\n",
        "",
        "test_edit_not_unique",
    ),
    Bug(
        "write-echoes-the-content",
        "ch09",
        "09",
        "wasted tokens",
        'return f"wrote {path}"',
        'return f"wrote {path}:\\n{content}"',
        "test_write_does_not_echo_the_content",
    ),
    Bug(
        "write-without-parent-directories",
        "ch09",
        "09",
        "missing case",
        "            if not target.parent.exists():\n                target.parent.mkdir(parents=True, exist_ok=True)\n",
        "            pass\n",
        "test_write_creates_dirs",
    ),
    Bug(
        "bash-tool-is-synchronous",
        "ch10",
        "10",
        "sync tool instead of async",
        '    async def call(self, args):\n        command = require_str(args, "command")',
        '    def call(self, args):\n        import subprocess\n        command = require_str(args, "command")\n'
        "        done = subprocess.run(['bash', '-c', command], capture_output=True, text=True)\n"
        "        return done.stdout + done.stderr\n\n    async def unused(self, args):\n        command = None",
        "test_bash_runs_command",
        limit=1.5,  # it blocks: the timeout tests' sleeps would hold the check for seconds
    ),
    Bug(
        "bash-blocks-the-loop-with-subprocess-run",
        "ch10",
        "10",
        "blocking call, no timeout, no process group",
        '        timeout = optional_int(args, "timeout", minimum=1) or self.default_timeout\n',
        "        import subprocess\n"
        '        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)\n'
        "        result = done.stdout\n"
        "        if done.stderr:\n"
        '            result += ("\\n" if result else "") + "stderr: " + done.stderr\n'
        '        return result or "(no output)"\n'
        '        timeout = optional_int(args, "timeout", minimum=1) or self.default_timeout\n',
        "test_bash_leaves_the_event_loop_running",
        limit=1.5,  # as above: the timeout tests' sleeps block it
        # every test of the chapter starts real bash processes, and this bug runs them one
        # after another on the loop: on a loaded machine their starts alone add seconds
        slower=30,
    ),
    Bug(
        "glob-not-recursive",
        "ch11",
        "11",
        "missing case",
        "base.glob(pattern)",
        'base.glob(pattern.split("/")[-1])',
        "test_grep_glob_recursive",
    ),
    Bug(
        "permissions-last-rule-wins",
        "ch13",
        "13",
        "last-rule-wins",
        "        for rule in self.rules:\n            if rule.matches(tool_name):\n                return rule.permission\n        return self.default",
        "        decision = self.default\n        for rule in self.rules:\n            if rule.matches(tool_name):\n                decision = rule.permission\n        return decision",
        "test_permissions_first_rule_wins",
    ),
    Bug(
        "permission-stub-left-in-place",
        "ch13",
        "13",
        "stub left in place",
        'class Permission(Enum):\n    Allow = "allow"\n    Deny = "deny"\n    Ask = "ask"',
        "class Permission:\n    Allow = Deny = Ask = None  # TODO: an Enum with three members",
        "stub Permission",
    ),
    Bug(
        "path-check-without-resolving",
        "ch14",
        "14",
        "missing normalisation",
        "resolved = os.path.realpath(candidate)",
        "resolved = str(candidate)",
        "test_safety_path_traversal_blocked",
    ),
    Bug(
        "hooks-ignore-a-block",
        "ch15",
        "15",
        "wrong precedence",
        "            if isinstance(action, HookAction.Block):\n                return action\n            if isinstance(action, HookAction.ModifyArgs):",
        "            if isinstance(action, HookAction.ModifyArgs):",
        "test_hooks_registry_dispatch_block",
    ),
    Bug(
        "plan-mode-offers-every-tool",
        "ch16",
        "16",
        "missing filter",
        "definitions = [t.definition for t in self.tools if t.definition.name in self.allowed]",
        "definitions = self.tools.definitions()",
        "test_plan_agent_plan_tool_definitions_filtered",
    ),
    Bug(
        "plan-mode-calls-chat-not-stream-chat",
        "ch16",
        "16",
        "wrong method",
        "turn = await self.provider.stream_chat(messages, definitions, forward)",
        "turn = await self.provider.chat(messages, definitions)",
        "test_plan_agent_streaming_events_during_plan",
    ),
    Bug(
        "env-overridden-by-the-file",
        "ch17",
        "17",
        "wrong order",
        "        config = Config()\n        for path",
        "        config = Config().merge(ConfigLoader.env_overlay(env))\n        for path",
        "test_config_env_beats_files",
        (("        return config.merge(ConfigLoader.env_overlay(env))", "        return config"),),
    ),
    Bug(
        "compaction-never-triggers-at-the-limit",
        "ch18",
        "18",
        "off by one",
        "return self.tokens_used >= self.max_tokens",
        "return self.tokens_used > self.max_tokens",
        "test_context_manager_triggers_exactly_at_threshold",
    ),
    Bug(
        "subagent-without-a-turn-limit",
        "extras",
        "19",
        "infinite loop",
        "for _ in range(self._max_turns):",
        "while True:",
        "test_subagent_max_turns_exceeded",
    ),
    Bug(
        "handlers-forget-the-previous-approver",
        "ch20",
        "20",
        "state not restored",
        "        previous, self._approve = self._approve, approve\n",
        "        self._approve = approve\n",
        "test_session_handlers_restore_the_previous_approver",
        (("            self._approve = previous\n", "            self._approve = None\n"),),
    ),
    Bug(
        "plan-mode-only-hides-the-write",
        "ch20",
        "20",
        "hidden, not refused",
        '        if self.mode == "plan" and call.name not in self.SAFE:\n'
        "            # not offered, and refused when asked for anyway: plan mode only looks\n"
        "            return f\"error: tool '{call.name}' is not available in planning mode\"\n",
        "",
        "test_session_in_plan_mode_refuses_a_write",
    ),
    Bug(
        "workspace-provider-ignored",
        "ch20",
        "20",
        "setting read, not used",
        "            self.provider = provider\n",
        "",
        "test_session_talks_to_the_server_its_workspace_names",
        (
            (
                "            provider = OpenRouterProvider(",
                "            unused = OpenRouterProvider(",
            ),
        ),
    ),
    Bug(
        "session-tools-without-the-safety-checks",
        "ch20",
        "20",
        "guard left out",
        "self.tools = ToolSet([SafeToolWrapper(tool, guards) for tool in tools])",
        "self.tools = ToolSet(tools)",
        "test_session_keeps_an_approved_write_inside_the_workspace",
    ),
    Bug(
        "hook-block-ignored",
        "ch20",
        "20",
        "result ignored",
        "        if blocked is not None:\n"
        '            return f"error: blocked by a hook: {blocked}"\n',
        "",
        "test_session_runs_the_workspaces_pre_tool_hook_and_a_block_runs_nothing",
    ),
    Bug(
        "long-result-sent-whole",
        "ch20",
        "20",
        "step left out",
        'return result if result.startswith("error:") else self.results.fit(call.id, result)',
        "return result",
        "test_session_saves_a_long_result_and_gives_the_model_a_preview",
    ),
    Bug(
        "skill-tool-not-safe",
        "ch20",
        "20",
        "rule too narrow",
        'SAFE = ("read", "glob", "grep", "skill")',
        'SAFE = ("read", "glob", "grep")',
        "test_session_offers_the_workspaces_skills_and_loads_one_unasked",
    ),
    Bug(
        "compaction-never-called",
        "ch20",
        "20",
        "step left out",
        "                await self.compact(on_event)\n",
        "",
        "test_session_compacts_a_history_over_max_context_tokens",
    ),
    Bug(
        "session-never-ends-a-turn",
        "ch20",
        "20",
        "missing event",
        "            await emit(on_event, AgentEvent.TurnEnd(turn))\n",
        "",
        "test_session_ends_each_model_turn_with_a_turn_end",
    ),
    Bug(
        "tool-call-event-without-its-id",
        "ch20",
        "20",
        "missing field",
        "AgentEvent.ToolCall(call.name, tool_summary(call), call.id, call.arguments)",
        "AgentEvent.ToolCall(call.name, tool_summary(call))",
        "test_session_names_each_call_by_its_id",
    ),
    Bug(
        "mcp-client-takes-the-first-answer",
        "ch21",
        "21",
        "no id matching",
        ' or "method" in message or message.get("id") != wanted:',
        ' or "method" in message:',
        "test_mcp_client_skips_garbage_notifications_and_other_answers",
        slower=30,
    ),
    Bug(
        "mcp-client-reads-on-after-the-server-died",
        "ch21",
        "21",
        "infinite loop",
        "            if not line:  # the end of its output: the server has gone\n"
        '                raise McpError(f"{method}: the server went away (it closed its output)")\n',
        "",
        "test_mcp_client_reports_a_server_that_crashes_mid_call",
        slower=30,
    ),
    Bug(
        "mcp-close-only-closes-stdin",
        "ch21",
        "21",
        "orphan process",
        "process.stdin.close()  # a well-behaved server exits when its input ends\n",
        "process.stdin.close()  # a well-behaved server exits when its input ends\n"
        "        return\n",
        "test_mcp_client_close_leaves_no_process_behind",
        slower=30,
    ),
    Bug(
        "mcp-adapter-ignores-is-error",
        "ch21",
        "21",
        "failure passed off as a result",
        '        if result.get("isError"):\n'
        '            raise McpError(text or f"{self.tool_name} failed")\n',
        "",
        "test_mcp_adapter_raises_when_the_tool_reports_an_error",
        slower=30,
    ),
    Bug(
        "skills-listing-carries-the-bodies",
        "ch22",
        "22",
        "stage two in stage one",
        'lines = "".join(f"\\n- {s.name}: {s.description}" for s in full)',
        'lines = "".join(f"\\n- {s.name}: {s.description}\\n{s.body()}" for s in full)',
        "test_skills_listing_never_contains_a_body",
    ),
    Bug(
        "skills-listing-without-a-budget",
        "ch22",
        "22",
        "limit ignored",
        "        while named and len(text(full, named)) > budget:\n"
        "            named.pop()  # even the names do not fit: the last goes\n"
        "        while named and len(text([*full, named[0]], named[1:])) <= budget:\n"
        "            full.append(named.pop(0))  # the next one gets its description\n",
        "        full, named = named, []\n",
        "test_skills_listing_stays_within_the_budget_with_60_skills",
    ),
    Bug(
        "substitution-counts-from-one",
        "ch22",
        "22",
        "off by one",
        "        index = int(match.group(1))\n",
        "        index = int(match.group(1)) - 1\n",
        "test_skills_substitution_fills_arguments_and_positions",
    ),
    Bug(
        "unknown-command-raises",
        "ch22",
        "22",
        "exception instead of a line",
        '            return f"unknown command /{name}.{hint} /help lists them all."\n',
        '            raise KeyError(f"unknown command /{name}")\n',
        "test_commands_unknown_name_suggests_the_nearest",
    ),
    Bug(
        "hook-value-pasted-in-unquoted",
        "ch23",
        "23",
        "shell injection",
        "                out.append(shlex.quote(value))\n",
        "                out.append(value)\n",
        "test_hook_rules_a_file_name_is_one_word_to_the_shell",
    ),
    Bug(
        "hook-condition-mixes-and-with-or",
        "ch23",
        "23",
        "ambiguity accepted",
        "    if len(joins) > 1:\n"
        '        raise ValueError(f"if {text!r}: && and || cannot be mixed; split it into two hooks")\n',
        "",
        "test_hook_rules_mixing_and_with_or_is_refused",
    ),
    Bug(
        "hook-regex-matched-at-the-start-only",
        "ch23",
        "23",
        "wrong function",
        "        return lambda actual: pattern.search(actual) is not None\n",
        "        return lambda actual: pattern.match(actual) is not None\n",
        "test_hook_rules_each_operator_compares_as_documented",
    ),
    Bug(
        "hook-once-spent-by-an-event-it-did-not-match",
        "ch23",
        "23",
        "state changed too early",
        '            if hook["event"] != event:\n                continue\n',
        '            if hook["event"] != event:\n                continue\n'
        '            if hook["once"] and hook["fired"]:\n                continue\n'
        '            hook["fired"] = True\n',
        "test_hook_runner_once_runs_for_the_first_matching_event_only",
    ),
    Bug(
        "hook-timeout-lets-the-call-through",
        "ch23",
        "23",
        "fails open",
        '            return f"timed out after {timeout:g} s"\n',
        "            return None\n",
        "test_hook_runner_a_slow_pre_tool_hook_times_out_and_blocks",
    ),
    Bug(
        "result-preview-without-the-tail",
        "ch24",
        "24",
        "information lost",
        '            f"{text[: self.head]}\\n[... {hidden:,} chars not shown ...]\\n{text[-self.tail :]}"\n',
        '            f"{text[: self.head]}\\n[... {hidden:,} chars not shown ...]"\n',
        "test_result_store_preview_has_head_tail_path_and_size",
    ),
    Bug(
        "result-file-named-by-the-raw-call-id",
        "ch24",
        "24",
        "path traversal",
        '        path = self.folder / f"{safe}.txt"\n',
        '        path = self.folder / f"{call_id}.txt"\n',
        "test_result_store_a_call_id_cannot_leave_the_folder",
    ),
    Bug(
        "result-pages-counted-from-zero",
        "ch24",
        "24",
        "off by one",
        "        chosen = lines[offset - 1 : offset - 1 + limit]\n        end = offset - 1 + len(chosen)\n",
        "        chosen = lines[offset : offset + limit]\n        end = offset + len(chosen)\n",
        "test_result_store_pages_read_the_whole_file_back",
    ),
    Bug(
        "compaction-failure-raised-out-of-the-turn",
        "ch24",
        "24",
        "failure escapes",
        "                if self.failures < self.max_failures:\n"
        '                    return "failed"\n',
        "                if self.failures < self.max_failures:\n                    raise\n",
        "test_compactor_a_failed_summary_does_not_fail_the_turn",
    ),
    Bug(
        "breaker-never-resets-on-success",
        "ch24",
        "24",
        "count not reset",
        "            else:\n                self.failures = 0\n",
        "            else:\n",
        "test_compactor_counts_failures_in_a_row",
    ),
    Bug(
        "breaker-tells-at-every-drop",
        "ch24",
        "24",
        "told every turn",
        '        self.drop_oldest(messages)\n        return "dropped"\n',
        '        self.notes.append("dropped the oldest turns")\n'
        "        self.drop_oldest(messages)\n"
        '        return "dropped"\n',
        "test_compactor_says_so_once",
    ),
]


def trial_table() -> str:
    """The learner-trial table of docs/course.md: each bug and what check() said about it."""
    from clawnb.course import check

    rows = ["| chapter | the bug (kind) | what `check()` said |", "|---|---|---|"]
    for bug in BUGS:
        report = check(
            bug.chapter,
            timeout=bug.limit,
            verbose=False,
            **learner_objects(bug.notebook, [(bug.old, bug.new), *bug.extra]),
        )
        text = str(report)
        if bug.fails.startswith("stub "):
            said = f"`{bug.fails} ... FAILED (still the exercise stub: write it first)`"
        else:
            section = text.split(f"---- {bug.fails} ----\n", 1)[1].split("\n\n", 1)[0]
            lines = [line for line in section.splitlines() if not line.startswith("note: ")]
            said = f"`{bug.fails}`: " + "; ".join(f"`{line.strip()}`" for line in lines[:2])
        said += f" — `{text.splitlines()[-1]}`"
        said = said.replace("|", "\\|")
        rows.append(f"| {bug.chapter} | {bug.id} ({bug.kind}) | {said} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(trial_table())
