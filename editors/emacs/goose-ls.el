;;; goose-ls.el --- Chat with the goose agent through goose-ls and eglot  -*- lexical-binding: t; -*-

;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience
;; URL: https://github.com/aaif-goose/goose

;;; Commentary:

;; goose-ls is a language server that runs the goose agent (or another ACP agent).
;; This package registers it with eglot and renders its goose/* notifications in a
;; chat buffer per session, with a compose buffer under it to write in.
;;
;; Keys: turn on `goose-ls-mode' for the prefix `goose-ls-keymap-prefix' (C-c g):
;; C-c g a asks about the region, C-c g c opens the compose buffer (C-c C-c there
;; sends), C-c g j sends a queued message into the running turn, C-c g k cancels,
;; C-c g l lists the sessions, C-c g f finds a phrase in past chats, C-c g e exports
;; a chat as markdown, C-c g p answers a pending permission, C-c g i signs in to the
;; agent, C-c g r restarts it (C-u: its shared goose serve too), C-c g A attaches an
;; image file to the next message (C-c C-a in the compose buffer).  Any command starts
;; goose-ls for the project when it does not run yet.  The agent's questions (forms)
;; are asked in the minibuffer; its terminal sign-in runs in a terminal buffer.
;;
;; eglot runs one server per buffer: a buffer that uses goose-ls does not also get
;; pyright or clangd.  Either list in `goose-ls-modes' only the modes you chat about
;; without another server (markdown and text modes, say), or keep a second buffer of
;; the file in such a mode, or use the code actions of goose-ls, which work in any
;; editor, from a buffer where goose-ls is the server.
;;
;; On Emacs 29 (eglot 1.12), set `eglot-confirm-server-initiated-edits' to nil, or
;; eglot asks before every streamed edit of a transcript.
;;
;; The package is this file and the parts it loads from the same directory:
;;   goose-ls-server.el         the server of a buffer: found, started with eglot, asked
;;   goose-ls-chat.el           the chat buffer: its mode, keys, state and blocks
;;   goose-ls-markdown.el       the chat's markdown, fontified without markdown-mode
;;   goose-ls-status.el         what a chat is doing, for the mode line
;;   goose-ls-notifications.el  goose/update, goose/turnEnd, goose/agentStatus
;;   goose-ls-tools.el          tool calls: a status line each, output folded
;;   goose-ls-permissions.el    permission requests: the diff, the question, the decision
;;   goose-ls-forms.el          the agent's questions, asked in the minibuffer
;;   goose-ls-plans.el          plans and compactions, drawn in place
;;   goose-ls-subagents.el      the agent's subagents: a block each, that TAB folds
;;   goose-ls-sign-in.el        the agent's terminal sign-in
;;   goose-ls-sessions.el       sessions, and the messages sent to them
;;   goose-ls-fork.el           a chat forked at a turn (C-c C-f in a chat)
;;   goose-ls-history.el        past chats: searched, exported
;;   goose-ls-compose.el        the compose buffer
;;   goose-ls-options.el        the chat's config options
;;   goose-ls-disk.el           open files the agent changes on disk: followed, no questions
;; Each part requires those below it; a call up or across (a chat's key to a compose
;; command, say) is a `declare-function', and this file loads them all.

;;; Code:

(require 'goose-ls-server)
(require 'goose-ls-chat)
(require 'goose-ls-status)
(require 'goose-ls-notifications)
(require 'goose-ls-permissions)
(require 'goose-ls-sign-in)
(require 'goose-ls-sessions)
(require 'goose-ls-history)
(require 'goose-ls-compose)
(require 'goose-ls-options)
(require 'goose-ls-disk)

;;;; Keys

(defvar goose-ls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'goose-ls-ask)
    (define-key map "c" #'goose-ls-compose)
    (define-key map "s" #'goose-ls-send)
    (define-key map "k" #'goose-ls-cancel)
    (define-key map "j" #'goose-ls-send-now)
    (define-key map "l" #'goose-ls-sessions)
    (define-key map "f" #'goose-ls-search)
    (define-key map "e" #'goose-ls-export)
    (define-key map "n" #'goose-ls-new-chat)
    (define-key map "o" #'goose-ls-show-chat)
    (define-key map "p" #'goose-ls-answer-permission)
    (define-key map "m" #'goose-ls-set-option)
    (define-key map "i" #'goose-ls-sign-in)
    (define-key map "r" #'goose-ls-restart)
    (define-key map "A" #'goose-ls-attach-image)
    map)
  "The goose-ls commands, under `goose-ls-keymap-prefix' in `goose-ls-mode'.
Bind it under a key of your own with
  (global-set-key (kbd \"C-c a\") \\='goose-ls-command-map)")
(fset 'goose-ls-command-map goose-ls-command-map)

(defvar goose-ls-mode-map (make-sparse-keymap)
  "Keys of `goose-ls-mode': `goose-ls-command-map' under `goose-ls-keymap-prefix'.")

(defcustom goose-ls-keymap-prefix "C-c g"
  "The key under which `goose-ls-mode' puts `goose-ls-command-map'.
Set it with `customize' or `setopt' so that the key map follows."
  :type 'string
  :set (lambda (symbol value)
         (when (and (boundp symbol) (symbol-value symbol))
           (define-key goose-ls-mode-map (kbd (symbol-value symbol)) nil))
         (when value
           (define-key goose-ls-mode-map (kbd value) 'goose-ls-command-map))
         (set-default symbol value))
  :group 'goose-ls)

;;;###autoload
(define-minor-mode goose-ls-mode
  "Global keys for goose-ls: `goose-ls-command-map' under `goose-ls-keymap-prefix'.
\\{goose-ls-command-map}"
  :global t
  :group 'goose-ls
  :lighter (:eval (goose-ls--lighter))
  :keymap goose-ls-mode-map)

;;;###autoload
(defun goose-ls-setup ()
  "Register goose-ls with eglot for `goose-ls-modes'."
  (add-to-list 'eglot-server-programs
               `(,goose-ls-modes . (,@goose-ls-command
                                    :initializationOptions ,(goose-ls--initialization-options)))))

(provide 'goose-ls)
;;; goose-ls.el ends here
