"""The shell grammar under the approval rules: tree-sitter with the bash grammar.

Owns: parsing one command text into every simple command the grammar exposes, wherever it sits, each word
with its literal value; and saying why the text is not *plain* or not *fully seen*.
Must not: know about wrappers, interpreters or rules, or import tree-sitter before the first command.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GrammarView", "SimpleCommand", "Word", "parse_shell"]


@dataclass(frozen=True, slots=True)
class Word:
    source: str  # as written
    # after quote removal (`$HOME`, `${HOME}`, `"$HOME"` at the start read as `~`);
    # None when only running the command can tell (`$X`, `$(...)`, `$'...'`)
    value: str | None
    literal: bool  # no expansion of any kind (a glob is still literal)
    glob: bool = False  # unquoted `*`, `?` or `[`


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    words: tuple[Word, ...]  # the program and its arguments
    assignments: tuple[str, ...] = ()  # leading `NAME=value` words, as written


@dataclass(slots=True)
class GrammarView:
    commands: list[SimpleCommand] = field(default_factory=list)
    not_plain: list[str] = field(default_factory=list)  # why no allow rule may approve it
    unseen: list[str] = field(default_factory=list)  # what a deny rule cannot see
    writes: list[str] = field(default_factory=list)  # files a redirection writes, as written


_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        # imported here, on the first command: the daemon's start path does not pay for it
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


# Nodes a plain command may be made of (anything else makes it not plain).
_PLAIN_NODES = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "string",
        "string_content",
        "raw_string",
        "number",
        "concatenation",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "comment",
    }
)
# where an operator token joins commands (tokens elsewhere belong to a named construct)
_JOINING = frozenset({"program", "list", "pipeline", "command", "redirected_statement"})
_PLAIN_TOKENS = frozenset({";", "&&", "||", "|", "|&", "\n", '"', "'"})
_WHAT = {
    "simple_expansion": "a variable expansion",
    "expansion": "a variable expansion",
    "command_substitution": "command substitution",
    "process_substitution": "process substitution",
    "arithmetic_expansion": "arithmetic expansion",
    "ansi_c_string": "`$'...'` quoting",
    "translated_string": '`$"..."` quoting',
    "brace_expression": "brace expansion",
    "for_statement": "a loop",
    "c_style_for_statement": "a loop",
    "while_statement": "a loop",
    "if_statement": "a conditional",
    "case_statement": "a conditional",
    "test_command": "a `[[ ]]` test",
    "compound_statement": "a `{ }` group or `(( ))`",
    "subshell": "a subshell",
    "function_definition": "a function definition",
    "negated_command": "`!`",
    "declaration_command": "`export`/`declare`/`local`",
    "unset_command": "`unset`",
    "variable_assignment": "a variable assignment",
    "variable_assignments": "a variable assignment",
    "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string",
}
_INTO_GIT = "a redirection into a `.git` directory"
_DEV_OK = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def parse_shell(text: str) -> GrammarView:
    """Every simple command in `text` and the reasons it is not plain or not fully seen."""
    source = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    view = GrammarView()
    # (node, whether an enclosing construct already made the text not plain: its inner
    # nodes need no reason of their own, but their commands are still collected)
    stack: list[tuple[Any, bool]] = [(tree.root_node, False)]
    spans: list[tuple[int, int]] = []  # the text each token (or here-document body) covers
    while stack:
        node, covered = stack.pop()
        kind = node.type
        if node.child_count == 0 or kind == "heredoc_body":
            spans.append((node.start_byte, node.end_byte))
        why: str | None = None
        if node.is_error or node.is_missing:
            why = f"the shell grammar cannot parse `{_snippet(node)}`"
            _add(view.unseen, why)
        elif not node.is_named:
            if kind == "&":
                why = "a background job (`&`)"
            elif kind not in _PLAIN_TOKENS and node.parent is not None and node.parent.type in _JOINING:
                why = f"`{kind}`"
        elif kind == "command":
            view.commands.append(_simple_command(node))
        elif kind == "file_redirect":
            why = _redirect_problem(node)
            if why and why.startswith(_INTO_GIT):
                _add(view.unseen, why)  # asked in every mode, like an edit of `.git/**`
            elif why is None:
                view.writes.extend(_written(node))
        elif kind not in _PLAIN_NODES:
            why = f"{_WHAT.get(kind, f'`{kind}`')} (`{_snippet(node)}`)"
        if why and not covered:
            _add(view.not_plain, why)
        stack.extend((child, covered or why is not None) for child in reversed(node.children))
    skipped = _skipped_text(source, spans)
    if skipped:
        # text no token covers (`awk -f - <<'EOF'` loses the `-`): the shell reads it, the
        # grammar does not
        _add(view.unseen, f"the shell grammar skips `{_brief_text(skipped)}`")
    return view


def _skipped_text(source: bytes, spans: list[tuple[int, int]]) -> str:
    at = 0
    for start, end in sorted(spans):
        if start > at:
            gap = source[at:start].decode("utf-8", "surrogatepass").replace("\\\n", "")
            if gap.strip():
                return gap.strip()
        at = max(at, end)
    gap = source[at:].decode("utf-8", "surrogatepass").replace("\\\n", "")
    return gap.strip()


def _brief_text(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _simple_command(node: Any) -> SimpleCommand:
    words: list[Word] = []
    assignments: list[str] = []
    for i, child in enumerate(node.children):
        name = node.field_name_for_child(i)
        if child.type == "variable_assignment":
            assignments.append(_text(child))
        elif name == "name":
            inner = child.named_children
            words.append(word_of(inner[0]) if inner else Word(_text(child), None, False))
        elif name == "argument":
            words.append(word_of(child))
    return SimpleCommand(tuple(words), tuple(assignments))


def _redirect_problem(node: Any) -> str | None:
    destination = node.child_by_field_name("destination")
    operator = next((c.type for c in node.children if not c.is_named), "")
    if destination is None:
        return f"a redirection (`{_snippet(node)}`)"
    target = word_of(destination)
    if operator in (">&", "<&") and target.value is not None and (target.value.isdigit() or target.value == "-"):
        return None  # `2>&1`, `>&-`: no file involved
    value = target.value
    if value is None or not target.literal or target.glob:
        return f"a redirection to `{_snippet(destination)}`"
    if value in _DEV_OK:
        return None
    if ".git" in value.lower().split("/"):
        # `.git/hooks/pre-commit`, `sub/.git/config`: what git runs later, outside any sandbox
        return f"{_INTO_GIT} (`{_snippet(node)}`)"
    if value.startswith(("/", "~")) or posixpath.normpath(value).split("/")[0] == "..":
        return f"a redirection outside the workspace (`{_snippet(node)}`)"
    return None


def _written(node: Any) -> list[str]:
    """The file an output redirection (`>`, `>>`, `>|`, `&>`, `<>`, `>&file`) writes, if any."""
    operator = next((c.type for c in node.children if not c.is_named), "")
    destination = node.child_by_field_name("destination")
    if ">" not in operator or destination is None:
        return []
    value = word_of(destination).value
    return [] if value is None or value in _DEV_OK or value.isdigit() or value == "-" else [value]


def word_of(node: Any) -> Word:
    """One argument as a rule sees it."""
    kind, source = node.type, _text(node)
    if kind in ("word", "number"):
        value, glob, brace = _unquoted(source)
        if brace or _RAW_BLANK.search(source):
            # an unquoted blank inside one word: the grammar and the shell disagree
            return Word(source, None, False)
        return Word(source, value, True, glob)
    if kind == "raw_string":
        return Word(source, source[1:-1], True)
    if kind == "string":
        inner = [c for c in node.named_children]
        if all(c.type == "string_content" for c in inner):
            return Word(source, _unescape_double(source[1:-1]), True)
        if inner and _is_home(inner[0]) and all(c.type == "string_content" for c in inner[1:]):
            rest = "".join(_unescape_double(_text(c)) for c in inner[1:])
            return Word(source, "~" + rest, False)
        return Word(source, None, False)
    if kind in ("simple_expansion", "expansion") and _is_home(node):
        return Word(source, "~", False)
    if kind == "concatenation":
        return _concatenation(node, source)
    return Word(source, None, False)


def _concatenation(node: Any, source: str) -> Word:
    pieces = [word_of(c) for c in node.named_children]
    if not pieces or any(p.value is None for p in pieces) or any(p.value == "~" and not p.literal for p in pieces[1:]):
        return Word(source, None, False)
    # brace expansion (`{/,x}`) is spread over several unquoted pieces: look at them joined,
    # with the quoted ones masked out
    masked = "".join(
        _unquoted(p.source)[0] if c.type in ("word", "number") else "q" * len(p.source)
        for c, p in zip(node.named_children, pieces, strict=True)
    )
    if _BRACE.search(masked):
        return Word(source, None, False)
    return Word(
        source, "".join(p.value or "" for p in pieces), all(p.literal for p in pieces), any(p.glob for p in pieces)
    )


_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_RAW_BLANK = re.compile(r"(?<!\\)[ \t\n]")


def _unquoted(source: str) -> tuple[str, bool, bool]:
    """An unquoted word's value (backslashes removed), whether it globs, whether it braces."""
    out: list[str] = []
    plain: list[str] = []  # unescaped characters only, for the glob and brace checks
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            if source[i + 1] != "\n":
                out.append(source[i + 1])
                plain.append("e")
            i += 2
            continue
        out.append(ch)
        plain.append(ch)
        i += 1
    unescaped = "".join(plain)
    return "".join(out), any(c in unescaped for c in "*?["), bool(_BRACE.search(unescaped))


def _unescape_double(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _is_home(node: Any) -> bool:
    if node.type not in ("simple_expansion", "expansion"):
        return False
    named = node.named_children
    # `$HOME` or `${HOME}`: a variable name and nothing else (no `:-`, `#`, `/`)
    return (
        len(named) == 1
        and named[0].type == "variable_name"
        and _text(named[0]) == "HOME"
        and len(node.children) == (2 if node.type == "simple_expansion" else 3)
    )


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "surrogatepass")


def _snippet(node: Any, limit: int = 40) -> str:
    text = " ".join(_text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _add(reasons: list[str], why: str) -> None:
    # a non-empty list is what counts; the first few reasons are enough to explain it
    if len(reasons) < 10 and why not in reasons:
        reasons.append(why)
