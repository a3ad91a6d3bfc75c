"""`python -m tether`: the `tether` command line (`tether_cli`), the same for every command.

Owns: the daemon's one import of the CLI (run as a program; the import contracts allow
this one edge). Must not: be imported by the daemon, or do anything but call `main`.
"""

from tether_cli import main

raise SystemExit(main())
