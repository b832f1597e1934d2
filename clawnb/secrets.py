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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

__all__ = [
    "KEY_ENV_VARS",
    "REDACTION",
    "SECRET_FILE_PATTERNS",
    "Redactor",
    "Secret",
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

# Strings shaped like provider keys, each with literals one of which its match contains: the regex
# (slow: a word boundary tried at every position) only runs when the literal is there.
_SHAPES: tuple[tuple[tuple[str, ...], str], ...] = (
    # OpenAI / OpenRouter / Anthropic
    (("sk-",), r"\bsk-(?:or-v1-|proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_\-]{16,}"),
    # an Authorization header value
    (("Bearer", "bearer"), r"\b(?:Bearer|bearer)\s+[A-Za-z0-9_\-\.=:/+]{12,}"),
    # Google API keys
    (("AIza",), r"\bAIza[0-9A-Za-z_\-]{30,}"),
    # GitHub tokens
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    # Slack tokens
    (("xox",), r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
)
_KEY_SHAPES = [(literals, re.compile(pattern)) for literals, pattern in _SHAPES]


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


class Redactor:
    """Replaces known secrets (in all their encodings) and key-shaped strings by ``***``.

    The known values are the environment's keys (looked up on every call, so a key set later is
    still caught) plus the registered ones. The compiled pattern is rebuilt only when that set
    changes.
    """

    def __init__(self, values: Iterable[str] = (), *, environ: bool = True) -> None:
        self._registered: set[str] = {v for v in values if v and len(v) >= MIN_SECRET_LEN}
        self._environ = environ
        self._dotenv_dirs: set[str] = set()
        self._env_len = -1
        self._env_names: list[str] = []
        self._dotenv_cache: dict[str, tuple[tuple[int, int], frozenset[str]]] = {}
        self._lock = threading.Lock()
        self._cache_key: frozenset[str] | None = None
        self._pattern: tuple[re.Pattern[str], list[str]] | None = None

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
            self._dotenv_dirs.add(os.path.abspath(directory))

    def _dotenv_values(self) -> set[str]:
        values: set[str] = set()
        for directory in list(self._dotenv_dirs):
            try:
                with os.scandir(directory) as scan:
                    files = [
                        e.path for e in scan if e.name.startswith(".env") and is_secret_file(e.name)
                    ]
            except OSError:
                continue
            for path in files:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                stamp = (st.st_mtime_ns, st.st_size)
                cached = self._dotenv_cache.get(path)
                if cached is None or cached[0] != stamp:
                    found = _secret_values(read_dotenv_all(path))
                    cached = (stamp, frozenset(found))
                    self._dotenv_cache[path] = cached
                values |= cached[1]
        return values

    def known_values(self) -> frozenset[str]:
        values = set(self._registered) | self._dotenv_values()
        if self._environ:
            # Which names look secret is recomputed only when the number of variables changes
            # (iterating os.environ decodes every entry: ~2 µs each, on every redaction); the
            # values are read fresh each time, so a changed key is caught at once.
            if len(os.environ) != self._env_len:
                self._env_names = [k for k in os.environ if is_secret_name(k)]
                self._env_len = len(os.environ)
            present = {k: os.environ.get(k, "") for k in (*self._env_names, *KEY_ENV_VARS)}
            values |= _secret_values(present)
        return frozenset(values)

    def _compiled(self) -> tuple[re.Pattern[str], list[str]] | None:
        values = self.known_values()
        with self._lock:
            if values != self._cache_key:
                forms: set[str] = set()
                for value in values:
                    forms |= _encoded_forms(value)
                # longest first, so a key that contains another is replaced whole
                ordered = sorted(forms, key=len, reverse=True)
                pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
                self._pattern = (pattern, ordered) if pattern is not None else None
                self._cache_key = values
            return self._pattern

    def __call__(self, text: str) -> str:
        """``text`` with every known secret and key-shaped string replaced by ``***``."""
        if not text or not isinstance(text, str):
            return text
        compiled = self._compiled()
        if compiled is not None:
            pattern, forms = compiled
            # str.__contains__ is a fast C search; most texts hold no secret at all
            if any(form in text for form in forms):
                text = pattern.sub(REDACTION, text)
        for literals, shape in _KEY_SHAPES:
            if any(literal in text for literal in literals):
                text = shape.sub(_shape_replacement, text)
        return text

    redact = __call__

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
    "credentials",
    "credentials.*",
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
