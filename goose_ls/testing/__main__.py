from goose_ls.testing.agent import main

raise SystemExit(main())
