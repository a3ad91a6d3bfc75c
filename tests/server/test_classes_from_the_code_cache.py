"""Classes made from the class code cache (`tether.class_code_cache`) behave as classes
compiled afresh: equality, repr, defaults, and attrs' per-class hash salt (the cached code
carries this process's salt, not the one of the process that wrote the cache)."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

PROGRAM = """
import dataclasses, sys
from pathlib import Path
from tether import class_code_cache
class_code_cache.install(Path(sys.argv[1]))
import attrs

@attrs.frozen
class A:
    x: int
    tags: tuple = attrs.field(factory=tuple)

@attrs.frozen
class B:
    x: int
    tags: tuple = attrs.field(factory=tuple)

@dataclasses.dataclass(frozen=True, slots=True)
class D:
    x: int
    y: str = "y"

class_code_cache.save()
print(hash(A(1)) != hash(B(1)), A(1) == A(1, ()), A(1) != A(2), repr(A(3)),
      D(1) == D(1, "y"), hash(D(1)) == hash((1, "y")), repr(D(2)))
"""

EXPECTED = "True True True A(x=3, tags=()) True True D(x=2, y='y')"


def _classes(cache: Path) -> str:
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(cache)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_classes_from_the_cache_behave_as_compiled_ones(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _classes(cache) == EXPECTED  # compiled, and written
    [written] = cache.glob("class-code-*.marshal")
    before = written.stat().st_mtime_ns
    for _ in range(2):  # from the cache (each process salts attrs' hashes anew)
        assert _classes(cache) == EXPECTED
    assert written.stat().st_mtime_ns == before  # nothing was compiled: nothing to write


# Patterns from the cache are the patterns `re` compiles: `Pattern.__eq__` compares the
# pattern, the flags and the compiled code; every pattern the daemon's turn modules make
# at import is among them (they are compiled through the cache while it is installed).
REGEX_PROGRAM = """
import json, re, sys
from pathlib import Path
from tether import class_code_cache
class_code_cache.install(Path(sys.argv[1]))
earlier = set(re._cache)  # (its keys: type, pattern, flags)
import re._compiler as compiler
routed = compiler.compile is not class_code_cache._regex_compile
import tether.agent.loop, tether.agent.executor, tether.handlers.prompt, tether.approvals.commands
made = [(p, f) for _kind, p, f in set(re._cache) - earlier if isinstance(p, str)]
extra = [(r"(?P<word>\\w+)\\s+(?P=word)", 0), (r"(?x) a  b  # spaced", 0), (r"^#+\\s*system:", re.I | re.M)]
for p, f in extra:
    re.compile(p, f)
same = all(re.compile(p, f) == class_code_cache._regex_compile(p, f)
           and re.compile(p, f).groupindex == class_code_cache._regex_compile(p, f).groupindex
           for p, f in made + extra)
words = re.compile(extra[0][0]).sub(lambda m: m["word"].upper(), "the the cat sat sat")
class_code_cache.save()
# a thread that took the stand-in before it was unrouted compiles as usual after
late = class_code_cache._cached_regex(r"late\\d+", 0)
print(json.dumps({"routed": routed, "restored": compiler.compile.__module__ == "re._compiler",
                  "patterns": len(made), "same": same, "words": words,
                  "late": late == class_code_cache._regex_compile(r"late\\d+", 0) and not class_code_cache._cache}))
"""


def _patterns(cache: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", REGEX_PROGRAM, str(cache)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_patterns_from_the_cache_are_the_ones_re_compiles(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _patterns(cache)  # parsed, and written
    assert first == {
        "routed": True,
        "restored": True,
        "patterns": first["patterns"],
        "same": True,
        "words": "THE cat SAT",
        "late": True,
    }
    assert isinstance(first["patterns"], int) and first["patterns"] >= 50
    [written] = cache.glob("class-code-*.marshal")
    stored = marshal.loads(written.read_bytes())
    assert sum(1 for key in stored if key[0] == "regex") >= first["patterns"]
    before = written.stat().st_mtime_ns
    assert _patterns(cache) == first  # from the cache: the same patterns, nothing new to write
    assert written.stat().st_mtime_ns == before


def test_a_damaged_pattern_in_the_cache_is_compiled_as_usual(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _patterns(cache)
    [written] = cache.glob("class-code-*.marshal")
    stored = marshal.loads(written.read_bytes())
    # every cached pattern's code cut short, one with a group name out of range: `_sre`
    # refuses such code, and the pattern is parsed afresh
    damaged = {
        key: (value[0], value[1][: len(value[1]) // 2], value[2], {**value[3], "x": 99}) if key[0] == "regex" else value
        for key, value in stored.items()
    }
    written.write_bytes(marshal.dumps(damaged))
    assert _patterns(cache) == first
