"""ACP v1's wire types, generated per area from the vendored upstream schema.

Owns: nothing itself: `modes`, `sessions`, ... are written by protocol/tools/gen_acp.py from
protocol/upstream/acp-v1/schema.json and protocol/tools/acp_v1_table.py, never by hand.
Must not: import an area (each is imported where it is used, to keep the start path short).
"""
