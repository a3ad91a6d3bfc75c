"""The VS Code extension (editors/vscode): its Node tests, typecheck, lint and packaging.

Each `editors/vscode/test/**/*.test.ts` file is one test here: the files are bundled once
per session (`node build.mjs --tests`, esbuild, into `out/`) and each runs under Node's
test runner. The core tests drive the real daemon (`python -m tether serve --provider
scripted`, with this interpreter as TETHER_PYTHON and the `daemon_env` environment); the
extension tests run the adapters and the whole activated extension against a stub `vscode`
module and the real daemon. The chat webview's Chromium tests are in test_vscode_webview.py.
The extension asks for ACP v2 (SPEC §12.1): every file runs against the default daemon (v2),
and the user flows (`ACP_V1_FLOWS`) run again against a v1-only daemon (`TETHER_ACP_V2=off`).

Set up once with `npm ci --prefix editors/vscode` (Node.js 20+).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXTENSION = REPO / "editors" / "vscode"
SETUP = "run `sh tests/install-deps` (it runs npm ci --prefix editors/vscode)"
NODE_TESTS = sorted(p.relative_to(EXTENSION).as_posix() for p in (EXTENSION / "test").rglob("*.test.ts"))

# the user flows that run on both ACP versions: a streamed turn and cancel, approvals (an edit,
# a command's output, the mode), options, reopening after a restart, the whole extension
ACP_V1_FLOWS = (
    "test/core/turn.test.ts",
    "test/core/approvals.test.ts",
    "test/core/options.test.ts",
    "test/core/restart.test.ts",
    "test/extension/extension.test.ts",
)
NODE_RUNS = [pytest.param(f, "on", id=f) for f in NODE_TESTS] + [
    pytest.param(f, "off", id=f"{f}[acp-v1]") for f in ACP_V1_FLOWS
]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"node is not on PATH: the VS Code extension's tests need Node.js 20+ ({SETUP})")
    if not (EXTENSION / "node_modules" / "esbuild").is_dir():
        pytest.fail(f"editors/vscode/node_modules is missing: {SETUP}")
    return node


def _run(
    args: list[str], *, env: dict[str, str] | None = None, timeout: float = 55
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            args,
            cwd=EXTENSION,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"{' '.join(args)} did not finish in {exc.timeout} s\n--- stdout ---\n{exc.stdout}\n--- stderr ---\n{exc.stderr}"
        )


def _output(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit code {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"


@pytest.fixture(scope="session")
def built_tests() -> str:
    """The extension and the test bundles, built once per session; returns node's path."""
    node = _node()
    proc = _run([node, "build.mjs", "--tests"])
    assert proc.returncode == 0, f"node build.mjs --tests failed\n{_output(proc)}"
    return node


def test_there_are_node_tests() -> None:
    assert {"test/core/turn.test.ts", "test/core/approvals.test.ts", "test/extension/extension.test.ts"} <= set(
        NODE_TESTS
    )


def test_the_v1_flows_are_node_tests() -> None:
    assert set(ACP_V1_FLOWS) <= set(NODE_TESTS)


@pytest.mark.parametrize(("test_file", "acp_v2"), NODE_RUNS)
def test_node_test_file(test_file: str, acp_v2: str, built_tests: str, daemon_env: dict[str, str]) -> None:
    """`acp_v2`: the daemons' `TETHER_ACP_V2` ("off": a v1-only daemon, SPEC §12.1)."""
    bundle = "out/" + test_file.removesuffix(".ts") + ".js"
    env = {**daemon_env, "TETHER_PYTHON": sys.executable, "TETHER_ACP_V2": acp_v2}
    proc = _run([built_tests, "--test", "--test-reporter=spec", "--test-timeout=45000", bundle], env=env)
    assert proc.returncode == 0, f"node --test {bundle} failed\n{_output(proc)}"
    assert "ℹ fail 0" in proc.stdout and "ℹ pass 0" not in proc.stdout, _output(proc)


def test_typescript_typechecks() -> None:
    node = _node()
    proc = _run([node, "node_modules/typescript/bin/tsc", "--noEmit", "-p", "."])
    assert proc.returncode == 0, f"tsc --noEmit found errors\n{_output(proc)}"


def test_eslint_is_clean() -> None:
    node = _node()
    proc = _run([node, "node_modules/eslint/bin/eslint.js", "--max-warnings=0", "."])
    assert proc.returncode == 0, f"eslint found problems\n{_output(proc)}"


def _generator():  # editors/vscode/scripts/gen_types.py, loaded as a module
    spec = importlib.util.spec_from_file_location("gen_types", EXTENSION / "scripts" / "gen_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_protocol_types_are_current() -> None:
    """src/protocol/schema.ts is regenerated in memory from protocol/schema.json and compared."""
    gen = _generator()
    schema = json.loads((REPO / "protocol" / "schema.json").read_text())
    committed = (EXTENSION / "src" / "protocol" / "schema.ts").read_text()
    assert committed == gen.generate(schema), "src/protocol/schema.ts is stale: run npm run gen:types in editors/vscode"
    assert committed.splitlines()[0] == "// generated — DO NOT EDIT."
    assert gen.main(["--check"]) == 0
    # every definition and every method of the schema is in it
    for name in schema["$defs"]:
        assert re.search(rf"^export (interface|type) {name}\b", committed, re.M), name
    for method in schema["x-tether-methods"]:
        assert f'"{method}":' in committed or f"  {method}:" in committed, method


def test_no_hand_written_protocol_types() -> None:
    """The extension declares no type of its own under a name the schema defines: the
    protocol's shapes come from src/protocol/schema.ts only."""
    names = set(json.loads((REPO / "protocol" / "schema.json").read_text())["$defs"])
    declared = re.compile(r"^\s*(?:export\s+)?(?:interface|type)\s+([A-Za-z_]\w*)", re.M)
    offenders = []
    for path in sorted((EXTENSION / "src").rglob("*.ts")):
        if path == EXTENSION / "src" / "protocol" / "schema.ts":
            continue
        offenders += [f"{path.relative_to(EXTENSION)}: {n}" for n in declared.findall(path.read_text()) if n in names]
    assert offenders == []
    assert not (EXTENSION / "src" / "core" / "types.ts").exists()


def test_vsce_packages_a_vsix_with_the_right_manifest(tmp_path: Path) -> None:
    node = _node()
    vsix = tmp_path / "tether.vsix"
    proc = _run(
        [
            node,
            "node_modules/@vscode/vsce/vsce",
            "package",
            "--no-dependencies",
            "--allow-missing-repository",
            "-o",
            str(vsix),
        ],
        timeout=55,
    )
    assert proc.returncode == 0 and vsix.is_file(), f"vsce package failed\n{_output(proc)}"

    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
        vsixmanifest = z.read("extension.vsixmanifest").decode()

    # what goes into the package: the bundles, icons, manifest, readme, licence; no sources
    assert {
        "extension/package.json",
        "extension/dist/extension.js",
        "extension/dist/webview.js",
        "extension/dist/webview.css",
        "extension/media/icon.png",
        "extension/media/tether.svg",
        "extension/readme.md",
        "extension/LICENSE.txt",
    } <= names
    assert not [n for n in names if n.endswith((".ts", ".map")) or "/node_modules/" in n or "/test/" in n], sorted(
        names
    )
    assert "extension/" + manifest["main"].removeprefix("./") in names

    assert manifest["engines"] == {"vscode": "^1.90.0"}
    assert '<Property Id="Microsoft.VisualStudio.Code.Engine" Value="^1.90.0" />' in vsixmanifest
    assert manifest["activationEvents"] == [
        "onStartupFinished",
        "onView:tether.chat",
    ]  # the status bar item at start-up

    contributes = manifest["contributes"]
    assert contributes["viewsContainers"]["activitybar"] == [
        {"id": "tether", "title": "Tether", "icon": "media/tether.svg"}
    ]
    [view] = contributes["views"]["tether"]
    assert (view["type"], view["id"]) == ("webview", "tether.chat")

    commands = {c["command"] for c in contributes["commands"]}
    assert {
        "tether.newSession",
        "tether.sessions",
        "tether.cancel",
        "tether.setMode",
        "tether.askAboutSelection",
        "tether.acceptEdit",
        "tether.rejectEdit",
        "tether.alwaysEdit",
        "tether.acceptHunks",
        "tether.setApiKey",
    } <= commands
    editor_title = {m["command"]: m["when"] for m in contributes["menus"]["editor/title"]}
    assert editor_title == {
        "tether.acceptEdit": "resourceScheme == tether-diff",
        "tether.acceptHunks": "resourceScheme == tether-diff",
        "tether.alwaysEdit": "resourceScheme == tether-diff",
        "tether.rejectEdit": "resourceScheme == tether-diff",
    }
    assert all(m["command"] in commands for menu in contributes["menus"].values() for m in menu)

    settings = contributes["configuration"]["properties"]
    assert set(settings) == {
        "tether.path",
        "tether.args",
        "tether.provider",
        "tether.model",
        "tether.baseUrl",
        "tether.script",
        "tether.defaultMode",
        "tether.openDiffAutomatically",
        "tether.saveEditedFiles",
    }
    assert not [k for k in settings if "key" in k.lower() or "secret" in k.lower()], (
        "API keys live in SecretStorage only"
    )
    assert settings["tether.path"]["scope"] == "machine", "a workspace must not choose the executable"
    assert settings["tether.defaultMode"]["enum"] == ["read-only", "ask", "auto-edit", "full-auto"]
