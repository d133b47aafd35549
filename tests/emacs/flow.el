;;; flow.el --- drives goose-ls.el in Emacs batch mode; writes what it saw as JSON  -*- lexical-binding: t; -*-
(require 'json)
(require 'goose-ls)

(defvar flow--result nil)
(defvar flow--ended nil)

(defun flow--finish ()
  (with-temp-file (getenv "GOOSE_OUT")
    (insert (json-encode flow--result)))
  (kill-emacs 0))

(defun flow--wait (predicate what)
  (let ((deadline (+ (float-time) 60)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate) (error "gave up waiting for %s" what))))

(condition-case err
    (progn
      (setq goose-ls-command (append (json-parse-string (getenv "GOOSE_CMD")) nil))
      (setq goose-ls-initialization-options
            (json-parse-string (getenv "GOOSE_INIT") :object-type 'plist))
      (setq goose-ls-modes '(python-mode))
      (goose-ls-setup)
      ;; The permission prompt: the package's own, with the user picking the allow-once
      ;; option by the words shown for it.
      (setq goose-ls-permission-function
            (lambda (request)
              (let* ((options (append (plist-get request :options) nil))
                     (once (seq-find (lambda (o) (equal (plist-get o :kind) "allow_once")) options)))
                (push (cons 'asked (plist-get (plist-get request :toolCall) :title)) flow--result)
                (push (cons 'sent (vconcat (mapcar (lambda (o) (plist-get o :label)) options)))
                      flow--result)
                (cl-letf (((symbol-function 'completing-read)
                           (lambda (_prompt collection &rest _)
                             (push (cons 'choices (vconcat (all-completions "" collection)))
                                   flow--result)
                             (plist-get once :label))))
                  (goose-ls-ask-permission request)))))
      (add-hook 'goose-ls-turn-end-hook (lambda (params) (setq flow--ended params)))
      (find-file (getenv "GOOSE_FILE"))
      (python-mode)
      (apply #'eglot (eglot--guess-contact))
      (flow--wait (lambda () (eglot-current-server)) "eglot to connect")
      (push (cons 'eglot (eglot--server-info (eglot-current-server))) flow--result)
      (push (cons 'emacs emacs-major-version) flow--result)
      (goose-ls-ask "What does this do?" (point-min) (point-max))
      (flow--wait (lambda () flow--ended) "the turn to end")
      (push (cons 'stop (or (plist-get flow--ended :stopReason) (plist-get flow--ended :error)))
            flow--result)
      (with-current-buffer (goose-ls--chat goose-ls-current-session)
        (push (cons 'text (buffer-substring-no-properties (point-min) (point-max))) flow--result)
        ;; Each tool call's output: hidden at first, shown by TAB on its status line.
        (let (folds)
          (goto-char (point-min))
          (while (re-search-forward "^🔧 .*$" nil t)
            (let ((header (match-string-no-properties 0))
                  (output (1+ (match-end 0))))
              (when (< output (point-max))
                (let ((before (if (invisible-p output) t :json-false)))
                  (funcall (lookup-key (get-text-property (match-beginning 0) 'keymap) (kbd "TAB")))
                  (push (vector header before (if (invisible-p output) t :json-false)) folds)))))
          (push (cons 'folds (vconcat (nreverse folds))) flow--result))))
  (error
   (push (cons 'error (error-message-string err)) flow--result)
   ;; What was seen so far, to tell a hang from a slow run.
   (ignore-errors
     (with-current-buffer (goose-ls--chat goose-ls-current-session)
       (push (cons 'chat (buffer-string)) flow--result)))
   (ignore-errors
     (with-current-buffer (jsonrpc-events-buffer (eglot-current-server))
       (push (cons 'events (buffer-substring-no-properties
                            (max (point-min) (- (point-max) 6000)) (point-max)))
             flow--result)))))
(flow--finish)
