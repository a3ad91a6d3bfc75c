"""Classes made from the class code cache (`tether.class_code_cache`) behave as classes
compiled afresh: equality, repr, defaults, and attrs' per-class hash salt (the cached code
carries this process's salt, not the one of the process that wrote the cache)."""

from __future__ import annotations

import subprocess
import sys
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
