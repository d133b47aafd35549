from goose_ls.cli import main

raise SystemExit(main())
