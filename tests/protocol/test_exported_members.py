"""`tether_protocol.__all__` is the whole public surface, and importing it stays cheap.

Same idea as httpx's tests/test_exported_members.py: a public name added to one of the
private modules must be exported (or listed in NOT_EXPORTED with a reason), and `__all__`
stays sorted so diffs stay readable. Outside the protocol, nothing imports its private modules
(tests/ and bench/ are read here; the packages are import-linter's, pyproject.toml).
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import tether_protocol

PRIVATE_MODULES = (
    "_errors",
    "_framing",
    "_common",
    "_initialize",
    "_sessions",
    "_updates",
    "_extensions",
    "_snapshots",
    "_lsp",
    "_client_requests",
    "_methods",
    "_messages",
    "_converter",
    "_schema",
    "_config_options",
    "_rewind",
    "_queue",
    "_method_table",
)
# split off `_common` and `_sessions` for the start path, and re-exported by them (so by `_messages`)
PRIVATE_MODULES += ("_modes", "_prompt")
# the codec (JSON, the Struct decoder, the collector's pause) and the stored checkpoint of pending calls
PRIVATE_MODULES += ("_json", "_gc", "_codec", "_pending")
# the hand-declared `_meta` of generated ACP v1 classes, re-exported by `_updates`, `_client_requests` and `_initialize`
PRIVATE_MODULES += ("_update_meta", "_permission_meta", "_capabilities_meta")
# LSP's `initialize` and `$/cancelRequest` (ACP's are generated), re-exported by `_initialize`
PRIVATE_MODULES += ("_lsp_lifecycle",)
# the stored records' words (roles, statuses), shared by `_snapshots` and the store's records
PRIVATE_MODULES += ("_stored_vocabulary",)
# the copy of a prompt's wire blocks into the conversation's (it knows both models)
PRIVATE_MODULES += ("_prompt_blocks",)
# Modules that hold message classes: each is re-exported whole by `_messages`.
MESSAGE_MODULES = (
    "_common",
    "_initialize",
    "_sessions",
    "_updates",
    "_extensions",
    "_snapshots",
    "_lsp",
    "_client_requests",
    "_config_options",
    "_rewind",
    "_queue",
)

# Public-looking names of the private modules that are deliberately not exported.
NOT_EXPORTED = {
    ("_errors", "error_object"): "builds the error objects of TetherError and RequestFailed",
    ("_converter", "T"): "a TypeVar for annotations",
    ("_messages", "MESSAGE_MODULES"): "internal: which modules _messages gathers",
    ("_schema", "SCHEMA_DIALECT"): "a constant of the generated file",
    ("_schema", "GENERATED_COMMENT"): "a constant of the generated file",
    ("_json", "structs_as_builtins"): "the hook `_codec` sets so that `dumps` writes Structs",
    ("_codec", "T"): "a TypeVar for annotations",
    ("_codec", "NonEmpty"): "a field type the message modules declare with",
    ("_codec", "Wire"): "the base of the protocol's message classes: only the protocol declares them",
    ("_codec", "Stored"): "the base of the stored records' classes: only the protocol declares them",
    ("_codec", "reworded"): "how `convert` words a decode error (used by `acp_v2`)",
}

PACKAGE_DIR = Path(tether_protocol.__file__).resolve().parent


def _defined_names(module: str) -> list[str]:
    """Top-level names a module defines itself (not the ones it imports)."""
    tree = ast.parse((PACKAGE_DIR / f"{module}.py").read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


# The method table's specs are read through their module (`_method_table.SESSION_NEW`) by
# the daemon's registrations; the package exports their resolved form (`V1`, `Method`).
NOT_EXPORTED.update(
    {
        ("_method_table", name): "the method table's specs and their types, read through the module"
        for name in _defined_names("_method_table")
        if name not in tether_protocol.__all__  # (Direction, Kind: exported)
    }
)


def test_all_is_sorted_and_unique() -> None:
    assert tether_protocol.__all__ == sorted(tether_protocol.__all__)
    assert len(set(tether_protocol.__all__)) == len(tether_protocol.__all__)


def test_every_exported_name_resolves() -> None:
    for name in tether_protocol.__all__:
        assert getattr(tether_protocol, name) is not None, name
    assert tether_protocol.PROTOCOL_VERSION == 1


def test_exported_names_are_the_private_modules_objects() -> None:
    for module_name in PRIVATE_MODULES:
        module = importlib.import_module(f"tether_protocol.{module_name}")
        for name in _defined_names(module_name):
            if (module_name, name) in NOT_EXPORTED:
                continue
            assert name in tether_protocol.__all__, (
                f"{module_name}.{name} is public but not in tether_protocol.__all__ "
                "(export it, or add it to NOT_EXPORTED with a reason)"
            )
            assert getattr(tether_protocol, name) is getattr(module, name), name


def test_messages_re_exports_every_message_module_whole() -> None:
    messages = importlib.import_module("tether_protocol._messages")
    for module_name in MESSAGE_MODULES:
        module = importlib.import_module(f"tether_protocol.{module_name}")
        for name in _defined_names(module_name):
            assert getattr(messages, name, None) is getattr(module, name), (
                f"{module_name}.{name} is missing from _messages.py"
            )
    for module_name in PRIVATE_MODULES:
        assert (PACKAGE_DIR / f"{module_name}.py").is_file(), module_name
    on_disk = {p.stem for p in PACKAGE_DIR.glob("_*.py")} - {"__init__"}
    # the others are the parts of a public module that exports them (checked below): the
    # JSON-RPC peer and the conversation model
    parts = {name for names in PUBLIC_MODULE_PARTS.values() for name in names}
    assert on_disk - set(PRIVATE_MODULES) <= parts, "a new private module is not checked here"


PUBLIC_MODULE_PARTS = {
    "peer": ("_reader", "_rpc_types"),
    "conversation": ("_conversation_model", "_conversation_blocks", "_conversation_codec"),
}


@pytest.mark.parametrize("public", sorted(PUBLIC_MODULE_PARTS))
def test_a_public_module_exports_its_parts(public: str) -> None:
    module = importlib.import_module(f"tether_protocol.{public}")
    for part in PUBLIC_MODULE_PARTS[public]:
        for name in _defined_names(part):
            assert name in module.__all__ and getattr(module, name) is getattr(
                importlib.import_module(f"tether_protocol.{part}"), name
            ), f"tether_protocol.{public} does not export {part}.{name}"


def test_the_lazy_names_are_the_message_names() -> None:
    messages = importlib.import_module("tether_protocol._messages")
    assert sorted(tether_protocol._MESSAGE_NAMES) == sorted(messages.__all__)
    # each served from its own area's module, so that importing one (the start path's
    # `NewSessionParams`) does not import all of them through `_messages`
    for module_name, names in tether_protocol._MESSAGE_MODULES.items():
        module = importlib.import_module(f"tether_protocol.{module_name}")
        wrong = [n for n in names.split() if getattr(module, n, None) is not getattr(messages, n)]
        assert wrong == [], f"not in {module_name}: serve them from their own module"
    assert set(messages.MESSAGE_MODULES) == {importlib.import_module(f"tether_protocol.{m}") for m in MESSAGE_MODULES}


def test_no_stale_exemptions() -> None:
    for module_name, name in NOT_EXPORTED:
        assert name in _defined_names(module_name), (module_name, name)
        assert name not in tether_protocol.__all__, (module_name, name)


def test_dir_lists_exactly_the_exports() -> None:
    # httpx's check: everything public-looking on the package is in __all__. Submodules
    # (`schema`, or a private module's attribute) and the __future__ flag are not exports.
    public = [
        name
        for name in dir(tether_protocol)
        if not name.startswith("_")
        and name != "annotations"
        and not isinstance(getattr(tether_protocol, name), types.ModuleType)
    ]
    assert public == sorted(tether_protocol.__all__)


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchMessage'"):
        tether_protocol.NoSuchMessage  # noqa: B018
    assert not hasattr(tether_protocol, "attrs")


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_is_cheap_and_lazy() -> None:
    code = (
        "import sys, tether_protocol\n"
        "heavy = ('attr', 'attrs', 'cattrs', 'tether_protocol._messages',"
        " 'tether_protocol._converter', 'tether_protocol._schema')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "tether_protocol.InvalidParams, tether_protocol.detect_framing\n"
        "print('cattrs' in sys.modules)\n"
        "tether_protocol.PromptParams\n"
        "print('tether_protocol._prompt' in sys.modules, 'tether_protocol._messages' in sys.modules)\n"
        "tether_protocol.structure\n"
        "print('tether_protocol._converter' in sys.modules, [m for m in ('attrs', 'cattrs') if m in sys.modules])\n"
    )
    # a message class loads its own module, not every message module (`_messages`); the
    # converter is msgspec's: structure() loads neither attrs nor cattrs
    assert _run(code).splitlines() == ["[]", "False", "True False", "True []"]


# Outside the protocol its names come from the package (or a public module: `peer`, `conversation`,
# `schema`, `acp_v2`). The packages are held to that by import-linter (pyproject.toml's
# `private_modules` contract); tests/ and bench/ are not packages, so they are read here. A test
# imports a private module only to test that module's own behaviour:
PRIVATE_IMPORTS_ALLOWED = {
    "tests/protocol/test_method_table.py": "tests the method table module itself (its specs, MODULES, V1_SPECS)",
    "tests/protocol/test_codec_wording.py": "declares its own Structs on the protocol's base (`_codec.Wire`)",
    "tests/protocol/test_schema.py": "tests the schema generator (`_schema`'s GENERATED_COMMENT, the message modules)",
    "tests/store/test_snapshot_format_described_once.py": "tests that `_snapshots`' record classes are the one description",
}
REPOSITORY = Path(__file__).resolve().parents[2]


def _private_imports(path: Path) -> list[str]:
    """`file:line: module` for each import of a `tether_protocol._x` module in the file."""
    found: list[str] = []
    text = path.read_text(encoding="utf-8")
    if "tether_protocol" not in text:
        return found
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "tether_protocol":
                modules = [f"tether_protocol.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [
            f"{path.relative_to(REPOSITORY)}:{node.lineno}: {m}" for m in modules if m.startswith("tether_protocol._")
        ]
    return found


def test_tests_and_benches_import_the_public_face() -> None:
    files = sorted(
        p for top in ("tests", "bench") for p in (REPOSITORY / top).rglob("*.py") if "node_modules" not in p.parts
    )
    found = [hit for path in files for hit in _private_imports(path)]
    assert len(files) > 200 and any(hit.startswith("tests/protocol/test_schema.py") for hit in found)  # (it read them)
    assert [hit for hit in found if hit.partition(":")[0] not in PRIVATE_IMPORTS_ALLOWED] == [], (
        "import these names from `tether_protocol` (export a missing one in its __init__.py), or, in a test "
        "of that private module's own behaviour, list the file in PRIVATE_IMPORTS_ALLOWED with the reason"
    )
    assert sorted({hit.partition(":")[0] for hit in found}) == sorted(PRIVATE_IMPORTS_ALLOWED), "a stale exemption"


def test_mypy_sees_the_type_of_every_export(tmp_path: Path) -> None:
    # A name mypy does not see among the package's imports would come from its lazy
    # `__getattr__`, typed Any: every import of it would check nothing. (NULL_RESULT is Any.)
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import tether_protocol\n"
        + "".join(f"reveal_type(tether_protocol.{name})\n" for name in tether_protocol.__all__)
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), str(probe)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=240,
    )
    revealed = [line for line in done.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == len(tether_protocol.__all__), done.stdout + done.stderr
    untyped = [tether_protocol.__all__[int(line.split(":")[1]) - 2] for line in revealed if line.endswith('is "Any"')]
    assert untyped == ["NULL_RESULT"]
