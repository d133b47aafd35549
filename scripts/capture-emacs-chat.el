;;; capture-emacs-chat.el --- used by capture-emacs-chat.sh in a real terminal  -*- lexical-binding: t; -*-
;; Ask about the two lines of app.py and show the chat beside it; when the turn has
;; ended, unfold one tool call and touch $GOOSE_DONE.
(require 'goose-ls)
(setq inhibit-startup-screen t
      split-width-threshold 100
      goose-ls-command (append (json-parse-string (getenv "GOOSE_CMD")) nil)
      goose-ls-initialization-options (json-parse-string (getenv "GOOSE_INIT") :object-type 'plist)
      goose-ls-modes '(python-mode))
(goose-ls-setup)
(defun capture--done ()
  "Show the output of the shell call (TAB on its line), then let the script capture."
  (with-current-buffer (goose-ls--chat goose-ls-current-session)
    (goto-char (point-min))
    (when (search-forward "🔧 shell" nil t)
      (goose-ls-toggle-tool)))
  (redisplay)
  (with-temp-file (getenv "GOOSE_DONE")))
(add-hook 'goose-ls-turn-end-hook (lambda (_params) (run-at-time 0.3 nil #'capture--done)))
(defun capture--ask-when-connected ()
  "Ask once eglot has connected app.py to goose-ls (it connects in the background)."
  (with-current-buffer "app.py"
    (if (eglot-current-server)
        (goose-ls-ask "What does this function do?" (point-min) (point-max))
      (run-at-time 0.1 nil #'capture--ask-when-connected))))
(add-hook 'emacs-startup-hook
          (lambda ()
            (find-file "app.py")
            (apply #'eglot (eglot--guess-contact))
            (capture--ask-when-connected)))
