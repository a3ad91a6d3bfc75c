from tether.cli import main

raise SystemExit(main())
