"""Secrets: the one home for which variables are keys, how a key is found, and how it is hidden.

Everything that can carry a key towards a person, a file or the model goes through this module:
provider errors, tool results (subagents' too), hook input and output, the terminal and notebook
renderers, the session writer and prompt interpolation. Nothing else keeps a list of key names.

* :data:`KEY_ENV_VARS` — the agent's own key variables; :func:`key_variables` says which of them
  may be sent to a given base URL, :func:`env_key` finds one (environment, then ``.env``).
* :class:`Secret` — a key that does not print, pickle or ``repr`` itself.
* :class:`Redactor` / :func:`redact` — replaces every known key by ``***``: as written, and also
  its base64 (standard and URL-safe, at every byte alignment), hex and URL-encoded forms, plus
  strings shaped like provider keys (``sk-…``, ``Bearer …``, ``ghp_…``). A command that dumps
  ``/proc/$PPID/environ | base64`` is caught as surely as ``echo $KEY``.
* :class:`StreamRedactor` — the same for text that arrives in pieces (a streamed answer): a
  key split across two chunks is held back until it is whole, then hidden.
* :func:`is_secret_name` / :func:`scrubbed_env` — a child process (bash, hooks) gets the
  environment without variables whose *names* look secret (``*KEY*``, ``*TOKEN*``,
  ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``) and without the agent's own keys.

Known values are: the key variables' values in ``os.environ``, the values of other
secret-looking variables that look like tokens (16+ characters, no spaces, not a path), and
anything passed to :func:`register_secret` (a key read from ``.env``, a key given as
``api_key=``). Values shorter than 8 characters are never registered: replacing them would
mangle ordinary words.
"""

from __future__ import annotations

import base64
import fnmatch
import functools
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from .watch import Mark, watch

__all__ = [
    "KEY_ENV_VARS",
    "REDACTION",
    "SECRET_FILE_PATTERNS",
    "Redactor",
    "Secret",
    "StreamRedactor",
    "env_key",
    "is_secret_file",
    "is_secret_name",
    "key_variables",
    "mask",
    "read_dotenv",
    "redact",
    "redactor",
    "register_secret",
    "scrubbed_env",
    "watch_dotenv",
]

# The agent's own keys. Order matters for lookup: CLAWNB_API_KEY first (ours, any host).
KEY_ENV_VARS = ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")

REDACTION = "***"
MIN_SECRET_LEN = 8
# Other secret-looking variables are redacted by value only when the value looks like a token,
# so `GPG_KEY_DIR=/home/me/.gnupg` or `KEYBOARD=us` do not turn ordinary text into stars.
_MIN_TOKEN_LEN = 16

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# Names that match the pattern above but carry nothing secret and that tools rely on.
_HARMLESS_NAMES = frozenset({"KEYTIMEOUT"})

# Where a key can start: not inside an ASCII word. (``\b`` would also refuse a key glued to
# Chinese or other letters, which are word characters to the regex engine.)
_START = r"(?<![A-Za-z0-9_])"
# Strings shaped like provider keys, each with a clue its match contains. The full pattern is
# slow to search for (its leading look-behind is tried at every position); the clue starts
# with a literal, which the regex engine finds with a fast scan, so the pattern only runs when
# the clue is there.
_SHAPES: tuple[tuple[str, str], ...] = (
    # OpenAI / OpenRouter / Anthropic
    ("sk-", _START + r"sk-(?:or-v1-|proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_\-]{16,}"),
    # an Authorization header value
    ("earer", _START + r"(?:Bearer|bearer)\s+[A-Za-z0-9_\-\.=:/+]{12,}"),
    # Google API keys
    ("AIza", _START + r"AIza[0-9A-Za-z_\-]{30,}"),
    # GitHub tokens
    ("gh[pousr]_", _START + r"gh[pousr]_[A-Za-z0-9]{30,}"),
    # Slack tokens
    ("xox[abprs]-", _START + r"xox[abprs]-[A-Za-z0-9\-]{10,}"),
)
_KEY_SHAPES = [(re.compile(clue), re.compile(pattern)) for clue, pattern in _SHAPES]
# The end of a streamed text that may still grow into one of the shapes above (kept in step
# with them): its start, as far as it has come, at a word start. Everything after the literal
# start of each shape is in the shape's character class, so any run of those can still grow.
_SHAPE_START_ANYWHERE = re.compile(
    r"(?:s(?:k(?:-[A-Za-z0-9_\-]*)?)?"
    + r"|[Bb](?:e(?:a(?:r(?:e(?:r(?:\s+[A-Za-z0-9_\-\.=:/+]*)?)?)?)?)?)?"
    + r"|A(?:I(?:z(?:a[0-9A-Za-z_\-]*)?)?)?"
    + r"|g(?:h(?:[pousr](?:_[A-Za-z0-9]*)?)?)?"
    + r"|x(?:o(?:x(?:[abprs](?:-[A-Za-z0-9\-]*)?)?)?)?)\Z"
)
_SHAPE_START = re.compile(_START + _SHAPE_START_ANYWHERE.pattern)
# The longest run of key characters a stream holds back: longer than any key in any encoding.
MAX_HELD = 512


# ---------------------------------------------------------------------------------------------
# Names and lookup
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Does an environment variable's *name* say it holds a secret?"""
    return name in KEY_ENV_VARS or (
        name not in _HARMLESS_NAMES and _SECRET_NAME.search(name) is not None
    )


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def key_variables(base_url: str) -> tuple[str, ...]:
    """Which variables may supply a key for ``base_url``, in order.

    ``CLAWNB_API_KEY`` always; ``OPENROUTER_API_KEY`` only for openrouter.ai and
    ``OPENAI_API_KEY`` only for other hosts, so neither vendor's key is sent to the other.
    """
    host = _host(base_url)
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return ("CLAWNB_API_KEY", "OPENROUTER_API_KEY")
    return ("CLAWNB_API_KEY", "OPENAI_API_KEY")


def read_dotenv(path: str | os.PathLike[str], names: Iterable[str]) -> dict[str, str]:
    """The ``NAME=value`` lines of a ``.env`` file for the given names (``os.environ`` is left
    alone). A missing or unreadable file gives ``{}``."""
    wanted = set(names)
    return {k: v for k, v in read_dotenv_all(path).items() if k in wanted}


def read_dotenv_all(path: str | os.PathLike[str]) -> dict[str, str]:
    """Every ``NAME=value`` line of a ``.env`` file (``export`` and quotes allowed)."""
    found: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return found
    for line in lines:
        line = line.strip()
        if line.startswith("export "):
            line = line[7:].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not name or name.startswith("#"):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if value:
            found[name] = value
    return found


def env_key(
    base_url: str, *, dotenv: bool = False, cwd: str | os.PathLike[str] | None = None
) -> str | None:
    """The key for ``base_url`` from the environment, or (``dotenv=True``) from ``.env`` in
    ``cwd`` (default: the current directory). A key found in ``.env`` is registered with the
    redactor, since it is not in ``os.environ`` where the redactor looks by itself."""
    names = key_variables(base_url)
    from_file: dict[str, str] = {}
    if dotenv:
        from_file = read_dotenv(Path(cwd if cwd is not None else os.getcwd()) / ".env", names)
    for name in names:
        value = (os.environ.get(name) or "").strip()
        if value:
            return value
        value = from_file.get(name, "").strip()
        if value:
            register_secret(value)
            return value
    return None


class Secret:
    """A secret value that does not show itself: ``repr``/``str`` give ``<secret>``, pickling
    is refused, and :meth:`reveal` is the one way to read it. Creating one registers the value
    with the redactor."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        register_secret(value)

    @classmethod
    def of(cls, value: str | None) -> Secret | None:
        """``Secret(value.strip())``, or ``None`` for an empty or missing value."""
        value = value.strip() if value else ""
        return cls(value) if value else None

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> Any:
        raise TypeError("secrets are not pickled")


def mask(value: str | None) -> str:
    """Show that a secret is set without showing any of it: ``%claw config`` output is saved
    in the notebook, and even a key's last characters narrow it down."""
    if not value:
        return "(not set)"
    if len(value) < 16:
        return "*** (set)"
    return f"*** (set, {len(value)} characters)"


# ---------------------------------------------------------------------------------------------
# The redactor
# ---------------------------------------------------------------------------------------------


def _encoded_forms(value: str) -> set[str]:
    """The spellings of ``value`` a command or a server may produce.

    Base64 depends on where the value starts in the encoded stream (its offset mod 3), so for
    each alignment we take the part of the encoding that depends on the value's bytes alone:
    whichever way a dump of ``/proc/*/environ`` is aligned, one of them is in it verbatim.
    """
    raw = value.encode("utf-8")
    forms = {value, raw.hex(), raw.hex().upper(), quote(value, safe=""), quote_plus(value)}
    for skip in range(3):
        part = raw[skip:]
        part = part[: len(part) - len(part) % 3]
        if len(part) < 6:
            continue
        forms.add(base64.b64encode(part).decode())
        forms.add(base64.urlsafe_b64encode(part).decode())
    return {f for f in forms if len(f) >= MIN_SECRET_LEN}


# File systems stamp modification times from a coarse clock (a few ms), so a second change in
# the same tick leaves the time as it was: a stamp younger than this is not trusted.
_RACY_NS = 1_000_000_000


def _stat_stamp(path: str) -> tuple[int, ...] | None:
    """What changes when a file is written or replaced (modification time, size, inode), or
    ``None`` for a missing file. A file changed within the last second gets a stamp that
    differs on every call, so it is read again until its stamp can be trusted (git's rule
    for "racy" index entries)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    now = time.time_ns()
    if now - st.st_mtime_ns < _RACY_NS:
        return (st.st_mtime_ns, st.st_size, st.st_ino, now)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(frozen=True)
class _Needles:
    """The strings the redactor searches for, and the state of their sources when they were
    computed. They stay valid while :meth:`Redactor._sources` returns the same ``sources``."""

    sources: tuple[Any, ...]
    forms: tuple[str, ...]  # every known value in every encoding, longest first
    # the proper prefixes of the forms, by their last character, longest first: the end of a
    # streamed text that is one of them may still become a known value
    prefixes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


class Redactor:
    """Replaces known secrets (in all their encodings) and key-shaped strings by ``***``.

    The known values come from three sources: the environment's secret variables, the watched
    ``.env`` files and the registered values. Computing their encodings takes a while, and
    every tool result is redacted, so the result (the "needles") is kept and recomputed only
    when a source changes. Each call checks, cheaply, that they have not: the secret
    variables' current values, the number of variables (a new secret-looking one), each watched
    directory's and ``.env`` file's modification time, size and inode, and the number of
    registered values. A key added to the environment or to ``.env`` mid-session is therefore
    caught by the very next call. Where the kernel reports changes (Linux, a local filesystem:
    :mod:`clawnb.control.watch`), one look at its event queue stands for the folders' and
    files' stamps.
    """

    def __init__(self, values: Iterable[str] = (), *, environ: bool = True) -> None:
        self._registered: set[str] = {v for v in values if v and len(v) >= MIN_SECRET_LEN}
        self._environ = environ
        self._dotenv_dirs: dict[str, tuple[tuple[int, ...] | None, list[str]]] = {}
        self._env_keys: frozenset[Any] | None = None
        self._env_order: tuple[Any, ...] | None = None  # os.environ's raw keys, as last seen
        self._env_names: tuple[str, ...] = ()
        self._env_raw: tuple[Any, ...] = ()  # the names as os.environ stores them (bytes)
        self._lock = threading.Lock()
        self._needles = _Needles(sources=("never computed",), forms=())
        # the kernel's marks on the watched folders and .env files the needles were made from
        # (clawnb.control.watch); None: they are looked at with a stat on every call
        self._marks: tuple[Mark, ...] | None = None
        self._markable = True  # False where a mark could not be had: stats every time

    def register(self, value: str | None) -> None:
        """Remember one more secret value (shorter than 8 characters: ignored)."""
        if value and len(value.strip()) >= MIN_SECRET_LEN:
            with self._lock:
                self._registered.add(value.strip())

    def watch_dotenv(self, directory: str | os.PathLike[str]) -> None:
        """Also treat the secret-looking values of ``directory``'s ``.env`` and ``.env.*``
        files as known secrets (re-read when a file changes): a workspace's keys are not in
        ``os.environ``, yet an approved ``read .env`` or a ``cat`` must not show them."""
        with self._lock:
            self._dotenv_dirs.setdefault(os.path.abspath(directory), (None, []))
            self._marks, self._markable = None, True  # one more folder to look at

    # -- where the needles come from ---------------------------------------------------------

    def _dotenv_files(self) -> list[str]:
        """The watched ``.env`` files. A directory is listed again only when its own stamp
        changes (a file created, deleted or renamed into place changes it)."""
        files: list[str] = []
        for directory, (seen, listed) in list(self._dotenv_dirs.items()):
            stamp = _stat_stamp(directory)
            if stamp != seen:
                try:
                    with os.scandir(directory) as scan:
                        listed = sorted(
                            e.path
                            for e in scan
                            if e.name.startswith(".env") and is_secret_file(e.name)
                        )
                except OSError:
                    listed = []
                self._dotenv_dirs[directory] = (stamp, listed)
            files.extend(listed)
        return files

    def _secret_env_names(self) -> tuple[str, ...]:
        # Which names look secret is worked out again only when the set of names changes:
        # iterating os.environ decodes every entry (~2 µs each), its raw keys do not. (The
        # number of variables is not enough: a key added as another variable is removed
        # leaves it as it was.) The values of these names are read on every call, so a
        # changed key is caught at once.
        raw = getattr(os.environ, "_data", None)
        if isinstance(raw, dict) and self._env_order is not None:
            order = tuple(raw)
            if order == self._env_order:
                # the same key objects in the same order: compared by identity, along one array
                # (a set comparison hashes every key, ~35 scattered reads of cold memory)
                return self._env_names
            self._env_order = order
            if raw.keys() == self._env_keys:
                return self._env_names  # the same names, in another order
        elif isinstance(raw, dict):
            self._env_order = tuple(raw)
        keys = frozenset(raw) if isinstance(raw, dict) else frozenset(os.environ)
        if keys != self._env_keys:
            names = {k for k in os.environ if is_secret_name(k)} | set(KEY_ENV_VARS)
            self._env_names = tuple(sorted(names))
            self._env_keys = keys
            encode = getattr(os.environ, "encodekey", None)
            self._env_raw = tuple(encode(n) for n in self._env_names) if encode else ()
        return self._env_names

    def _env_values(self) -> tuple[Any, ...]:
        # The raw values (bytes), one per secret name: os.environ.get decodes the key and the
        # value every time (~1.5 µs a name, on every redaction); comparing the stored bytes
        # says just as well whether a key changed. They are decoded only when one did.
        raw = getattr(os.environ, "_data", None)
        if not isinstance(raw, dict):
            return tuple(os.environ.get(k) for k in self._secret_env_names())
        if tuple(raw) == self._env_order:
            names = self._env_names  # the same key objects in order: _secret_env_names's answer
        else:
            names = self._secret_env_names()
        if len(self._env_raw) == len(names):
            return tuple(map(raw.get, self._env_raw))
        return tuple(os.environ.get(k) for k in names)

    def _sources(self) -> tuple[Any, ...]:
        """A cheap fingerprint of everything the needles are computed from."""
        files = self._dotenv_files()
        env: tuple[str | None, ...] = ()
        if self._environ:
            env = self._env_values()
        return (
            len(self._registered),
            env,
            tuple((path, _stat_stamp(path)) for path in files),
        )

    def _unchanged(self, sources: tuple[Any, ...]) -> bool:
        """Would :meth:`_sources` return ``sources`` now? Checked in place, stopping at the
        first difference, without building the fingerprint: every tool result and streamed
        chunk asks, and almost always nothing changed. Where the kernel reports changes to the
        folders and files (:meth:`_mark_sources`), its word stands for their stamps, both ways.
        (Whatever differs, :meth:`_sources` then looks again in full, its side effects too.)"""
        if len(sources) != 3 or sources[0] != len(self._registered):
            return False
        if self._environ and self._env_values() != sources[1]:
            return False
        if self._marks is not None:  # the kernel's word on the folders and files, both ways
            return watch.unchanged_all(self._marks)
        files, seen = sources[2], 0
        for directory, (stamp, listed) in self._dotenv_dirs.items():
            if _stat_stamp(directory) != stamp:
                return False  # a file created, deleted or renamed there: listed again
            for path in listed:
                if seen >= len(files) or files[seen] != (path, _stat_stamp(path)):
                    return False
                seen += 1
        return seen == len(files)

    def _mark_sources(self) -> None:
        """Have the kernel report changes to the watched folders and ``.env`` files (see
        :mod:`clawnb.control.watch`), so :meth:`_unchanged` need not ``stat`` them: marks taken
        now, then kept only if the sources, looked at again after them, are still the needles'
        (a change in between is seen by that look, one after it by the marks). Not while a
        stamp is too recent to trust (:func:`_stat_stamp`): every call looks until it settles."""
        sources = self._needles.sources
        if not self._dotenv_dirs or any(len(stamp or ()) > 3 for _, stamp in sources[2]):
            return
        if any(len(stamp or ()) > 3 for stamp, _ in self._dotenv_dirs.values()):
            return
        paths = [*self._dotenv_dirs, *(path for path, _ in sources[2])]
        marks = tuple(watch.mark(path) for path in paths)
        if not all(m is not None for m in marks):
            self._markable = False  # not here (no inotify, a network filesystem, a link)
        elif self._sources() == sources:
            self._marks = marks  # type: ignore[assignment]  # None was ruled out just above

    def _current_needles(self) -> _Needles:
        with self._lock:
            if self._unchanged(self._needles.sources):
                if self._marks is None and self._markable:
                    self._mark_sources()  # from now on the kernel's word stands for the stats
                return self._needles
            # a change the kernel reported is one even where the stamps look the same (a file
            # rewritten at the same size, its time put back): the needles are made again
            reported, self._marks = self._marks is not None, None
            sources = self._sources()
            if reported or sources != self._needles.sources:
                values = set(self._registered)
                for path, _stamp in sources[2]:
                    values |= _secret_values(read_dotenv_all(path))
                if self._environ:
                    env = (os.fsdecode(v) if isinstance(v, bytes) else v for v in sources[1])
                    values |= _secret_values(dict(zip(self._env_names, env, strict=True)))
                forms: set[str] = set()
                for value in values:
                    forms |= _encoded_forms(value)
                # longest first, so a key that contains another is replaced whole
                ordered = tuple(sorted(forms, key=lambda f: (-len(f), f)))
                self._needles = _Needles(
                    sources=sources, forms=ordered, prefixes=_prefixes_by_last_char(ordered)
                )
            self._mark_sources()
            return self._needles

    def known_values(self) -> frozenset[str]:
        """Every known secret value in every encoding the redactor looks for."""
        return frozenset(self._current_needles().forms)

    # -- redaction ---------------------------------------------------------------------------

    def __call__(self, text: str) -> str:
        """``text`` with every known secret and key-shaped string replaced by ``***``."""
        if not isinstance(text, str) or len(text) < MIN_SECRET_LEN:
            return text  # shorter than any needle or key shape ("ok", "", an exit code)
        return self._replace(text, self._current_needles())

    def redact_as_of(self, text: str, generation: object) -> str:
        """``text`` redacted with the secrets known at ``generation`` (what :meth:`generation`
        returned a moment ago, in the same step), without checking their sources again: a
        skill's prompt, made at once of a body redacted under that generation. A generation
        that is no longer the latest one this redactor computed means a full :meth:`redact`."""
        if not isinstance(text, str) or len(text) < MIN_SECRET_LEN:
            return text
        if generation is not self._needles:
            return self(text)
        return self._replace(text, self._needles)

    def _replace(self, text: str, needles: _Needles) -> str:
        for form in needles.forms:
            # str.__contains__ is a fast C search and most texts hold no secret at all; longest
            # first, so once a key is replaced none of its shorter encodings can match in it
            if form in text:
                text = text.replace(form, REDACTION)
        for clue, shape in _KEY_SHAPES:
            if clue.search(text):
                text = shape.sub(_shape_replacement, text)
        return text

    redact = __call__

    def generation(self) -> object:
        """A token that stays the same object while the known secrets are unchanged: what
        :meth:`redact` makes of a text that has not changed can be kept until it differs."""
        return self._current_needles()

    def redact_after(self, text: str, before: str) -> str:
        """``text`` redacted as the continuation of ``before`` (what was shown just before
        it): a key shape starts only at a word start, and whether ``text`` begins at one
        depends on ``before``'s last character."""
        if not before or not text:
            return self(text)
        for form in self._current_needles().forms:
            if form in text:
                text = text.replace(form, REDACTION)
        context = before[-1] + text
        for clue, shape in _KEY_SHAPES:
            if clue.search(text):
                pieces, last = [], 1
                for m in shape.finditer(context, 1):  # the look-behind sees ``before``
                    pieces += [context[last : m.start()], _shape_replacement(m)]
                    last = m.end()
                context = context[0] + "".join(pieces) + context[last:]
                text = context[1:]
        return text

    def contains_secret(self, text: str) -> bool:
        """Does ``text`` hold a known secret or a key-shaped string?"""
        return bool(text) and self(text) != text

    def redact_data(self, value: Any) -> Any:
        """A copy of a JSON-like value (dicts, lists, strings) with every string redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {k: self.redact_data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.redact_data(v) for v in value]
        return value

    # -- streamed text -----------------------------------------------------------------------

    def settled(self, text: str) -> tuple[str, str]:
        """``(ready, held)`` with ``text == ready + held``: ``ready`` can be redacted and shown
        on its own, ``held`` may still be the start of a key (or of one of its encodings).

        Only what could still become a secret is held: the longest end of ``text`` that is the
        start of a known value in one of its encodings (base64 at every alignment, hex, URL
        forms — found anywhere, even glued to other text, as the redactor finds them), the start
        of a key shape at a word start (``s``, ``sk-…``, ``Bearer …``, ``gh``, ``AIza…``),
        and a known value that is complete but still followed by key characters (its encoding
        may go on). An ordinary word therefore shows at once instead of waiting for the next
        token. A cut never falls inside a secret the text already holds. A key-shaped run
        longer than :data:`MAX_HELD` is no single key (a dump, a blob): all but its last
        ``MAX_HELD`` characters are released, never cutting through a secret in it.
        """
        end = len(text)
        if not text:
            return "", ""
        needles = self._current_needles()
        # the trailing run of key characters (printable ASCII without spaces)
        run = end
        floor = max(0, end - 2 * MAX_HELD)
        while run > floor and "!" <= text[run - 1] <= "~":
            run -= 1
        space = run
        while space > floor and text[space - 1].isspace():
            space -= 1
        cut = end
        # the start of a key shape, at a word start or after "Bearer "
        shape = _SHAPE_START.search(text, max(0, space - 8))
        if shape is not None:
            cut = shape.start()
        longest = len(needles.forms[0]) if needles.forms else 0
        for form in needles.forms:
            found = text.find(form, max(0, space - 8 - longest))
            while found >= 0:
                if found >= run:  # complete in that run: the run may be its longer encoding
                    cut = min(cut, found)
                # it will read "***", and a key shape may start right after that
                glued = _SHAPE_START_ANYWHERE.match(text, found + len(form))
                if glued is not None:
                    cut = min(cut, glued.start())
                found = text.find(form, found + 1)
        # a run longer than any key is a dump: release all but its end
        cut = max(cut, end - MAX_HELD)
        # the start of a known value in any encoding, anywhere (never released: a proper
        # prefix is shorter than the value itself)
        for prefix in needles.prefixes.get(text[-1], ()):
            if text.endswith(prefix):
                cut = min(cut, end - len(prefix))
                break
        if 0 < cut < end:
            cut = self._outside_matches(text, cut)
        return text[:cut], text[cut:]

    def _outside_matches(self, text: str, cut: int) -> int:
        """``cut``, moved back to the start of any secret in ``text`` that it falls inside."""
        lo = max(0, cut - 2 * MAX_HELD)
        spans = [(lo + m.start(), lo + m.end()) for m in self._secret_matches(text[lo:])]
        moved = True
        while moved:
            moved = False
            for first, last in spans:
                if first < cut < last:
                    cut, moved = first, True
        return cut

    def _secret_matches(self, text: str) -> Iterator[re.Match[str]]:
        for form in self._current_needles().forms:
            if form in text:
                yield from re.finditer(re.escape(form), text)
        for clue, shape in _KEY_SHAPES:
            if clue.search(text):
                yield from shape.finditer(text)


class StreamRedactor:
    """Redacts text that arrives in pieces (a model's streamed answer).

    A key the model echoes may be split across chunks, and the redactor only recognises it
    whole, so :meth:`feed` returns the redacted text up to the last place where no key can be
    cut in two and keeps the rest (see :meth:`Redactor.settled`); :meth:`flush` returns that
    rest, redacted, when the stream ends. Ordinary prose shows at once, a word made of key
    characters shows when it is complete.
    """

    def __init__(self, using: Redactor | None = None) -> None:
        self._redactor = using if using is not None else redactor  # the process-wide one
        self._held = ""
        self._shown = ""  # the last character returned: the context of what follows

    def feed(self, chunk: str) -> str:
        """The part of everything fed so far that is safe to show now and was not returned."""
        ready, self._held = self._redactor.settled(self._held + chunk)
        return self._show(ready)

    def flush(self) -> str:
        """The text still held back, redacted; the stream starts afresh."""
        held, self._held = self._held, ""
        shown = self._show(held)
        self._shown = ""
        return shown

    def _show(self, text: str) -> str:
        if not text:
            return ""
        shown = self._redactor.redact_after(text, self._shown)
        self._shown = shown[-1:] or self._shown
        return shown

    @property
    def holding(self) -> bool:
        """Is some text held back?"""
        return bool(self._held)


def _prefixes_by_last_char(forms: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Every proper prefix of ``forms``, grouped by its last character, longest first."""
    grouped: dict[str, set[str]] = {}
    for form in forms:
        for k in range(1, len(form)):
            grouped.setdefault(form[k - 1], set()).add(form[:k])
    return {c: tuple(sorted(ps, key=lambda p: (-len(p), p))) for c, ps in grouped.items()}


def _secret_values(variables: Mapping[str, str]) -> set[str]:
    """The values of the key variables, and of other secret-looking variables when the value
    looks like a token (16+ characters, no spaces, not a path)."""
    values: set[str] = set()
    for name, value in variables.items():
        if not value or not is_secret_name(name):
            continue
        value = value.strip()
        if name in KEY_ENV_VARS:
            if len(value) >= MIN_SECRET_LEN:
                values.add(value)
        elif (
            len(value) >= _MIN_TOKEN_LEN
            and not any(c.isspace() for c in value)
            and not value.startswith(("/", "~", "."))
        ):
            values.add(value)
    return values


def _shape_replacement(match: re.Match[str]) -> str:
    text = match.group(0)
    if text.lower().startswith("bearer"):
        return text.split()[0] + " " + REDACTION
    return REDACTION


# The process-wide redactor: the keys of this process are the same for every session in it.
redactor = Redactor()


def watch_dotenv(directory: str | os.PathLike[str]) -> None:
    """Make the process-wide redactor know the keys in ``directory``'s ``.env`` files."""
    redactor.watch_dotenv(directory)


def redact(text: str) -> str:
    """:data:`redactor` applied to ``text``."""
    return redactor(text)


def register_secret(value: str | None) -> None:
    """Add a value to the process-wide redactor (e.g. a key given as ``api_key=``)."""
    redactor.register(value)


# ---------------------------------------------------------------------------------------------
# Secret files
# ---------------------------------------------------------------------------------------------

# Files that hold keys by convention. Reading one needs a person's approval each time, and a
# directory search skips them, so no match/no-match answer can leak their content.
SECRET_FILE_PATTERNS = (
    ".env",
    ".env.*",
    ".envrc",  # direnv: ``export NAME=value`` lines, the same keys as a .env
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials",  # ~/.aws/credentials and the like
    # Data files only: a module named credentials.py or credentials.ts is source code.
    "credentials.json",
    "credentials.y*ml",
    "credentials.toml",
    "credentials.ini",
    "credentials.cfg",
    "credentials.conf",
    "credentials.txt",
    "credentials.xml",
    "*credentials*.json",
    "secrets.toml",
    "secrets.y*ml",
)
# Templates that document which variables exist, without values.
_NOT_SECRET = (".env.example", ".env.sample", ".env.template", ".env.dist")


def is_secret_file(path: str | os.PathLike[str]) -> bool:
    """Is this a key or credential file by its name (``.env``, ``.env.local``, ``id_rsa``,
    ``*.pem``, ``credentials.json`` …)? ``.env.example`` and other templates are not, nor are
    public keys (``id_rsa.pub``)."""
    name = Path(os.fspath(path)).name
    lowered = name.lower()
    if lowered in _NOT_SECRET or lowered.endswith(".pub"):
        return False
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in SECRET_FILE_PATTERNS)


# ---------------------------------------------------------------------------------------------
# Child environments
# ---------------------------------------------------------------------------------------------


def scrubbed_env(
    base: Mapping[str, str] | None = None, *, keep: Iterable[str] = ()
) -> dict[str, str]:
    """``base`` (default ``os.environ``) without the variables whose names look secret and
    without the agent's own keys — the environment for bash commands and hooks. Names in
    ``keep`` stay (a hook configured with an explicit key)."""
    kept = set(keep)
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if k in kept or not is_secret_name(k)}
