"""The README's two set-up lines are exactly what CI runs, and CI runs them against a wheel too."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_readme_setup_lines_are_the_ci_commands():
    readme = (REPO / "README.md").read_text()
    block = re.search(r"## Set up\s+```sh\n(.*?)```", readme, re.S)
    assert block, "README.md needs a '## Set up' section with one sh block"
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2, lines
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    for line in lines:
        assert line.strip() in ci, f"{line!r} is not run by .ci/run"
    assert "tether demo" in lines[0] and "pytest" in lines[1]


def test_ci_runs_the_demo_and_the_tests_against_a_wheel_install():
    """After the README's lines, .ci/run builds a wheel, installs it with the test extras into
    a fresh venv, runs the demo outside the checkout, checks where tether is imported from and
    runs the tests that depend on the install again with that venv's python (so they import
    and spawn the wheel's)."""
    run = (REPO / ".ci" / "run").read_text()
    step = run[run.index(".venv/bin/tether demo") :]  # after the README's first line (the build runs beside the tests)
    assert 'wait "$wheel_install"' in step[step.index("== wheel install") :]
    assert '"$wheel/venv/bin/pip" wheel --no-deps -q -w "$wheel/dist" .' in step
    assert '"$wheel/venv/bin/pip" install -q "$(echo "$wheel"/dist/tether-*.whl)[test]"' in step
    assert '(cd "$wheel" && venv/bin/tether demo)' in step
    assert '"site-packages" in where.parts' in step
    # the tests whose outcome depends on how Tether is installed (they spawn the installed
    # `tether`, or build the wheel): the rest run the same files, which the wheel test
    # checks all ship
    last = step.replace("\\\n", " ").rstrip().splitlines()[-1]
    assert last.startswith('"$wheel/venv/bin/python" -m pytest ')
    for part in (
        "tests/e2e/test_turn.py",
        "tests/e2e/test_cli.py",
        "tests/shared/test_window_command.py",
        "tests/shared/test_daemon_life.py",
        "tests/chat",
        "tests/test_readme_and_ci.py",
    ):
        assert f" {part}" in last, f"the wheel pass does not run {part}"
    assert ".venv/bin/pip install -e" not in step  # the wheel pass never installs the checkout


def test_the_daemon_the_tests_spawn_is_the_tether_they_import(daemon_env: dict[str, str], tmp_path: Path) -> None:
    """Tests spawn `sys.executable -m tether`: it must be the same installation the tests
    import (the checkout's in an editable install, the wheel's in CI's wheel pass)."""
    import subprocess
    import sys

    import tether

    spawned = subprocess.run(
        [sys.executable, "-c", "import tether; print(tether.__file__)"],
        env=daemon_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert spawned.returncode == 0, spawned.stderr
    assert Path(spawned.stdout.strip()).resolve() == Path(tether.__file__).resolve()


def test_the_dependency_installer_covers_the_sandbox_and_chromium():
    """CI installs bubblewrap (the command sandbox) the way it installs Chromium."""
    readme = (REPO / "README.md").read_text()
    assert "sh tests/install-deps && " in readme
    script = (REPO / "tests" / "install-deps").read_text()
    assert "bubblewrap" in script and "command -v bwrap" in script and "chromium" in script


def test_tether_demo_runs_from_a_built_wheel(tmp_path: Path) -> None:
    """Users install a wheel, not the checkout: the demo's script and workspace ship in
    the package, and the demo finds them there (no examples/ beside the installation)."""
    import subprocess
    import sys
    import zipfile

    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("tether-*.whl")
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(unpacked)
    assert {"tether_cli/_examples/demo.json", "tether_cli/_examples/demo-workspace/README.md"} <= names
    assert "tether/sandbox/landlock_launch.py" in names  # the Landlock launcher runs from the package
    # every file git tracks in the five packages ships (CI's wheel pass runs only the tests
    # that spawn or install things: this is what stands for the rest of the suite there)
    assert not set(_tracked_package_files()) - names, "files of the checkout missing from the wheel"
    assert "tether_protocol/schema.json" in names
    assert any(n.endswith(".data/scripts/tether") for n in names)  # the `tether` command
    # the wheel's own tether (not this checkout's), with the test environment's dependencies
    code = "import tether_cli; print(tether_cli.examples_dir())"
    found = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(unpacked)!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert found.stdout.strip() == str(unpacked / "tether_cli" / "_examples"), found.stderr


def _tracked_package_files() -> list[str]:
    """The packages' files as a wheel names them (`tether/...`, not `daemon/tether/...`)."""
    import subprocess

    roots = (
        "daemon/tether",
        "protocol/tether_protocol",
        "clients/tether_client",
        "clients/tether_chat",
        "cli/tether_cli",
    )
    listed = subprocess.run(["git", "ls-files", *roots], cwd=REPO, capture_output=True, text=True, check=True)
    files = listed.stdout.split()
    assert len(files) > 200, listed.stderr  # a checkout (CI clones one), not an export
    return [f.split("/", 1)[1] for f in files]
