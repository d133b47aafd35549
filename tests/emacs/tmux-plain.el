;;; tmux-plain.el --- eglot alone, as docs/configuration.md's Emacs example  -*- lexical-binding: t; -*-
;;
;; No goose-ls.el: goose-ls is registered with eglot for python-mode, its command and
;; options from the test (GOOSE_CMD, GOOSE_INIT), every eglot setting left as it ships.
(require 'json)
(require 'eglot)
(add-to-list 'eglot-server-programs
             `((python-mode python-ts-mode)
               . (,@(append (json-parse-string (getenv "GOOSE_CMD")) nil)
                  :initializationOptions
                  ,(json-parse-string (getenv "GOOSE_INIT") :object-type 'plist))))
;; A screen that reads the same on every machine: no menu bar, no startup screen.
(menu-bar-mode -1)
(setq inhibit-startup-screen t)
