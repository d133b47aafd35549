;;; tmux-init.el --- the init file of the Emacs that tests/test_emacs.py runs in tmux  -*- lexical-binding: t; -*-
;;
;; What docs/editors/emacs.md tells a user to put in an init file, with goose-ls's
;; command and options from the test (GOOSE_CMD, GOOSE_INIT) and a plain screen.
(require 'json)
(require 'goose-ls)
(setq goose-ls-command (append (json-parse-string (getenv "GOOSE_CMD")) nil))
(setq goose-ls-modes '(markdown-mode text-mode python-mode))
(setq goose-ls-initialization-options
      (json-parse-string (getenv "GOOSE_INIT") :object-type 'plist))
(goose-ls-setup)
(goose-ls-mode 1)
(setq eglot-confirm-server-initiated-edits nil)
;; A screen that reads the same on every machine: no menu bar, no startup screen.
(menu-bar-mode -1)
(setq inhibit-startup-screen t)
