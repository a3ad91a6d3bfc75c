"""What confining a stdio MCP server costs at its start: start-up to a listed tool set.

    python bench/mcp_start.py [--runs 10]

Side by side in one run, the real server-everything (node, from .cache; see
tests/mcp/install-server-everything) started as `tether doctor` starts it: with the
sandbox off (the baseline: its own directory and minimal environment, no OS sandbox), in
bubblewrap and through the Landlock launcher. Medians and 90th percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "daemon"), str(REPO / "protocol")]

import anyio

from tether.config.mcp_servers import McpServerConfig
from tether.mcp.launch import LaunchSettings
from tether.mcp.probe import probe

EVERYTHING = next(
    (REPO / ".cache").glob("server-everything-*/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
)


def start_ms(setting: str) -> float:
    config = McpServerConfig(
        "everything", "stdio", "bench", command="node", args=(str(EVERYTHING), "stdio"), workspace=str(REPO)
    )
    t0 = time.perf_counter()
    (row,) = anyio.run(probe, (config,), LaunchSettings(sandbox=setting))
    took = (time.perf_counter() - t0) * 1000
    if not row["started"]:
        raise SystemExit(f"{setting}: {row.get('error')}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    settings = ("off", "bwrap", "landlock")
    samples: dict[str, list[float]] = {s: [] for s in settings}
    for _ in range(runs):  # interleaved, so a busy moment hits all three alike
        for setting in settings:
            samples[setting].append(start_ms(setting))
    for setting in settings:
        ms = sorted(samples[setting])
        p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
        print(f"{setting:9} start to tools listed: median {statistics.median(ms):6.1f} ms, p90 {p90:6.1f} ms")


if __name__ == "__main__":
    main()
