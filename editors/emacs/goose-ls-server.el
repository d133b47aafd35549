;;; goose-ls-server.el --- The goose-ls server of a buffer, found or started with eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el, the base the other parts stand on.  It finds the goose-ls that
;; serves a buffer (its chat's, eglot's, its project's), starts one with eglot for the
;; project when there is none, and sends it requests.  The customization group and the
;; options that say how goose-ls is started live here with it.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'eglot)
(require 'jsonrpc)

(defgroup goose-ls nil
  "Chat with the goose agent through the goose-ls language server."
  :group 'tools
  :prefix "goose-ls-")

(defcustom goose-ls-command '("goose-ls")
  "The command that starts goose-ls, as a list of strings."
  :type '(repeat string))

(defcustom goose-ls-modes '(markdown-mode text-mode)
  "Major modes whose buffers use goose-ls as their eglot server."
  :type '(repeat symbol))

(defcustom goose-ls-initialization-options nil
  "goose-ls settings sent as initializationOptions.
A plist; docs/configuration.md lists the settings."
  :type 'plist)

;; Settings have a provenance (docs/configuration.md, "Who may set what").  eglot
;; answers workspace/configuration from `eglot-workspace-configuration' as a
;; project's .dir-locals.el sets it (eglot marks it safe: no question asked), with
;; or without a scopeUri, and pushes the same at connect.  For goose-ls, the answer
;; without a scopeUri is the user's own value alone and the push carries nothing (so
;; goose-ls asks); what a folder sets stays in the answers with a scopeUri, which
;; goose-ls screens.

(defun goose-ls--user-configuration (server section)
  "SECTION of the user's own `eglot-workspace-configuration' for SERVER.
Its global value, never a directory-local one."
  (let ((conf (default-value 'eglot-workspace-configuration)))
    (when (functionp conf)
      (setq conf (with-temp-buffer
                   (setq default-directory (project-root (eglot--project server)))
                   (funcall conf server))))
    (if (consp (car-safe conf))
        (cdr (seq-find (lambda (pair) (equal (string-remove-prefix ":" (format "%s" (car pair)))
                                             section))
                       conf))
      (cl-loop for (key value) on conf by #'cddr
               when (equal (string-remove-prefix ":" (format "%s" key)) section)
               return value))))

(cl-defmethod eglot-handle-request :around
  (server (_method (eql workspace/configuration)) &key items)
  "For goose-ls, answer each item without a scopeUri from the user's own settings."
  (let ((answers (cl-call-next-method)))
    (when (goose-ls--goose-p server)
      (dotimes (i (length items))
        (let ((item (elt items i)))
          (unless (plist-get item :scopeUri)
            (aset answers i (goose-ls--user-configuration server (plist-get item :section)))))))
    answers))

(defun goose-ls--no-pushed-configuration (signal server &rest args)
  "Tell goose-ls that its settings changed, not what they are: it asks.
SIGNAL, SERVER and ARGS are `eglot-signal-didChangeConfiguration's."
  (if (goose-ls--goose-p server)
      (jsonrpc-notify server :workspace/didChangeConfiguration (list :settings eglot--{}))
    (apply signal server args)))

(advice-add 'eglot-signal-didChangeConfiguration :around #'goose-ls--no-pushed-configuration)

(defvar-local goose-ls--chat-server nil
  "The goose-ls server of this chat or compose buffer.")

(defun goose-ls--goose-p (server)
  "Whether SERVER is a running goose-ls."
  (and server (jsonrpc-running-p server)
       (equal (plist-get (eglot--server-info server) :name) "goose-ls")))

(defun goose-ls--project ()
  (if (fboundp 'eglot--current-project)
      (eglot--current-project)
    (or (project-current) `(transient . ,default-directory))))

(defun goose-ls--project-server (project)
  (seq-find #'goose-ls--goose-p (gethash project eglot--servers-by-project)))

(defun goose-ls--wait (predicate seconds what)
  "Wait up to SECONDS for PREDICATE to return non-nil; return its value.
Fail saying WHAT when it does not."
  (let ((deadline (+ (float-time) seconds))
        value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (error "goose-ls: %s" what))))

(defun goose-ls--initialization-options ()
  "`goose-ls-initialization-options', and the flag that asks for goose/update."
  (append (list :gooseUpdates t) goose-ls-initialization-options))

(defun goose-ls--start (project)
  "Start goose-ls with eglot for PROJECT and return it once it has answered."
  (let ((program (car goose-ls-command)))
    (unless (and program (executable-find program))
      (user-error "goose-ls: `%s' is not on PATH; install goose-ls (see docs/editors/emacs.md) or set `goose-ls-command'"
                  program)))
  (let ((modes goose-ls-modes)
        (ids (mapcar (lambda (mode) (string-remove-suffix "-mode" (symbol-name mode))) goose-ls-modes))
        (contact `(,@goose-ls-command :initializationOptions ,(goose-ls--initialization-options))))
    (message "goose-ls: starting it for %s" (project-root project))
    ;; From a buffer without a server: `eglot' shuts down the current buffer's own.
    (with-temp-buffer
      (setq default-directory (project-root project))
      ;; eglot 1.9 takes one language id, later ones a list, one per mode.
      (if (memq 'language-ids (help-function-arglist #'eglot t))
          (eglot modes project 'eglot-lsp-server contact ids)
        (eglot modes project 'eglot-lsp-server contact (car ids))))
    (goose-ls--wait (lambda () (goose-ls--project-server project))
                    (if (boundp 'eglot-connect-timeout) eglot-connect-timeout 30)
                    "goose-ls did not start; see M-x eglot-events-buffer")))

(defun goose-ls--server ()
  "The goose-ls server for this buffer.
Its chat's, eglot's, the project's, or else a new one for the project."
  (or (and (goose-ls--goose-p goose-ls--chat-server) goose-ls--chat-server)
      (let ((current (eglot-current-server))) (and (goose-ls--goose-p current) current))
      (let ((project (goose-ls--project)))
        (or (goose-ls--project-server project) (goose-ls--start project)))))

(defconst goose-ls--request-timeout 360
  "Seconds to wait for goose-ls's answer to a request.
Longer than goose-ls's own wait for the agent (`agent.sessionTimeout', 330 s):
a first chat waits for the agent to start (Claude Code took 13 s cold), and
goose-ls answers with an error of its own when the agent does not.")

(defun goose-ls--request (method params &optional server)
  "Send METHOD with PARAMS to SERVER (default: this buffer's); return its result.
Not `jsonrpc-request': in Emacs 28 (jsonrpc 1.0.14) it returns by a `throw'
out of the process filter, and messages that came in the same read (the
reply's first notifications) wait unread until more output arrives, which
in a turn waiting for a permission answer is never."
  (let ((outcome nil))
    (jsonrpc-async-request (or server (goose-ls--server)) method params
                           :success-fn (lambda (result) (setq outcome (list :result result)))
                           :error-fn (lambda (error) (setq outcome (list :error error)))
                           :timeout goose-ls--request-timeout
                           :timeout-fn (lambda () (setq outcome (list :error '(:message "timed out")))))
    (while (not outcome)
      (accept-process-output nil 0.05))
    (if (plist-member outcome :error)
        (let* ((error (plist-get outcome :error))
               (text (format "%s" (or (plist-get error :message) error)))
               (name (string-remove-prefix ":" (format "%s" method))))
          ;; goose-ls's messages often name the method already: said once, without
          ;; the keyword's colon.
          (error "goose-ls: %s" (if (string-prefix-p (concat name ": ") text)
                                    text
                                  (format "%s: %s" name text))))
      (plist-get outcome :result))))

;; Pickers list their choices in goose-ls's order (the agent's, the form's), not sorted.
(defun goose-ls--in-order (choices &optional group)
  "A completion table of CHOICES (strings or an alist) kept in their order.
GROUP, a `group-function', heads the groups in Emacs 28 and later."
  (lambda (string predicate action)
    (if (eq action 'metadata)
        `(metadata (display-sort-function . identity)
                   (cycle-sort-function . identity)
                   ,@(and group `((group-function . ,group))))
      (complete-with-action action choices string predicate))))

(provide 'goose-ls-server)
;;; goose-ls-server.el ends here
