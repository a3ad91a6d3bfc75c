"""`python -m tether`: the `tether` command line (`tether_cli`), the same for every command.

The one module of the daemon that imports the CLI: it is run as a program, never imported
by the daemon (the import contracts allow this one edge).
"""

from tether_cli import main

raise SystemExit(main())
