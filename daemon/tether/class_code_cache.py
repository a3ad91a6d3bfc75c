"""The code that dataclasses and attrs generate for each class, kept across daemon starts (stdlib only).

Owns: `install` (routes the compilation of generated methods, cattrs functions, forward references and
`re` patterns through one marshal cache) and `save` (writes what this start compiled). Why: decision 0010.
Must not: import what it routes, change what a class's generated code is, trust a cache file another user
could have written, or fail a start because of the cache (any doubt: compile as usual).
"""

from __future__ import annotations
import __future__

import marshal
import os
import stat
import sys
from pathlib import Path
from types import CodeType, ModuleType

TYPE_CHECKING = False  # not `typing`'s: `tether serve` answers `initialize` before importing it
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from typing import Any

_MAX_ENTRIES = 4000  # past this (sources that changed across upgrades), keep this start's only
_Key = tuple[str, str, int, str]  # mode, file name, compiler flags, source
# a pattern's compiled form, what `re._compiler.compile` hands `_sre.compile`: its flags
# (the pattern's own `(?x)` added), its code, its group count and named groups
_Regex = tuple[int, list[int], int, dict[str, int]]
_REGEX = "regex"  # the mode of a pattern's key: ("regex", "", flags, pattern)

# attrs salts a frozen class's `__hash__` with a number that differs in every process
# (a str hash): the key holds a placeholder in its place, the code this process's number
_HASH_SALT = r"(def __hash__\(self\):\s*return hash\(\(\s*)(-?\d+),"
_hash_salt: re.Pattern[str] | None = None  # compiled at the first class (re is imported by then)
_PLACEHOLDER = 0x5A17_C0DE_5A17_C0DE

_cache: dict[_Key, CodeType | _Regex] = {}
_loaded = False  # the file is read when the first module routed here is imported
_used: set[_Key] = set()
_compiled = 0  # misses since the file was read: nothing to write when 0
_path: Path | None = None
_installed: list[tuple[ModuleType, str]] = []  # the module globals that shadow a builtin
_regex_compile: Callable[..., re.Pattern[Any]] | None = None  # `re._compiler.compile` (kept once seen)
_regexes_routed = False  # a thread may still be in the stand-in after it is unrouted: it then compiles as usual


def cache_dir(home: str | None, workspace: str | None) -> Path | None:
    """$TETHER_CACHE, else ``cache`` in Tether's data directory (``--home``, else $TETHER_HOME,
    else the user data directory), or None when that lies in the workspace (commands may write there: no
    cache then)."""
    directory = _location(home)
    root = Path(os.path.realpath(workspace or os.getcwd()))
    return None if directory == root or root in directory.parents else directory


def cache_dirs() -> list[str]:
    """Every directory a Tether start may read a cache from (the one in use, $TETHER_CACHE,
    the one $TETHER_HOME names, the user data directory's), each made now if missing: hidden from
    commands and tools whatever their workspace (the sandbox hides only what exists), since
    code loaded from there runs outside the sandbox at a later start."""
    found = {_location(None), _location(None, cache=False), _location(None, default=True)}
    if _path is not None:
        found.add(_path.parent)
    for directory in found:
        try:  # noqa: SIM105 (contextlib is not loaded on the start path)
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            pass
    return sorted(str(directory) for directory in found)


def _location(home: str | None, *, default: bool = False, cache: bool = True) -> Path:
    """$TETHER_CACHE when set (``cache``), else ``cache`` in the data directory."""
    folder = None if default or not cache else os.environ.get("TETHER_CACHE")
    if folder:
        return Path(os.path.realpath(Path(folder).expanduser().absolute()))
    chosen = None if default else home or os.environ.get("TETHER_HOME")
    if chosen:
        data = Path(chosen).expanduser().absolute()
    else:
        import platformdirs

        data = Path(platformdirs.user_data_dir("tether", appauthor=False))
    return Path(os.path.realpath(data / "cache"))


def install(directory: Path) -> None:
    """Route the code generation of dataclasses, typing, attrs and cattrs through the cache
    kept in ``directory``: each of those modules now, or when it is imported (nothing is
    imported here: `tether serve` answers `initialize` before it imports any of them). Only
    the first call does anything."""
    global _path
    if _path is not None:
        return
    try:
        # made now, before any command runs: the sandbox hides only what exists, and a
        # command must never make this folder (or a file in it) before the daemon does
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return
    # one file per interpreter release (its bytecode and marshal format)
    _path = directory / f"class-code-{sys.implementation.cache_tag}-{sys.hexversion:x}.marshal"
    for name in _ROUTES:
        if name in sys.modules:
            _route(sys.modules[name])
    sys.meta_path.insert(0, _ROUTER)
    _route_regexes()


def _route(module: ModuleType) -> None:
    """Shadow the builtin with a module global: for that module alone, it goes through the
    cache (a module that defines that name itself, another version, is left as it is)."""
    global _loaded
    builtin, make = _ROUTES[module.__name__]
    if builtin not in vars(module):
        if not _loaded:
            _loaded = True
            assert _path is not None
            _cache.update(_load(_path))
        setattr(module, builtin, make(module))
        _installed.append((module, builtin))


class _RouteOnImport:
    """A meta path finder that only wraps the loader of the modules in ``_ROUTES``, so
    each is routed once it has run (the import itself is the other finders')."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in _ROUTES:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec: ModuleSpec | None = None if finder is self or find is None else find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RoutedLoader(spec.loader)  # type: ignore[assignment]  # a Loader in all but name
                return spec
        return None


class _RoutedLoader:
    """The module's own loader, which routes the module once it has run."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self._loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _route(module)


_ROUTER = _RouteOnImport()


def save() -> None:
    """Start-up is over: write what it compiled (atomically: a reader sees the old file or
    the new; an error leaves the cache as it was), then stop caching (classes made later
    compile as usual, and the cache's memory is freed)."""
    global _compiled
    if _path is None or not _compiled:
        _retire()
        return
    kept = _cache if len(_cache) <= _MAX_ENTRIES else {k: _cache[k] for k in _used}
    try:
        data = marshal.dumps(kept)  # before the file is made: a value that does not marshal leaves none
        _path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(_path, [data])
    except (OSError, ValueError):
        pass  # a read-only or full disk: the next start compiles again
    _retire()


def write_private(path: Path, chunks: list[bytes]) -> None:
    """``path`` made of ``chunks``, readable and writable by this user alone, replaced at
    once: a reader sees the old file or the new (a link in its place is not followed)."""
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with open(fd, "wb") as out:
        out.writelines(chunks)
    os.replace(partial, path)


def _retire() -> None:
    global _compiled, _regexes_routed
    if _ROUTER in sys.meta_path:
        sys.meta_path.remove(_ROUTER)
    if _regexes_routed:
        _regexes_routed = False
        vars(sys.modules["re._compiler"])["compile"] = _regex_compile
    while _installed:
        module, name = _installed.pop()
        delattr(module, name)  # the builtin again
    _cache.clear()
    _used.clear()
    _compiled = 0


def _load(path: Path) -> dict[_Key, CodeType | _Regex]:
    """The file's code objects, or none when it is missing, unreadable, not ours alone, or
    not a cache of this shape."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    with open(fd, "rb") as source:
        if not (is_private(os.fstat(fd)) and is_private(os.stat(path.parent))):
            return {}
        try:
            loaded = marshal.loads(source.read())
        except (EOFError, ValueError, TypeError, OSError):
            return {}
    if not isinstance(loaded, dict):
        return {}
    return {
        k: v for k, v in loaded.items() if _is_key(k) and (isinstance(v, CodeType) if k[0] != _REGEX else _is_regex(v))
    }


def is_private(info: os.stat_result) -> bool:
    """Owned by this user and writable by no one else (so no other user chose its code)."""
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _is_key(key: object) -> bool:
    return (
        isinstance(key, tuple)
        and len(key) == 4
        and isinstance(key[0], str)
        and isinstance(key[1], str)
        and isinstance(key[2], int)
        and isinstance(key[3], str)
    )


def _is_regex(value: object) -> bool:
    """The shape of a cached pattern (its code's values are `_sre.compile`'s to check)."""
    return (
        isinstance(value, tuple)
        and len(value) == 4
        and isinstance(value[0], int)
        and isinstance(value[1], list)
        and isinstance(value[2], int)
        and isinstance(value[3], dict)
    )


def _route_regexes() -> None:
    """`re.compile` and the module-level `re` functions (through `re._compile`, which keeps
    its own per-process cache in front) parse a pattern not seen before from the cache.
    `re` is in every start by now (argparse imports it); without it, nothing is routed."""
    global _regex_compile, _regexes_routed
    compiler: Any = sys.modules.get("re._compiler")
    if compiler is None or _regexes_routed:
        return
    if _regex_compile is None:
        _regex_compile = compiler.compile
    _regexes_routed = True
    compiler.compile = _cached_regex


def _cached_regex(pattern: Any, flags: int = 0) -> re.Pattern[Any]:
    assert _regex_compile is not None
    compiler: Any = sys.modules["re._compiler"]
    if not (_regexes_routed and isinstance(pattern, str) and isinstance(flags, int)) or flags & compiler.SRE_FLAG_DEBUG:
        return _regex_compile(pattern, flags)  # retired, bytes patterns, re.DEBUG: as usual
    global _compiled, _loaded
    if not _loaded:
        _loaded = True
        assert _path is not None
        _cache.update(_load(_path))
    flags = int(flags)  # a `re.RegexFlag` does not marshal
    key = (_REGEX, "", flags, pattern)
    hit = _cache.get(key)
    if not isinstance(hit, tuple):
        parsed = compiler._parser.parse(pattern, flags)
        code = [int(op) for op in compiler._code(parsed, flags)]  # (opcodes are int subclasses)
        hit = (int(flags | parsed.state.flags), code, parsed.state.groups - 1, dict(parsed.state.groupdict))
        _cache[key] = hit
        _compiled += 1
    _used.add(key)
    final, code, groups, names = hit
    try:
        index: list[str | None] = [None] * (groups + 1)
        for name, number in names.items():
            index[number] = name
        made: re.Pattern[Any] = compiler._sre.compile(pattern, final, code, groups, dict(names), tuple(index))
    except (TypeError, ValueError, RuntimeError, IndexError, OverflowError, MemoryError):
        return _regex_compile(pattern, flags)  # a damaged entry (`_sre` checks the code): compile as usual
    return made


def _future_flags(module: ModuleType) -> int:
    """The `from __future__` flags that the module's own `compile`/`exec` calls inherit."""
    flags = 0
    for value in vars(module).values():
        if isinstance(value, __future__._Feature):
            flags |= value.compiler_flag
    return flags


def _code(source: str, filename: str, flags: int, mode: str = "exec") -> CodeType:
    global _hash_salt
    if _hash_salt is None:
        import re

        _hash_salt = re.compile(_HASH_SALT)
    salted = _hash_salt.search(source)
    if salted is None:
        return _cached_code(source, filename, flags, mode)
    general = f"{source[: salted.start(2)]}{_PLACEHOLDER}{source[salted.end(2) :]}"
    return _with_const(_cached_code(general, filename, flags, mode), int(salted.group(2)))


def _with_const(code: CodeType, salt: int) -> CodeType:
    """``code`` with the placeholder replaced by ``salt`` (in its nested functions too)."""
    consts = tuple(
        salt if type(c) is int and c == _PLACEHOLDER else _with_const(c, salt) if isinstance(c, CodeType) else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def _cached_code(source: str, filename: str, flags: int, mode: str) -> CodeType:
    global _compiled
    key = (mode, filename, flags, source)
    code = _cache.get(key)
    if not isinstance(code, CodeType):
        code = compile(source, filename, mode, flags=flags, dont_inherit=True)
        _cache[key] = code
        _compiled += 1
    _used.add(key)
    return code


def _exec_for(module: ModuleType) -> Any:
    flags = _future_flags(module)

    def cached_exec(source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None) -> None:
        if globals is None:  # the caller's globals, as the builtin would take
            globals = sys._getframe(1).f_globals
        if isinstance(source, str):
            source = _code(source, "<string>", flags)
        exec(source, globals, locals)

    return cached_exec


def _compile_for(module: ModuleType) -> Any:
    flags = _future_flags(module)

    def cached_compile(source: Any, filename: str, mode: str, *args: Any, **kwargs: Any) -> Any:
        if mode not in ("exec", "eval") or args or kwargs or not isinstance(source, str):
            return compile(source, filename, mode, *args, **kwargs)  # not a use routed here
        return _code(source, filename, flags, mode)

    return cached_compile


# module -> (the builtin it calls to compile generated code, the cached stand-in's maker)
_ROUTES: dict[str, tuple[str, Callable[[ModuleType], Any]]] = {
    "dataclasses": ("exec", _exec_for),  # `_create_fn`: `exec(source, globals, ns)`
    "typing": ("compile", _compile_for),  # `ForwardRef`: each string annotation
    "attr._make": ("compile", _compile_for),  # `_compile_and_eval`: `compile(source, name, "exec")`
    "cattrs.gen": ("compile", _compile_for),  # the converter's structure/unstructure functions
}
