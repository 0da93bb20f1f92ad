""""Did you mean" for an unknown tool name: only names the session can really use.

A suggestion the model follows must work, and must mean what the model meant. So
the pool is the tools this session can call by name (its visible surface and the
aliases), and, when the session has a proxy (a tool with a `ProxyRoute`), the
hidden tools it reaches through it, suggested in the proxy's own words; a name
the proxy reaches exactly beats a direct name that is merely spelled alike
(``task`` → the hidden ``task``, never ``ask``).

A name is close when it is, in order:

- the same name in another case or spelling of separators (``Read_File``,
  ``readfile``);
- a name other agents give the same tool (`SAME_MEANING`: ``shell`` or, on
  Windows, ``bash`` → the shell tool there is; ``str_replace`` → ``edit_file``).
  A known name whose tool this session lacks suggests nothing rather than a
  look-alike (``task`` without the tasks plugin is not ``ask``);
- a close spelling: ratio 0.75 or more with the same first letter, or 0.9 or
  more (``read_fil`` → ``read_file``);
- the word extending a name (``grep_search`` → ``grep``), never the reverse: a
  longer name is another tool (``bash`` is not ``bash_output``).

``nope_tool`` suggests nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75
CUTOFF_ANY_START = 0.9
MAX_SUGGESTIONS = 3
MIN_PREFIX = 4

_SHELL = ("bash", "pwsh")

#: the names other agents (Claude Code, Codex, Gemini CLI, OpenHands, Cline, Cursor) and
#: common words give a tool, by the callgate tools that do the same job (normalised:
#: lowercase, no separators)
SAME_MEANING: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("bash", "pwsh", "powershell", "shell", "sh", "zsh", "cmd", "terminal",
                     "runshellcommand", "executecommand", "runcommand", "execcommand",
                     "localshell", "runterminalcmd", "exec", "command"), _SHELL),
    **dict.fromkeys(("read", "view", "cat", "openfile", "readmanyfiles", "viewfile",
                     "readfiles"), ("read_file",)),
    **dict.fromkeys(("write", "create", "createfile", "writetofile", "newfile"),
                    ("write_file",)),
    **dict.fromkeys(("edit", "strreplace", "replace", "strreplaceeditor", "replaceinfile",
                     "searchreplace", "applydiff", "editfile", "strreplacebasededittool"),
                    ("edit_file", "apply_patch")),
    **dict.fromkeys(("applypatch", "patch"), ("apply_patch", "edit_file")),
    **dict.fromkeys(("search", "searchfiles", "findinfiles", "rg", "ripgrep",
                     "codebasesearch", "grepsearch", "searchfilecontent"), ("grep",)),
    **dict.fromkeys(("find", "findfiles", "filesearch", "globfiles"), ("glob",)),
    **dict.fromkeys(("list", "listdir", "listdirectory", "listfiles", "dir"), ("ls",)),
    **dict.fromkeys(("fetch", "webfetch", "curl", "browse", "openurl", "readurl", "urlfetch"),
                    ("web_fetch",)),
    **dict.fromkeys(("todo", "todowrite", "todoread", "updateplan", "plan", "updatetodos"),
                    ("todo_write",)),
    **dict.fromkeys(("notebookedit", "editnotebook"), ("notebook_edit",)),
    **dict.fromkeys(("killshell", "kill", "killjob", "killbash"), ("job_kill",)),
    **dict.fromkeys(("bashoutput", "shelloutput", "joboutput", "readoutput"), ("job_output",)),
    **dict.fromkeys(("move", "mv", "rename", "renamefile", "movefile"), ("move_file",)),
    **dict.fromkeys(("askuser", "askuserquestion", "askfollowupquestion", "question"),
                    ("ask",)),
    **dict.fromkeys(("task", "agent", "subagent", "dispatchagent", "spawnagent", "runagent",
                     "delegate"), ("task",)),
    **dict.fromkeys(("savememory", "memorize"), ("remember",)),
}


def _key(name: str) -> str:
    """``name`` as compared: lowercase, without ``_``, ``-``, ``.`` or spaces."""
    return "".join(ch for ch in name.lower() if ch not in "_-. ")


def close_names(word: str, pool: Iterable[str]) -> list[str]:
    """Up to `MAX_SUGGESTIONS` names of ``pool`` close to ``word``, best first (see the
    module's docstring for what counts as close)."""
    names = sorted(set(pool))
    keyed: dict[str, str] = {}
    for name in names:
        keyed.setdefault(_key(name), name)
    key = _key(word)
    if not key:
        return []
    if key in keyed:
        return [keyed[key]]
    meant = SAME_MEANING.get(key)
    if meant is not None:  # a name we know: its tools here, or nothing (not a look-alike)
        return [n for n in meant if n in names][:MAX_SUGGESTIONS]
    found: list[str] = []
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(key)
    scored = []
    for low, name in keyed.items():
        matcher.set_seq1(low)
        if matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= CUTOFF_ANY_START or (ratio >= CUTOFF and low[0] == key[0]):
            scored.append((-ratio, name))
    found = [name for _, name in sorted(scored)][:MAX_SUGGESTIONS]
    if not found and len(key) > MIN_PREFIX:
        found = [n for low, n in keyed.items()
                 if len(low) >= MIN_PREFIX and key.startswith(low)][:MAX_SUGGESTIONS]
    return found


def did_you_mean(word: str, callable_names: Iterable[str],
                 reachable_names: Iterable[str] = (), via: str | None = None) -> str:
    """``"; did you mean …?"`` naming callable tools, then hidden ones as calls through the
    proxy (``via``: `ProxyRoute.hidden_tool`, a template of ``{name}``); ``""`` when nothing
    is close enough. A hidden tool of exactly that name wins over direct look-alikes."""
    callable_names = list(callable_names)
    reachable = set(reachable_names) - set(callable_names) if via is not None else set()
    exact_hidden = [n for n in reachable if _key(n) == _key(word)]
    if exact_hidden:
        direct, hidden = [], exact_hidden[:1]
    else:
        direct = close_names(word, callable_names)
        exact = bool(direct) and _key(direct[0]) == _key(word)
        hidden = [] if exact or not reachable else close_names(word, reachable - set(direct))
    parts = list(direct[:MAX_SUGGESTIONS])
    parts += [via.format(name=n) for n in hidden[: MAX_SUGGESTIONS - len(parts)]
              if via is not None]
    if not parts:
        return ""
    return "; did you mean " + (parts[0] if len(parts) == 1 else
                                ", ".join(parts[:-1]) + " or " + parts[-1]) + "?"


__all__ = ["SAME_MEANING", "close_names", "did_you_mean"]
