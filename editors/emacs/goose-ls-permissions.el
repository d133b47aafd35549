;;; goose-ls-permissions.el --- The agent's permission requests, shown and answered  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  When the agent asks before running a tool, the chat shows the
;; request, and for an edit its unified diff (computed by `diff', coloured by
;; `diff-mode'), before the question; the minibuffer then asks with every choice named
;; and listed at once (or `goose-ls-permission-function' does), and the decision is
;; written into the chat.  A request left unanswered waits until
;; `goose-ls-answer-permission' asks again.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'diff)
(require 'diff-mode)
(require 'goose-ls-chat)
(require 'goose-ls-inert)

(defcustom goose-ls-permission-function #'goose-ls-ask-permission
  "Function called with a permission request plist.
It returns the chosen optionId, or nil to leave the request unanswered
\(\\[goose-ls-answer-permission] asks again)."
  :type 'function
  :group 'goose-ls)

(defface goose-ls-permission '((t :inherit warning))
  "Permission requests and decisions in a chat."
  :group 'goose-ls)

(defun goose-ls--diff (path old new)
  "The unified diff of PATH from OLD to NEW, with diff-mode's faces.
Three lines of context, as diff -u."
  (let ((before (generate-new-buffer " *goose-ls before*"))
        (after (generate-new-buffer " *goose-ls after*"))
        (out (generate-new-buffer " *goose-ls diff*"))
        (name (file-relative-name path)))
    (unwind-protect
        (progn
          (with-current-buffer before (insert (or old "")))
          (with-current-buffer after (insert (or new "")))
          (let ((inhibit-message t))
            (diff-no-select before after "-U3" t out))
          (with-current-buffer out
            (setq buffer-read-only nil)
            ;; diff.el's own lines (the command, "Diff finished") and its temporary
            ;; files' names go; the file's name comes instead.
            (goto-char (point-min))
            (let ((hunks (and (re-search-forward "^@@" nil t) (match-beginning 0)))
                  (end (progn (goto-char (point-max))
                              (if (re-search-backward "^\nDiff finished" nil t) (1+ (point)) (point-max)))))
              (if (not hunks)
                  (concat "(no change to " name ")\n")
                (let ((text (concat (format "--- a/%s\n+++ b/%s\n" name name)
                                    (buffer-substring-no-properties hunks end))))
                  (erase-buffer)
                  (insert text)
                  (delay-mode-hooks (diff-mode))
                  (font-lock-ensure)
                  ;; `face' is font-lock's in the chat: keep diff-mode's as `font-lock-face'.
                  (let ((pos (point-min)))
                    (while (< pos (point-max))
                      (let ((next (next-single-property-change pos 'face nil (point-max))))
                        (put-text-property pos next 'font-lock-face (get-text-property pos 'face))
                        (setq pos next))))
                  (remove-list-of-text-properties (point-min) (point-max) '(face))
                  (buffer-string))))))
      (mapc #'kill-buffer (list before after out)))))

(defun goose-ls--diffs (tool-call)
  "The diffs of TOOL-CALL's content items of type diff, one string."
  (mapconcat (lambda (item)
               (goose-ls--diff (plist-get item :path) (plist-get item :oldText)
                               (plist-get item :newText)))
             (seq-filter (lambda (item) (equal (plist-get item :type) "diff"))
                         (append (plist-get tool-call :content) nil))
             ""))

(defun goose-ls--choices (request)
  "REQUEST's options as (label . optionId), in their order."
  (mapcar (lambda (o) (cons (plist-get o :label) (plist-get o :optionId)))
          (plist-get request :options)))

(defun goose-ls--show-choices ()
  "List the choices at once under the minibuffer (the default completion UI)."
  (when (eq completing-read-function #'completing-read-default)
    (minibuffer-completion-help)))

(defun goose-ls-ask-permission (request)
  "Ask in the minibuffer which option of REQUEST to choose; return its optionId.
The prompt names every choice, as goose-ls labels it, and the default
completion UI lists them at once; nil when none was chosen."
  (let* ((choices (goose-ls--choices request))
         (labels (mapcar #'car choices))
         (title (goose-ls-inert-line (plist-get (plist-get request :toolCall) :title)))
         (answer (minibuffer-with-setup-hook #'goose-ls--show-choices
                   (completing-read (format "%s is waiting for your approval: %s (it calls this “%s”) (%s): "
                                            goose-ls--agent-name
                                            (goose-ls-inert-line (or (plist-get request :action) title))
                                            title (goose-ls-inert-line (string-join labels " / ")))
                                    (goose-ls--in-order labels) nil t))))
    (cdr (assoc answer choices))))

(defun goose-ls--decision (request option-id)
  "Words for OPTION-ID chosen in REQUEST: \"allowed once\", \"rejected\"..."
  (let* ((option (seq-find (lambda (o) (equal (plist-get o :optionId) option-id))
                           (plist-get request :options)))
         (label (plist-get option :label))
         (kind (plist-get option :kind))
         (words (pcase kind
                  ("allow_once" "allowed once") ("allow_always" "allowed always")
                  ("reject_once" "rejected") ("reject_always" "rejected always")
                  (_ (or label option-id)))))
    (if (or (null label) (member label '("Allow once" "Allow always" "Reject" "Reject always")))
        words
      (goose-ls-inert-line (format "%s (%s)" words label)))))

(defun goose-ls--permission (session request server replay)
  "Show REQUEST in SESSION's chat with its diff, then ask (unless REPLAY)."
  (let ((tool-call (plist-get request :toolCall)))
    (with-current-buffer (goose-ls--chat session server)
      (puthash (plist-get request :requestId) request goose-ls--permissions))
    (goose-ls--separate session 'permission)
    (goose-ls--append session
                      (format "🔐 permission: %s (it calls this “%s”)\n"
                              (goose-ls-inert-line (or (plist-get request :action)
                                                       (plist-get tool-call :title)))
                              (goose-ls-inert-line (plist-get tool-call :title)))
                      'font-lock-face 'goose-ls-permission 'goose-ls-verbatim t)
    (when-let ((warning (plist-get request :warning)))
      (goose-ls--append session (format "⚠ %s\n" (goose-ls-inert-line warning))
                        'font-lock-face 'error 'goose-ls-verbatim t))
    (let ((diffs (goose-ls--diffs tool-call)))
      (unless (string-empty-p diffs)
        (goose-ls--append session diffs 'goose-ls-verbatim t)))
    (force-mode-line-update t)
    ;; Asked from a timer: not inside eglot's process filter.  History (a replay)
    ;; holds its answer, which comes after it: asked only if still open then.
    (unless replay
      (run-at-time 0 nil #'goose-ls--ask session (plist-get request :requestId)))))

(defun goose-ls--pending (session request-id)
  (let ((chat (car (gethash session goose-ls--chats))))
    (and (buffer-live-p chat)
         (gethash request-id (buffer-local-value 'goose-ls--permissions chat)))))

(defun goose-ls--ask (session request-id)
  "Ask the user to answer REQUEST-ID of SESSION, if it still waits.
Then send the answer."
  (when-let ((request (goose-ls--pending session request-id)))
    (let ((option (condition-case nil
                      (funcall goose-ls-permission-function request)
                    (quit nil))))
      (cond ((not (goose-ls--pending session request-id))
             (message "goose-ls: that permission was already answered"))
            (option
             (goose-ls--request :goose/permission (list :requestId request-id :optionId option)
                                (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session))))
            (t
             (message "goose-ls: the permission waits; %s answers it"
                      (substitute-command-keys "\\[goose-ls-answer-permission]")))))))

(defun goose-ls--resolved (session update)
  "Write the decision of UPDATE, a permission_resolved, into SESSION's chat."
  (with-current-buffer (goose-ls--chat session)
    (let* ((request-id (plist-get update :requestId))
           (request (gethash request-id goose-ls--permissions))
           (title (goose-ls-inert-line
                   (or (plist-get (plist-get request :toolCall) :title) "the tool"))))
      (remhash request-id goose-ls--permissions)
      (goose-ls--separate session 'permission)
      (goose-ls--append session
                        (if (equal (plist-get update :outcome) "selected")
                            (format "🔐 %s: %s\n" title
                                    (if request
                                        (goose-ls--decision request (plist-get update :optionId))
                                      (goose-ls-inert-line (plist-get update :label))))
                          (format "🔐 %s: cancelled, not answered\n" title))
                        'font-lock-face 'goose-ls-permission 'goose-ls-verbatim t)
      (force-mode-line-update t))))

(defun goose-ls-answer-permission ()
  "Answer a permission request of this chat (or any chat) that still waits."
  (interactive)
  (let* ((chats (cons (and goose-ls--session (car (gethash goose-ls--session goose-ls--chats)))
                      (mapcar #'car (hash-table-values goose-ls--chats))))
         (found nil))
    (dolist (chat chats)
      (when (and (not found) (buffer-live-p chat))
        (maphash (lambda (id _request)
                   (unless found
                     (setq found (cons (buffer-local-value 'goose-ls--session chat) id))))
                 (buffer-local-value 'goose-ls--permissions chat))))
    (if found
        (goose-ls--ask (car found) (cdr found))
      (message "goose-ls: no permission waits for an answer"))))

(provide 'goose-ls-permissions)
;;; goose-ls-permissions.el ends here
