"""Tiered hints for the test a learner is stuck on: ``hint("ch09")`` → 1, 2, 3.

The hint belongs to the first failing test of the last ``check("ch09", …)``. Each call goes one
level further for that test:

1. what failed and where the notebook states the rule (the report's own words, short);
2. a nudge written for that test, or for its suite: where to look, what is usually wrong;
3. the whole test, so you can read exactly what it does, and where clawnb's answer lives.

Asking again after the third level repeats it; a new failing test starts again at level 1.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from ._helpers import opening_comment

if TYPE_CHECKING:
    from ._suite import CheckReport

__all__ = ["hint"]

# Keyed by test name, else by suite name. Our own words; they point, they do not solve.
NUDGES: dict[str, str] = {
    # ch01 / ch04
    "mock": "A scripted provider hands out its turns in the order it was given them, one per "
    "call, and fails (raises) once they are used up. Keep the turn exactly as given.",
    "test_mock_steps_through_sequence": "Which end of your queue do you take from? The first "
    "response given must be the first one returned (a deque's popleft, or list.pop(0)).",
    "test_mock_empty_text_is_some": 'An empty answer ("") and no answer (None) are different '
    "things. Return the turn untouched; do not turn falsy text into None.",
    "test_mock_empty_responses_exhausted": "When nothing is left, raise an exception right "
    "away. Waiting or retrying can never succeed: nobody will add a response.",
    "test_mock_leaves_the_callers_list_alone": "Keep a copy of what you were given "
    "(deque(responses)) and take turns from the copy: list.pop on the caller's own list empties "
    "it for them.",
    "history": "Walk the list once. A tool result is only allowed right after the assistant "
    "turn that asked for it (or after the results before it in the same round).",
    "test_history_results_out_of_order_are_invalid": "Compare the ids of the results with the "
    "ids of the calls, in order: [a, b] is not [b, a].",
    # ch02 / ch06 / ch09
    "read": "The tool returns the file exactly as it is on disk, and raises for bad input: a "
    "missing or non-string path, a missing file, a directory.",
    "test_read_read_file": "No line numbers, no trimming, no extra text: return read_text() as is.",
    "test_read_read_directory_fails": "Reading a directory raises an OSError "
    "(IsADirectoryError); make sure your tool turns it into an exception, not a result.",
    "edit": "old_string must occur exactly once. Count the occurrences first: zero is an "
    "error, more than one is an error, one is replaced.",
    "test_edit_not_unique": "str.replace replaces every occurrence. Count with str.count "
    "before you replace, and raise when the count is above one.",
    "write": "Create the parent directories before writing, and return a short confirmation.",
    "test_write_creates_dirs": "Path(path).parent.mkdir(parents=True, exist_ok=True) before "
    "the write.",
    "test_write_does_not_echo_the_content": "Return a short confirmation that names the path "
    "(wrote {path}); the model sent the content, so sending it back only costs tokens.",
    # ch03 / ch07 / ch12
    "single_turn": "Ask the model once; if it asks for tools, run them, add the assistant turn "
    "and then one result per call, and ask once more.",
    "test_single_turn_sends_a_valid_history": "The assistant turn goes into the history before "
    "its tool results, not after.",
    "test_single_turn_files_each_result_under_its_call_id": "Message.ToolResult takes the "
    "call's id (call.id), not the tool's name: two calls to read share a name, never an id.",
    "test_single_turn_keeps_the_tools_error_message": "Catch the exception as exc and put its "
    'message into the result: f"error: {exc}". The model reads it to decide what to do next.',
    "simple_agent": "Loop: ask the model; no tool calls means it is done (keep the final turn "
    "in the history); otherwise run every call, append the turn and its results, ask again.",
    "test_simple_agent_chat_appends_final_turn": "Before returning the final text, append the "
    "final assistant turn to the messages you were given.",
    "test_single_turn_direct_response": "A turn without tool calls is the answer: return its "
    "text without asking the model again.",
    "test_single_turn_unknown_tool": "tools.get(name) gives None for a name you do not have: "
    "make that call's result the text error: unknown tool `name` (backticks), do not raise.",
    "test_single_turn_empty_text_response": 'turn.text is None here: return turn.text or "" '
    "so the caller always gets a string.",
    "test_single_turn_tool_error_propagates": "The read fails (the file is missing): catch the "
    "tool's exception, make it the result 'error: ...', and ask the model once more; its answer "
    "is what single_turn returns.",
    "test_single_turn_provider_error_propagates": "The model itself fails (no responses left): "
    "do not catch that one. Only tool errors become results; a provider error reaches the caller.",
    "test_single_turn_tool_call_missing_arg": "The read raises for a missing path; that is a "
    "tool error like any other: an 'error: ...' result, then the second request.",
    "test_single_turn_mixed_known_and_unknown_tools": "Every call gets exactly one result, the "
    "known one its tool's text, the unknown one the unknown-tool error, in the calls' order.",
    "test_single_turn_no_tools_registered": "An empty ToolSet still works: definitions() is [], "
    "and a turn without calls is returned as it is.",
    "test_simple_agent_multi_step_loop": "After each round ask the model again with the longer "
    "history, until a turn has no tool calls: one call per turn here means three requests.",
    "test_simple_agent_provider_error": "When the model fails, let the exception out of run(): "
    "only tool failures are results.",
    "test_simple_agent_unknown_tool": "An unknown tool name becomes the result error: unknown "
    "tool `name`; the loop goes on and returns the model's next answer.",
    "test_simple_agent_multiple_tool_calls_single_turn": "Run every call of the turn, then append "
    "the turn once and one ToolResult per call, under each call's id, in the calls' order.",
    "test_simple_agent_text_in_tool_use_turn": "A turn can carry text and calls: it is a tool "
    "turn all the same. Run its calls; the answer is the text of the turn without calls.",
    "test_simple_agent_builder_chain": "tool(t) adds t and returns self, so calls chain: "
    "SimpleAgent(p).tool(a).tool(b).",
    "batching": "Walk the calls in order; a concurrency-safe call joins the previous group if "
    "that group is safe too; anything else starts a group of its own.",
    "test_batching_safe_calls_run_together": "Run a safe group with asyncio.gather, not one "
    "await after another.",
    "multi_tool": "These tests drive your agent with several real tools; look at the first "
    "tool result that differs and check your loop passes every call's result back.",
    "agent_tools": "Register every tool you are given (tool() returns self so calls chain).",
    # ch05
    "streaming": "parse_sse_line looks only at lines starting with 'data: '; '[DONE]' ends the "
    "stream; everything else is JSON whose choices[0].delta holds text and tool-call pieces.",
    "test_streaming_parse_done": "Check for '[DONE]' before trying to parse JSON.",
    "test_streaming_streaming_agent_text_response": "The streaming agent calls stream_chat and "
    "forwards text deltas as AgentEvent.TextDelta.",
    "openrouter": "convert_messages maps each message variant to the OpenAI wire format; "
    "assistant tool calls carry their arguments as a JSON string.",
    # ch08 / ch18
    "instructions": "Walk from the start directory up to the root collecting files, then "
    "reverse, so the most general file comes first.",
    "system_prompt": "Static sections (identity, safety, tools) first, then the boundary, then "
    "the environment and instructions: nothing that changes between runs before the boundary.",
    "context_manager": "Compact when the tokens used reach the limit (>=); keep the system "
    "prompt first and the last preserve_recent messages untouched.",
    "test_context_manager_triggers_exactly_at_threshold": "Reaching the limit counts: >=, not >.",
    # ch10 / ch11
    "bash": "Run 'bash -c command' as an async subprocess, capture stdout and stderr, report a "
    "non-zero exit code, and return '(no output)' when there is nothing.",
    "test_bash_runs_command": "The test awaits tool.call(...): define call with async def and "
    "use asyncio.create_subprocess_exec (or run the blocking call in a thread).",
    "test_bash_reports_the_exit_code": "After the command ends, look at process.returncode; "
    "when it is not 0, add a line 'exit code: N' to the output.",
    "test_bash_leaves_the_event_loop_running": "subprocess.run inside async def still blocks: "
    "the event loop waits with it. Start it with asyncio.create_subprocess_exec and await "
    "process.communicate().",
    "test_bash_stops_a_command_at_its_timeout": "Wait with asyncio.wait_for(process."
    "communicate(), timeout); on TimeoutError kill the command and raise (or return) 'command "
    "timed out after Ns'.",
    "test_bash_timeout_kills_the_whole_process_group": "Start the command in its own process "
    "group (start_new_session=True) and on a timeout kill the group, not just bash: "
    "os.killpg(process.pid, signal.SIGTERM).",
    "search": "glob: Path(base).glob(pattern) already understands '**'. grep: walk the "
    "directory recursively and report 'file:line: text'.",
    "test_grep_glob_recursive": "'**/*.rs' must find files in subdirectories: pass the whole "
    "pattern to Path.glob.",
    # ch13 – ch17
    "permissions": "Session allows first, then the first rule that matches, then the default.",
    "test_permissions_first_rule_wins": "Return as soon as a rule matches; do not let later "
    "rules overwrite the decision.",
    "test_permissions_allow_all": "allow_all() is a classmethod: an engine with no rules whose "
    "default is Permission.Allow.",
    "test_permissions_ask_by_default": "ask_by_default(rules) is a classmethod: those rules, and "
    "Permission.Ask for everything else.",
    "test_permissions_rule_matching": "evaluate(name, args) returns the permission of the first "
    "rule whose pattern matches the tool's name.",
    "test_permissions_glob_pattern": "Match the pattern against the whole name with "
    "fnmatch.fnmatchcase: 'mcp__*' matches 'mcp__fs__read' but not 'my_mcp__tool'.",
    "test_permissions_session_allow": "record_session_allow(name) remembers the name; evaluate "
    "looks at those before any rule.",
    "test_permissions_session_allow_per_tool": "A session allow is for the one tool it names; "
    "other tools still get their rule or the default.",
    "test_permissions_is_allowed": "is_allowed is true only for Allow: Ask and Deny are both "
    "'not allowed'.",
    "test_permissions_needs_approval": "needs_approval is true exactly when evaluate says Ask.",
    "test_permissions_wildcard_rule": "'*' is a pattern like any other: fnmatch makes it match "
    "every name.",
    "test_permissions_deny_overrides_default": "A matching rule beats the default, whatever the "
    "default is.",
    "gate": "Ask only when the engine says Ask; 'always' records a session allow; a refusal is "
    "returned as an 'error: …' text, never raised.",
    "test_gate_allowed_call_runs_without_asking": "Allow: return None at once (the call may "
    "run), without calling ask.",
    "test_gate_denied_call_is_refused_without_asking": "Deny: return a refusal text that starts "
    "with 'error:' and names the tool, without calling ask.",
    "test_gate_asks_and_yes_runs_once": "Ask, answer 'yes': return None for this call only; do "
    "not record anything, so the next call asks again.",
    "test_gate_asks_and_no_is_refused": "Ask, answer 'no': return an 'error: ...' refusal, never "
    "raise.",
    "test_gate_always_allows_the_tool_for_the_session": "Ask, answer 'always': "
    "engine.record_session_allow(call.name), then return None; the engine answers Allow from "
    "then on, so ask is not called again.",
    "test_gate_default_applies_to_unlisted_tools": "A tool no rule names gets the engine's "
    "default (Ask here): ask about it.",
    "safety": "Resolve the path (os.path.realpath) before comparing it with the allowed "
    "directory, so '..' and symlinks cannot escape.",
    "test_safety_path_traversal_blocked": "'sub/../../etc/passwd' starts with 'sub' as text; "
    "resolve it first, then compare.",
    "hooks": "Dispatch to every hook in order; a Block stops at once and is returned; a "
    "ModifyArgs is remembered; otherwise Continue.",
    "test_hooks_registry_dispatch_block": "When a hook returns Block, return that Block "
    "immediately.",
    "hooked_call": "Pre-call hooks first (a Block means the tool never runs), then the tool "
    "(an exception becomes an 'error: …' result), then the post-call hooks with the result.",
    "plan_agent": "Planning offers only the read-only tools plus exit_plan; execution offers "
    "all tools; both call stream_chat.",
    "test_plan_agent_plan_tool_definitions_filtered": "Build the planning definitions from the "
    "allowed names only, then add exit_plan.",
    "test_plan_agent_streaming_events_during_plan": "Call provider.stream_chat with a callback "
    "that forwards text deltas; chat() never produces events.",
    "config": "Each layer overrides the one before: defaults, project file, user file, then the "
    "environment last.",
    "test_config_env_beats_files": "Apply the environment after both files, not before.",
    "cost_tracker": "Accumulate input and output tokens separately; prices are per million.",
    # extras
    "ask": "ask_user waits for the handler's answer and returns it as the tool result.",
    "subagent": "The child agent has its own history and tools and stops after max_turns "
    "with 'error: max turns exceeded'.",
    "test_subagent_max_turns_exceeded": "Loop at most max_turns times, then return the error "
    "text; a while True loop never stops on its own.",
    # ch20
    "session": "send() runs your loop: ask the model, emit TurnEnd, and for each call emit "
    "ToolCall (with its id), gate it, run it, emit ToolResult; Done at the end. handlers() sets "
    "the approver for a with block.",
    "test_session_follows_the_session_protocol": "make_session(provider=..., workspace=..., "
    "history=...) returns an object with history (the very list it was given), mode (a str), "
    "send, handlers and configure: isinstance(session, clawnb.session.protocol.Session).",
    "test_session_send_answers_and_keeps_the_history": "send(prompt) appends Message.User(prompt) "
    "to self.history before asking the model, appends the model's final turn after, and returns "
    "its text.",
    "test_session_reads_without_asking": "Give the permission engine a rule that allows read (and "
    "glob, grep), so the gate runs them without calling approve; the read's text is the result.",
    "test_session_asks_before_writing_and_a_denial_changes_nothing": "Everything not allowed by a "
    "rule is Ask: the gate calls your ask, which awaits the front end's approve(ApprovalRequest("
    "call, summary)); a denial becomes an 'error: ...' result and the tool never runs.",
    "test_session_runs_an_approved_write": "An approval whose .allowed is true means the gate "
    "returns None: run the call with run_call and file its result under the call's id.",
    "test_session_with_nobody_to_ask_runs_nothing_unasked": "Outside a handlers() block there is "
    "no approver: your ask must answer 'no' then, so a write is refused, not run.",
    "test_session_tells_the_front_end_what_happens": "Emit with await emit(on_event, event): "
    "ToolCall before the call runs, ToolResult after it, and Done(text) last of all.",
    "test_session_configure_changes_the_mode": "configure(mode=...) stores the mode as a string "
    '(str(getattr(mode, "value", mode)) also takes a PermissionMode); max_turns=None keeps the '
    "old limit.",
    "test_session_names_each_call_by_its_id": "Give AgentEvent.ToolCall the call's id as its "
    "third argument (and ToolResult its first): the front end pairs a card with its result by "
    "it.",
    "test_session_ends_each_model_turn_with_a_turn_end": "Right after each reply of the model, "
    "before running its calls, emit AgentEvent.TurnEnd(turn): the footer's turn and token "
    "counts come from it.",
    "test_session_handlers_restore_the_previous_approver": "Remember the approver you replace "
    "when the with block starts and put that one back in finally, not None.",
    "test_session_in_plan_mode_refuses_a_write": "Hiding write from the tools offered is not "
    "enough: in plan mode a call to a tool outside SAFE gets an error result and never runs, "
    "whatever the approver would say.",
    "test_session_talks_to_the_server_its_workspace_names": "When agent.toml has a [provider] "
    "table, build your chapter-5b provider from it before anything uses the provider: "
    "OpenRouterProvider(api_key=os.environ.get(table.get('api_key_env', 'OPENROUTER_API_KEY'), "
    "''), model=table['model']).base_url(table['base_url']), and keep it as self.provider (the "
    "compactor uses it too). Never write the key into the file.",
    "test_session_keeps_an_approved_write_inside_the_workspace": "Wrap each tool before it "
    "goes into the ToolSet: SafeToolWrapper(tool, [PathValidator(workspace), "
    "CommandFilter.default_filters(), ProtectedFileCheck(['.env', '.env.*'])]). The gate's "
    "yes does not lift a safety check.",
    "test_session_runs_the_workspaces_pre_tool_hook_and_a_block_runs_nothing": "Build a "
    "HookRunner from the hooks table of .claw/agent.toml (tomllib) and fire pre_tool with the "
    "call's name and arguments before the gate: a reason back means an 'error: ...' result "
    "with that reason, and the gate is never asked.",
    "test_session_saves_a_long_result_and_gives_the_model_a_preview": "Give every result that "
    "ran through a ResultStore(<workspace>/.claw/results, max_chars=max_result_chars): fit("
    "call.id, text) saves a long one whole and returns the preview, which is what goes into "
    "the history.",
    "test_session_offers_the_workspaces_skills_and_loads_one_unasked": "SkillIndex(<workspace>"
    "/.claw/skills): push a SkillTool(index) into the tools when it found any, put "
    "index.listing() into the system prompt (a Message.System before the history, each "
    "request), and add 'skill' to SAFE so it runs unasked, in plan mode too.",
    "test_session_compacts_a_history_over_max_context_tokens": "Make a Compactor(provider, "
    "max_tokens=max_context_tokens) and await compactor.after_turn(self.history) when a "
    "request is answered, before Done: it asks the same provider for the summary.",
    "test_session_offers_the_tools_of_the_workspaces_mcp_servers_and_asks_first": "At the "
    "first send, for each NAME, server in the [mcp] table of .claw/agent.toml: StdioClient("
    "server['command'], timeout=server.get('timeout', 20)), await start(), then push each of "
    "await mcp_tools(client, NAME) into self.tools; their names are not in SAFE, so the gate "
    "asks.",
    # ch21
    "mcp_client": "One JSON object per line on the server's stdin and stdout. request() takes a "
    "new id and reads until the response with that id; close() goes from closing stdin to "
    "terminate to kill.",
    "test_mcp_client_talks_to_a_real_server": "start() spawns the command with stdin and stdout "
    "as pipes and returns the answer to initialize; list_tools() is the result's 'tools'; "
    "call_tool(name, arguments) sends tools/call with {'name': ..., 'arguments': ...}.",
    "test_mcp_client_initializes_then_says_initialized": "After the answer to initialize, send "
    "notify('notifications/initialized'): a message with jsonrpc and method but no id, which "
    "the server never answers.",
    "test_mcp_client_skips_garbage_notifications_and_other_answers": "Keep reading in a loop: a "
    "line json.loads cannot read, a message with a 'method' (a notification) and a response "
    "whose id is not the one you sent are skipped, not returned.",
    "test_mcp_client_raises_on_an_error_response": "A response with 'error' instead of "
    "'result' is the server saying no: raise McpError with error['message'].",
    "test_mcp_client_reports_a_server_that_crashes_mid_call": "readline() returns b'' when the "
    "server's output has ended: raise McpError there. An empty line is not garbage to skip; "
    "nothing will ever follow it.",
    "test_mcp_client_gives_up_on_a_server_that_never_answers": "Wrap the reading in "
    "asyncio.wait_for(..., self.timeout) and turn the TimeoutError into McpError.",
    "test_mcp_client_close_leaves_no_process_behind": "Closing stdin is only the polite first "
    "step: wait for the process with a time limit, then process.terminate() and wait again, "
    "then process.kill() and wait.",
    "test_mcp_adapter_wraps_a_real_servers_tool": "The definition is ToolDefinition("
    "f'mcp__{server}__{name}', the tool's description, its inputSchema); call() sends the "
    "tool's own name, without the prefix.",
    "test_mcp_adapter_returns_the_text_blocks_joined": "Take the blocks of result['content'] "
    "whose type is 'text' and join their text with newlines.",
    "test_mcp_adapter_is_a_tool_the_agent_can_call": "The loop finds a tool by "
    "definition.name and awaits call(arguments): the adapter needs both, with the long name "
    "the model uses.",
    "test_mcp_adapter_raises_when_the_tool_reports_an_error": "Look at result.get('isError'): "
    "when it is true, raise McpError with the text instead of returning it.",
    # ch22
    "commands": "Keep two dicts: the primary names (for names() and help) and every name and "
    "alias (for find). dispatch splits '/name rest' once at the first space.",
    "test_commands_dispatch_runs_the_handler_with_its_arguments": "line.strip().removeprefix('/')"
    ".partition(' ') gives the name and the rest; call the handler with the rest, stripped.",
    "test_commands_an_alias_reaches_the_same_command": "add() files the command under each of "
    "its aliases too, so find('m') returns the very object find('model') does.",
    "test_commands_an_async_handler_is_awaited": "Call the handler; if inspect.isawaitable(result)"
    ", await it before returning.",
    "test_commands_unknown_name_suggests_the_nearest": "An unknown name returns one line, it "
    "does not raise: 'unknown command /x. Did you mean /y? ...', with y from "
    "difflib.get_close_matches over the names and aliases.",
    "test_commands_help_lists_every_command": "Build the text from the registry itself: one line "
    "per primary name, sorted, '/name usage — description (also /alias)'; help is registered in "
    "__init__, so it lists itself.",
    "test_commands_a_taken_name_is_refused": "Before adding, look up the name and every alias in "
    "the dict of names and aliases; raise ValueError if one is there.",
    "skills": "Stage one (the index, the listing) holds names, descriptions and paths only; "
    "stage two (load, the tool, the commands) reads the body from the file when it is used.",
    "test_skills_frontmatter_gives_name_and_description": "fields.get('name') or the folder's "
    "name (path.parent.name); strip the quotes around a value.",
    "test_skills_a_bad_file_is_one_problem_and_the_rest_load": "Catch the ValueError of one "
    "file inside the loop, append f'{path}: {exc}' to problems, and continue with the next.",
    "test_skills_listing_stays_within_the_budget_with_60_skills": "Measure the whole text "
    "before you add a line: len(text) <= budget must hold for what you return, header included.",
    "test_skills_listing_never_contains_a_body": "The listing line is '- name: description' and "
    "nothing else; the body is read by load(), never by listing().",
    "test_skills_listing_names_the_ones_whose_description_does_not_fit": "Start with every skill "
    "named on the 'Also:' line; then move them, in order, to a described line while the whole "
    "still fits.",
    "test_skills_body_is_read_when_the_skill_is_used": "Keep the path in the Skill, not the "
    "body; read the file in body() (and so in load()).",
    "test_skills_tool_loads_a_body": "call(args) returns index.load(args['name'], "
    "args.get('arguments') or '').",
    "test_skills_tool_unknown_skill_names_the_nearest": "Let load()'s KeyError out as an "
    "exception whose message names the unknown skill and difflib's nearest one.",
    "test_skills_substitution_fills_arguments_and_positions": "$0 is the first word: words = "
    "shlex.split(arguments), then words[int(n)], not words[int(n) - 1].",
    "test_skills_substitution_keeps_what_it_cannot_fill": "One re.sub with a function: return "
    "the match unchanged when there is no such word; afterwards, if nothing was used and "
    "arguments is not empty, append a line 'ARGUMENTS: ...'.",
    "test_skills_slash_command_runs_a_skill": "For each skill add Command(name, description, "
    "handler) whose handler returns index.load(name, arguments); bind the name per skill (a "
    "function that returns the lambda), not the loop variable.",
    # ch23
    "hook_rules": "A condition is comparisons of tool or args.KEY with a quoted value, joined by "
    "&& or || (never both); a value in a command is quoted for the place it stands, so it is "
    "always one word to the shell.",
    "test_hook_rules_each_operator_compares_as_documented": "=~ is pattern.search (anywhere in "
    "the value), not re.match; ~= is the glob against the whole value (end its regex with \\Z).",
    "test_hook_rules_a_glob_star_stays_in_its_folder": "In glob_to_regex, * is [^/]* and ? is "
    "[^/]; only ** may cross a /, and **/ is (?:.*/)? so that it may also match no folder.",
    "test_hook_rules_and_needs_all_or_needs_any": "Keep the joins you met in a set: && means "
    "all(results), || means any(results).",
    "test_hook_rules_mixing_and_with_or_is_refused": "After the loop, if the set of joins holds "
    "both && and ||, raise ValueError saying they cannot be mixed and to split the hook in two.",
    "test_hook_rules_a_bad_condition_is_one_readable_error": "When TERM.match returns None, or "
    "the text after a comparison is not && or ||, or re.compile fails, raise ValueError with "
    'the condition itself in the message (f"if {text!r}: ...").',
    "test_hook_rules_a_missing_argument_matches_only_not_equal": "args.get(key) is None: append "
    "op == '!=' and go on; a value that is not a string is compared as json.dumps(value).",
    "test_hook_rules_a_file_name_is_one_word_to_the_shell": "Outside any quote, put "
    "shlex.quote(value) into the command, never the value itself.",
    "test_hook_rules_quoting_holds_inside_double_and_single_quotes": "Track the quote you are "
    "inside. In '...': replace each ' of the value by '\\''. In \"...\": put a backslash before "
    'each of \\ $ ` and ".',
    "test_hook_rules_tool_arguments_missing_values_and_other_dollars": "$TOOL_ARGS.key reads "
    "values['TOOL_ARGS'][key]; a missing value is '' (shlex.quote('') is two quotes); only "
    "the names VARIABLE knows are replaced.",
    "test_hook_rules_a_prompt_gets_the_values_as_they_are": "expand_text is VARIABLE.sub with the "
    "raw value: no shlex.quote there.",
    "hook_runner": "Check the whole table in __init__; fire() runs the event's hooks in order, "
    "skips the ones whose if fails or whose once is spent, and on pre_tool returns the first "
    "block's reason.",
    "test_hook_runner_pre_tool_command_blocks_with_its_stderr": "returncode 0 -> None; anything "
    "else -> the last line of stderr (decoded, stripped), and on pre_tool fire returns it.",
    "test_hook_runner_a_condition_picks_the_calls": "Before running a hook, skip it when its "
    "parsed condition exists and condition.holds(tool, args) is false.",
    "test_hook_runner_only_the_events_own_hooks_run": "Keep each hook's event and skip every "
    "hook whose event is not the one fired.",
    "test_hook_runner_the_first_block_wins": "Return the reason as soon as a pre_tool hook fails: "
    "the loop must not go on to the next hook.",
    "test_hook_runner_a_failing_hook_never_stops_other_events": "Append (event, reason) to runs "
    "for every run; return the reason only when the event is pre_tool, never raise.",
    "test_hook_runner_the_event_arrives_as_json_on_stdin": "stdin=PIPE, then process.communicate("
    "json.dumps({'event': ..., 'tool_name': ..., 'args': ..., 'message': ...}).encode()).",
    "test_hook_runner_a_hostile_file_name_stays_a_file_name": "Build the command with "
    "expand_command, not expand_text or str.replace: $FILE_PATH comes from the model.",
    "test_hook_runner_a_prompt_leaves_a_reminder": "For action 'prompt', append "
    "expand_text(prompt, values) to self.reminders and run no process.",
    "test_hook_runner_once_runs_for_the_first_matching_event_only": "Test the event and the "
    "condition first; only a hook that matched and runs sets fired = True.",
    "test_hook_runner_a_slow_pre_tool_hook_times_out_and_blocks": "Wrap communicate() in "
    "asyncio.wait_for(..., timeout); on TimeoutError os.killpg(process.pid, SIGKILL) (it has "
    "its own session), wait for it and return 'timed out after N s'.",
    "test_hook_runner_a_bad_table_is_one_line_naming_it": "In __init__, raise ValueError("
    "f'hooks.{event}[{i}]: ...') for a bad entry (and f'hooks.{event}: unknown event' for a bad "
    "name); catch parse_condition's ValueError and raise it again with that prefix.",
    # ch24
    "result_store": "fit() writes the whole text and returns a preview of it; page() reads the "
    "file back by lines counted from 1, each page but the last ending with where the next starts.",
    "test_result_store_a_short_result_passes_unchanged": "if len(text) <= self.max_chars: return "
    "text, before anything is written.",
    "test_result_store_a_long_result_is_saved_whole_and_costs_only_its_preview": "Write the whole "
    "text to the file (path.write_text(text)) and return only the preview: head, a note, tail.",
    "test_result_store_preview_has_head_tail_path_and_size": "The preview has text[:self.head] "
    "and text[-self.tail:], the path, f'{len(text):,} chars' and f'{lines:,} lines' (count the "
    "newlines, plus one when the text does not end with one).",
    "test_result_store_pages_read_the_whole_file_back": "lines = text.splitlines(keepends=True); "
    "the page is lines[offset - 1 : offset - 1 + limit]; add the '[lines A-B of N; the next page "
    "starts at offset B+1]' line only when B < N.",
    "test_result_store_page_past_the_end_says_so": "Before slicing, if offset > len(lines), return "
    "one line that says how many lines the file has.",
    "test_result_store_a_call_id_cannot_leave_the_folder": "re.sub(r'[^A-Za-z0-9_-]', '_', "
    "call_id) before you use it in a file name: a / or .. in the id is then only a character.",
    "compactor": "after_turn never raises: a summary's exception is counted; at max_failures in a "
    "row the breaker opens (one note) and from then on the oldest whole turns are dropped.",
    "test_compactor_leaves_a_short_history_alone": "Compare self.tokens(messages) with max_tokens "
    "first, and return None before calling the model when it is under.",
    "test_compactor_summarises_the_middle_and_keeps_prompt_and_recent": "messages[:] = "
    "messages[:start] + [Message.System(SUMMARY_PREFIX + turn.text)] + messages[end:], with "
    "end = len(messages) - keep; the model gets [Message.User(request)] and tools [].",
    "test_compactor_never_splits_a_tool_round": "While messages[end] is a ToolResult, end -= 1: "
    "the kept part then starts at the assistant turn that made the call.",
    "test_compactor_summaries_do_not_pile_up": "prompt_end stops at a System message that starts "
    "with SUMMARY_PREFIX, so the earlier summary is in the middle and summarised again.",
    "test_compactor_a_failed_summary_does_not_fail_the_turn": "Wrap the summarise call in try/"
    "except Exception; under max_failures return 'failed' and leave messages alone.",
    "test_compactor_three_failures_open_the_breaker_and_drop_whole_turns": "self.failures += 1 on "
    "each failure; when it reaches max_failures set self.open = True and drop; while open, drop "
    "without asking the model.",
    "test_compactor_says_so_once": "Append the note only at the moment the breaker opens (in the "
    "except branch), never on the later drops; name the count and the exception in it.",
    "test_compactor_counts_failures_in_a_row": "Set self.failures = 0 when a summary works: only "
    "failures in a row open the breaker.",
    "test_compactor_the_current_request_always_stays": "In drop_oldest start with cut = the last "
    "User message's index, and look for an earlier cut that fits; never cut after the last one.",
}

_levels: dict[str, int] = {}  # failing test -> the last level shown


def _asserts(fn: Any, most: int = 4) -> list[str]:
    """The test's own asserts, as written: what it compares, without the setup around it."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = [ast.unparse(n.test) for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    return found[:most]


def _nudge(test: str, suite: str, fn: Any = None) -> str:
    """Level 2: the nudge written for this test; else what the test itself says and checks
    (its opening comment, its asserts) and what is usually wrong in its suite."""
    if test in NUDGES:
        return NUDGES[test]
    parts = []
    why = opening_comment(fn) if fn is not None else ""
    for lead in ("Not in the book: ", "Not in the book's tests, but its rule: "):
        why = why.removeprefix(lead)
    if why:
        parts.append(f"What {test} is about: {why}")
    checks = _asserts(fn) if fn is not None else []
    if checks:
        parts.append("It checks that " + "; that ".join(f"`{c}`" for c in checks) + ".")
    parts.append(NUDGES.get(suite) or "Read the test's lines in the report once more.")
    return "\n".join(parts)


def _with_helpers(test: Any) -> str:
    """The test's source, preceded by the module's ``_helpers`` it calls, and the ones those
    call in turn (``_edited`` goes through ``_edit``), each once, the deepest first."""
    source = inspect.getsource(test)
    module = sys.modules[test.__module__]
    seen: set[str] = set()
    helpers: list[str] = []

    def visit(text: str) -> None:
        for name in dict.fromkeys(re.findall(r"\b(_[a-z]\w*)\(", text)):
            helper = getattr(module, name, None)
            if name not in seen and inspect.isfunction(helper):
                seen.add(name)  # before visiting, so a recursive helper cannot loop
                body = inspect.getsource(helper)
                visit(body)
                helpers.append(body)

    visit(source)
    return "\n".join([*helpers, source])


def hint(target: str) -> None:
    """Print the next hint for the first failing test of the last ``check(target, …)``."""
    from ._suite import last_report, load_suite, suite_of

    report: CheckReport | None = last_report(target)
    if report is None:
        text = f"Run check({target!r}, …) first; the hint is for the test that fails."
    else:
        failing = [r for r in report.results if r.status in ("FAILED", "TIMED OUT")]
        if not failing and report.stubs:
            text = (
                f"hint 1/3 for {target}: {', '.join(report.stubs)} still the exercise stub. "
                "Replace the body that raises NotImplementedError with your code."
            )
        elif not failing:
            text = f"Nothing fails in {target}: there is nothing to hint at."
        else:
            result = failing[0]
            suite = suite_of(result.name)
            level = min(_levels.get(result.name, 0) + 1, 3)
            _levels[result.name] = level
            head = f"hint {level}/3 for {result.name}"
            if level == 1:
                first = result.detail.split("\n\nin the test", 1)[0]
                rule = (
                    result.detail.rpartition("the rule: ")[2]
                    if "the rule: " in result.detail
                    else ""
                )
                text = f"{head}:\n{first}" + (f"\nThe rule is stated in {rule}" if rule else "")
            elif level == 2:
                text = (
                    f"{head}:\n{_nudge(result.name, suite, load_suite(suite).tests[result.name])}"
                )
            else:
                source = _with_helpers(load_suite(suite).tests[result.name])
                text = (
                    f"{head}: the whole test (clawnb's own answer passes it: "
                    f"python -m clawnb.course check {suite})\n\n{source}"
                )
    print(text)
