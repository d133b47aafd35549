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
;; sends), C-c g j sends a queued message into the running turn, C-c g k cancels, C-c g l lists the sessions, C-c g p answers a pending
;; permission, C-c g i signs in to the agent.  Any command starts goose-ls for the
;; project when it does not run yet.  The agent's questions (forms) are asked in the
;; minibuffer (goose-ls-forms.el); its terminal sign-in runs in a terminal buffer
;; (goose-ls-sign-in.el).
;;
;; eglot runs one server per buffer: a buffer that uses goose-ls does not also get
;; pyright or clangd.  Either list in `goose-ls-modes' only the modes you chat about
;; without another server (markdown and text modes, say), or keep a second buffer of
;; the file in such a mode, or use the code actions of goose-ls, which work in any
;; editor, from a buffer where goose-ls is the server.
;;
;; On Emacs 29 (eglot 1.12), set `eglot-confirm-server-initiated-edits' to nil, or
;; eglot asks before every streamed edit of a transcript.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'flymake)
(require 'subr-x)
(require 'diff)
(require 'diff-mode)
(require 'eglot)
(require 'jsonrpc)
(require 'url-util)
(require 'goose-ls-forms)
(require 'goose-ls-sign-in)
(require 'goose-ls-plans)

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

(defcustom goose-ls-permission-function #'goose-ls-ask-permission
  "Function called with a permission request plist.
It returns the chosen optionId, or nil to leave the request unanswered
\(\\[goose-ls-answer-permission] asks again)."
  :type 'function)

(defcustom goose-ls-compose-height 6
  "Height in lines of the compose window under a chat."
  :type 'integer)

(defvar goose-ls--chats (make-hash-table :test #'equal)
  "Session id -> (buffer . last index).")

(defvar goose-ls-current-session nil
  "The session of the chat that commands talk to outside chat buffers.")

(defvar goose-ls-turn-end-hook nil
  "Functions called with the goose/turnEnd params when a turn ends.")

(defvar goose-ls--agent-state nil
  "The agent's state from the last goose/agentStatus, or nil before any.")

;;;; Keys

(defvar goose-ls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'goose-ls-ask)
    (define-key map "c" #'goose-ls-compose)
    (define-key map "s" #'goose-ls-send)
    (define-key map "k" #'goose-ls-cancel)
    (define-key map "j" #'goose-ls-send-now)
    (define-key map "l" #'goose-ls-sessions)
    (define-key map "n" #'goose-ls-new-chat)
    (define-key map "o" #'goose-ls-show-chat)
    (define-key map "p" #'goose-ls-answer-permission)
    (define-key map "m" #'goose-ls-set-option)
    (define-key map "i" #'goose-ls-sign-in)
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
         (set-default symbol value)))

;;;###autoload
(define-minor-mode goose-ls-mode
  "Global keys for goose-ls: `goose-ls-command-map' under `goose-ls-keymap-prefix'.
\\{goose-ls-command-map}"
  :global t
  :lighter (:eval (goose-ls--lighter))
  :keymap goose-ls-mode-map)

;;;###autoload
(defun goose-ls-setup ()
  "Register goose-ls with eglot for `goose-ls-modes'."
  (add-to-list 'eglot-server-programs
               `(,goose-ls-modes . (,@goose-ls-command
                                    :initializationOptions ,(goose-ls--initialization-options)))))

;;;; The server

(defvar-local goose-ls--session nil
  "The session of this chat or compose buffer.")

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

;;;; The chat buffer

(defvar-local goose-ls--kind nil
  "The kind of the block that the end of this chat buffer continues.")

(defvar-local goose-ls--tools nil
  "toolCallId -> its `goose-ls--call' in this chat buffer.")

(defvar-local goose-ls--end nil
  "Where the stream goes: the end of the chat, before the list of queued messages.")

(defvar-local goose-ls--turns nil
  "messageIds of the turns accepted or running and not ended, oldest first.")

(defvar-local goose-ls--queued nil
  "(messageId . text) of the messages waiting for a running turn to end.")

(defvar-local goose-ls--started nil
  "messageId -> t for each turn that had an event: it is no longer waiting.")

(defvar-local goose-ls--joined nil
  "messageIds of queued messages sent into the running turn: they end with it.")

(defvar-local goose-ls--permissions nil
  "requestId -> the permission request, while it is not resolved.")

(defvar-local goose-ls--compose nil
  "The compose buffer of this chat.")

(defvar-local goose-ls--usage nil
  "The agent's last usage_update in this chat: how full its context is.")

(defvar-local goose-ls--commands nil
  "The agent's slash commands in this chat (its last available_commands_update).")

(defface goose-ls-heading '((t :inherit (bold font-lock-function-name-face)))
  "Headings (`## You', `## goose') in a chat.")

(defface goose-ls-code '((t :inherit font-lock-constant-face))
  "Code, fenced or in backquotes, in a chat.")

(defface goose-ls-quote '((t :inherit font-lock-comment-face))
  "Thoughts and notes (`> ' lines) in a chat.")

(defface goose-ls-permission '((t :inherit warning))
  "Permission requests and decisions in a chat.")

(defvar goose-ls-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map [remap self-insert-command] #'goose-ls-chat-type)
    (define-key map (kbd "C-c C-c") #'goose-ls-compose)
    (define-key map (kbd "C-c C-k") #'goose-ls-cancel)
    (define-key map (kbd "C-c C-j") #'goose-ls-send-now)
    (define-key map (kbd "C-c C-p") #'goose-ls-answer-permission)
    (define-key map (kbd "C-c C-l") #'goose-ls-sessions)
    map)
  "Keys of a chat buffer.  Typing there writes in its compose buffer.")

;; Markdown without markdown-mode (Debian's Emacs 28 has none): headings, fenced code
;; blocks, inline code and quotes.  Diffs and tool output keep faces of their own.

(defun goose-ls--fence-open-before (pos)
  "The start of the fenced block POS is in, or nil.
POS is in one when an odd number of fence lines start before it."
  (save-excursion
    (goto-char pos)
    (end-of-line)
    (let ((count 0) (open nil))
      (while (re-search-backward "^```" nil t)
        (when (and (< (point) pos) (not (get-text-property (point) 'goose-ls-verbatim)))
          (cl-incf count)
          (unless open (setq open (point)))))
      (and (cl-oddp count) open))))

(defun goose-ls--match-fence (limit)
  "Font-lock matcher of a fenced code block that starts before LIMIT."
  (let* ((from (point))
         (start (or (goose-ls--fence-open-before from)
                    (let (found)
                      (while (and (not found) (re-search-forward "^```" limit t))
                        (unless (get-text-property (match-beginning 0) 'goose-ls-verbatim)
                          (setq found (match-beginning 0))))
                      found))))
    (when start
      (goto-char start)
      (forward-line 1)
      (let ((end (if (re-search-forward "^```.*$" nil t) (match-end 0) (point-max))))
        (goto-char (max end from))
        ;; Always forward: font-lock calls a matcher until it returns nil.
        (when (> end from)
          (set-match-data (list start end))
          t)))))

(defun goose-ls--matcher (regexp)
  "A font-lock matcher of REGEXP outside diffs and tool output."
  (lambda (limit)
    (let (found)
      (while (and (not found) (re-search-forward regexp limit t))
        (unless (get-text-property (match-beginning 0) 'goose-ls-verbatim)
          (setq found t)))
      found)))

(defvar goose-ls--font-lock-keywords
  `((goose-ls--match-fence 0 'goose-ls-code t)
    (,(goose-ls--matcher "^#+ .*$") 0 'goose-ls-heading)
    (,(goose-ls--matcher "^> .*$") 0 'goose-ls-quote)
    (,(goose-ls--matcher "\\*\\*[^*\n]+\\*\\*") 0 'bold prepend)
    (,(goose-ls--matcher "`[^`\n]+`") 0 'goose-ls-code)))

(defun goose-ls--extend-to-fence ()
  "Refontify a fenced block from its start.
For `font-lock-extend-region-functions'."
  (defvar font-lock-beg)
  (let ((open (goose-ls--fence-open-before font-lock-beg)))
    (when (and open (< open font-lock-beg))
      (setq font-lock-beg open))))

(define-derived-mode goose-ls-chat-mode text-mode "goose chat"
  "A goose chat: the stream of a session, read-only.
Write in its compose buffer (\\[goose-ls-compose]; typing here goes there).
\\{goose-ls-chat-mode-map}"
  (setq buffer-read-only t)
  (setq-local font-lock-defaults '(goose-ls--font-lock-keywords t))
  (add-hook 'font-lock-extend-region-functions #'goose-ls--extend-to-fence nil t)
  (setq mode-line-process '(:eval (goose-ls--state-string)))
  (add-to-invisibility-spec '(goose-ls-tool . t))
  (visual-line-mode 1))

(defun goose-ls--chat (session-id &optional server)
  "The chat buffer of SESSION-ID (of SERVER), created if need be."
  (let ((entry (gethash session-id goose-ls--chats)))
    (if (and entry (buffer-live-p (car entry)))
        (car entry)
      (let ((buffer (get-buffer-create (format "*goose: %s*" session-id))))
        (with-current-buffer buffer
          (goose-ls-chat-mode)
          (setq goose-ls--session session-id
                goose-ls--chat-server server
                goose-ls--tools (make-hash-table :test #'equal)
                goose-ls--started (make-hash-table :test #'equal)
                goose-ls--permissions (make-hash-table :test #'equal))
          (let ((inhibit-read-only t))
            (insert (format "# goose chat · %s\n" session-id)))
          (setq goose-ls--end (copy-marker (point-max) t)))
        (puthash session-id (cons buffer 0) goose-ls--chats)
        buffer))))

(defmacro goose-ls--following (&rest body)
  "Change the chat buffer by BODY; a window (or point) at its end stays at the end.
Windows scrolled up, with their point elsewhere, are left where they are."
  (declare (indent 0) (debug t))
  (let ((windows (make-symbol "windows")) (at-end (make-symbol "at-end")))
    `(let ((,windows (seq-filter (lambda (window) (= (window-point window) (point-max)))
                                 (get-buffer-window-list nil nil t)))
           (,at-end (= (point) (point-max)))
           (inhibit-read-only t))
       (save-excursion ,@body)
       (when ,at-end (goto-char (point-max)))
       (dolist (window ,windows) (set-window-point window (point-max))))))

(defun goose-ls--follow (function)
  "Call FUNCTION to change the chat buffer, as `goose-ls--following' does."
  (goose-ls--following (funcall function)))

(defun goose-ls--append (session-id text &rest properties)
  "Add TEXT, with PROPERTIES, to the end of SESSION-ID's chat."
  (with-current-buffer (goose-ls--chat session-id)
    (goose-ls--following
      (goto-char goose-ls--end)
      (insert (if properties (apply #'propertize text properties) text)))))

(defun goose-ls--separate (session-id kind)
  "End the last block of SESSION-ID's chat with a blank line.
The block that follows is of KIND."
  (with-current-buffer (goose-ls--chat session-id)
    (setq goose-ls--kind kind)
    (goose-ls--following
      (goto-char goose-ls--end)
      (insert (make-string (- 2 (cond ((looking-back "\n\n" 2) 2) ((bolp) 1) (t 0))) ?\n)))))

(defun goose-ls--block (session-id kind heading)
  "Start a KIND block with HEADING in SESSION-ID's chat, unless the chat is in one."
  (unless (eq (buffer-local-value 'goose-ls--kind (goose-ls--chat session-id)) kind)
    (goose-ls--separate session-id kind)
    (goose-ls--append session-id heading)))

(defun goose-ls--new-index-p (session-id index)
  "Record INDEX for SESSION-ID; nil when it was already shown (a replay)."
  (goose-ls--chat session-id)
  (let ((entry (gethash session-id goose-ls--chats)))
    (when (> index (cdr entry))
      (setcdr entry index)
      t)))

(defun goose-ls--attachment (uri)
  "URI as the chat shows attached context: \"📎 app.py:8-12\".
The path is relative to the chat's project when inside it; the lines come from a
\"#L8-L12\" fragment."
  (let* ((first (and (string-match "#L\\([0-9]+\\)\\(?:-L\\([0-9]+\\)\\)?\\'" uri)
                     (match-string 1 uri)))
         (last (and first (match-string 2 uri)))
         (file (replace-regexp-in-string "#.*\\'" "" uri))
         (path (if (string-prefix-p "file://" file)
                   (decode-coding-string (url-unhex-string (substring file 7)) 'utf-8)
                 file))
         (root (file-name-as-directory (expand-file-name default-directory))))
    (concat "📎 "
            (if (string-prefix-p root path) (substring path (length root)) path)
            (cond ((null first) "")
                  ((and last (not (equal first last))) (format ":%s-%s" first last))
                  (t (format ":%s" first))))))

(defun goose-ls--text (content)
  (pcase (plist-get content :type)
    ("text" (plist-get content :text))
    ("resource_link" (format "[%s]" (or (plist-get content :name) (plist-get content :uri))))
    ("resource" (goose-ls--attachment (plist-get (plist-get content :resource) :uri)))
    (type (format "[%s]" type))))

;;;; Busy, idle and queued: the mode line and the end of the chat

(defun goose-ls--state-string (&optional buffer)
  "What the chat of BUFFER (default: this one's) is doing, for the mode line."
  (let ((chat (if buffer buffer
                (and goose-ls--session (car (gethash goose-ls--session goose-ls--chats))))))
    (if (not (buffer-live-p chat))
        ""
      (with-current-buffer chat
        (let ((queued (length goose-ls--queued)))
          (concat " "
                  (cond ((or (and goose-ls--permissions
                                  (> (hash-table-count goose-ls--permissions) 0))
                             (goose-ls--question-waiting-p goose-ls--session))
                         "waiting for you")
                        (goose-ls--turns "busy")
                        (t "idle"))
                  (if (> queued 0) (format " · %d queued" queued) "")
                  (goose-ls--usage-string)))))))

(defun goose-ls--tokens (n)
  "N tokens in a few characters: 950, 12k, 1.2M."
  (cond ((>= n 999500) (concat (string-remove-suffix ".0" (format "%.1f" (/ n 1e6))) "M"))
        ((>= n 1000) (format "%dk" (floor (+ n 500) 1000)))
        (t (format "%d" n))))

(defun goose-ls--usage-string ()
  "How full this chat's context is, \" · 12k/200k\"; empty until it has used some."
  (let ((used (plist-get goose-ls--usage :used))
        (size (plist-get goose-ls--usage :size)))
    (if (and (numberp used) (> used 0) (numberp size))
        (format " · %s/%s" (goose-ls--tokens used) (goose-ls--tokens size))
      "")))

(defun goose-ls--lighter ()
  (let ((chat (and goose-ls-current-session
                   (car (gethash goose-ls-current-session goose-ls--chats)))))
    (concat " goose"
            (if (member goose-ls--agent-state '(nil "running")) "" (format ":%s" goose-ls--agent-state))
            (if (buffer-live-p chat) (format "[%s]" (string-trim (goose-ls--state-string chat))) ""))))

(defun goose-ls--show-queue ()
  "Draw the queued messages after the end of the chat (this buffer)."
  (goose-ls--following
    (delete-region goose-ls--end (point-max))
    (goto-char goose-ls--end)
    (set-marker-insertion-type goose-ls--end nil)
    (when goose-ls--queued
      (insert (propertize
               (concat "\n"
                       (mapconcat (lambda (entry)
                                    (format "⏳ queued %d: %s"
                                            (1+ (seq-position goose-ls--queued entry))
                                            (truncate-string-to-width
                                             (replace-regexp-in-string "\n" " ⏎ " (cdr entry))
                                             72 nil nil "…")))
                                  goose-ls--queued "\n")
                       "\n")
               'font-lock-face 'shadow 'goose-ls-verbatim t)))
    (set-marker-insertion-type goose-ls--end t))
  (force-mode-line-update t))

(defun goose-ls--turn-seen (session-id message-id)
  "A turn of SESSION-ID with MESSAGE-ID is running: it is no longer queued.
A queued one whose events come while another turn runs was sent into that turn."
  (when message-id
    (with-current-buffer (goose-ls--chat session-id)
      (when (and (not (gethash message-id goose-ls--started))
                 (assoc message-id goose-ls--queued)
                 (seq-some (lambda (id) (gethash id goose-ls--started)) goose-ls--turns))
        (push message-id goose-ls--joined))
      (puthash message-id t goose-ls--started)
      (unless (member message-id goose-ls--turns)
        (setq goose-ls--turns (append goose-ls--turns (list message-id))))
      (when (assoc message-id goose-ls--queued)
        (setq goose-ls--queued (assoc-delete-all message-id goose-ls--queued))
        (goose-ls--show-queue))
      (force-mode-line-update t))))

;;;; Tool calls: one status line each, rewritten in place, output indented and folded

(defvar goose-ls-tool-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'goose-ls-toggle-tool)
    (define-key map (kbd "RET") #'goose-ls-toggle-tool)
    (define-key map [mouse-1] #'goose-ls-toggle-tool)
    map)
  "Keys on a tool call's status line.")

(cl-defstruct (goose-ls--call (:constructor goose-ls--call-create))
  "A tool call shown in a chat: a status line and its output under it."
  start end title name status output (folded t) overlay)

(defun goose-ls--content-text (content)
  "The text of the text items in CONTENT, a tool call's content list, or nil."
  (let ((texts (delq nil (mapcar (lambda (item)
                                   (let ((inner (plist-get item :content)))
                                     (and (equal (plist-get item :type) "content")
                                          (equal (plist-get inner :type) "text")
                                          (plist-get inner :text))))
                                 content))))
    (let ((text (string-trim-right (string-join texts "\n") "\n+")))
      (and (not (string-empty-p text)) text))))

(defun goose-ls--call-render (call)
  "Write CALL's status line and its indented output over the text it had."
  (let ((header (propertize (format "🔧 %s%s — %s" (goose-ls--call-title call)
                                    (let ((name (goose-ls--call-name call)))
                                      (if (and name (not (equal name (goose-ls--call-title call))))
                                          (format " · `%s`" name)
                                        ""))
                                    (goose-ls--call-status call))
                            'keymap goose-ls-tool-map 'mouse-face 'highlight
                            'help-echo "TAB: show or hide the output"))
        (output (goose-ls--call-output call)))
    (goto-char (goose-ls--call-start call))
    (delete-region (point) (goose-ls--call-end call))
    (insert header)
    (let ((eol (point)))
      (insert "\n")
      (dolist (line (and output (split-string output "\n")))
        (insert (propertize (concat "    " line "\n") 'goose-ls-verbatim t)))
      (set-marker (goose-ls--call-end call) (point))
      (when (goose-ls--call-overlay call) (delete-overlay (goose-ls--call-overlay call)))
      (setf (goose-ls--call-overlay call)
            (when output
              (let ((overlay (make-overlay eol (1- (point)))))
                (overlay-put overlay 'goose-ls-call call)
                (overlay-put overlay 'invisible (and (goose-ls--call-folded call) 'goose-ls-tool))
                overlay))))))

(defun goose-ls--tool (session-id update)
  "Show the tool call of UPDATE in SESSION-ID's chat.
UPDATE is a tool_call or a tool_call_update.  The first update of a
toolCallId adds its status line at the end of the chat; later ones
rewrite that line and the output under it where they are."
  (with-current-buffer (goose-ls--chat session-id)
    (let* ((id (plist-get update :toolCallId))
           (call (gethash id goose-ls--tools)))
      (unless call
        (goose-ls--separate session-id 'tool)
        (setq call (goose-ls--call-create :start (copy-marker goose-ls--end)
                                          :end (copy-marker goose-ls--end)
                                          :title id :status "pending"))
        (puthash id call goose-ls--tools))
      (when-let ((title (plist-get update :title))) (setf (goose-ls--call-title call) title))
      (when-let ((status (plist-get update :status))) (setf (goose-ls--call-status call) status))
      (when (stringp (plist-get update :name)) (setf (goose-ls--call-name call) (plist-get update :name)))
      (when (plist-member update :content) ; content replaces the earlier content
        (setf (goose-ls--call-output call)
              (goose-ls--content-text (append (plist-get update :content) nil))))
      (goose-ls--following (goose-ls--call-render call)))))

(defun goose-ls-toggle-tool (&optional event)
  "Show or hide the output of the tool call on this line (or where EVENT was)."
  (interactive (list last-nonmenu-event))
  (save-excursion
    (when (mouse-event-p event) (mouse-set-point event))
    (when-let ((overlay (seq-find (lambda (o) (overlay-get o 'goose-ls-call))
                                  (overlays-in (line-beginning-position) (1+ (line-end-position))))))
      (let ((call (overlay-get overlay 'goose-ls-call)))
        (setf (goose-ls--call-folded call) (not (goose-ls--call-folded call)))
        (overlay-put overlay 'invisible (and (goose-ls--call-folded call) 'goose-ls-tool))))))

;;;; Permissions: the diff, the question with every choice shown, the decision

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
         (table (lambda (string predicate action)
                  (if (eq action 'metadata)
                      '(metadata (display-sort-function . identity)
                                 (cycle-sort-function . identity))
                    (complete-with-action action labels string predicate))))
         (title (plist-get (plist-get request :toolCall) :title))
         (answer (minibuffer-with-setup-hook #'goose-ls--show-choices
                   (completing-read (format "goose wants to run %s (%s): "
                                            title (string-join labels " / "))
                                    table nil t))))
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
      (format "%s (%s)" words label))))

(defun goose-ls--permission (session request server replay)
  "Show REQUEST in SESSION's chat with its diff, then ask (unless REPLAY)."
  (let ((tool-call (plist-get request :toolCall)))
    (with-current-buffer (goose-ls--chat session server)
      (puthash (plist-get request :requestId) request goose-ls--permissions))
    (goose-ls--separate session 'permission)
    (goose-ls--append session (format "🔐 %s asks permission\n" (plist-get tool-call :title))
                      'font-lock-face 'goose-ls-permission 'goose-ls-verbatim t)
    (when-let ((warning (plist-get request :warning)))
      (goose-ls--append session (format "⚠ %s\n" warning)
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
           (title (or (plist-get (plist-get request :toolCall) :title) "the tool")))
      (remhash request-id goose-ls--permissions)
      (goose-ls--separate session 'permission)
      (goose-ls--append session
                        (if (equal (plist-get update :outcome) "selected")
                            (format "🔐 %s: %s\n" title
                                    (if request
                                        (goose-ls--decision request (plist-get update :optionId))
                                      (plist-get update :label)))
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

;;;; Notifications

(cl-defmethod eglot-handle-notification (server (_method (eql goose/update)) &rest params)
  "Render one goose/update PARAMS in its chat."
  (let ((session (plist-get params :sessionId))
        (update (plist-get params :update)))
    (goose-ls--chat session server)
    (when (goose-ls--new-index-p session (plist-get params :index))
      (goose-ls--turn-seen session (plist-get params :messageId))
      (pcase (plist-get update :sessionUpdate)
        ("agent_message_chunk"
         (goose-ls--block session 'agent "## goose\n\n")
         (goose-ls--append session (goose-ls--text (plist-get update :content))))
        ("user_message_chunk"
         (goose-ls--block session 'user "## You\n\n")
         (goose-ls--append session (concat (goose-ls--text (plist-get update :content)) "\n")))
        ("agent_thought_chunk"
         (goose-ls--block session 'thought "> 💭 ")
         (goose-ls--append session (replace-regexp-in-string
                                    "\n" "\n> " (goose-ls--text (plist-get update :content)))))
        ((or "tool_call" "tool_call_update") (goose-ls--tool session update))
        ("permission_request" (goose-ls--permission session update server
                                                    (plist-get params :replay)))
        ("permission_resolved" (goose-ls--resolved session update))
        ((or "elicitation_request" "elicitation_resolved")
         (goose-ls--question session update (plist-get params :replay)))
        ("note"
         (goose-ls--separate session 'note)
         (goose-ls--append session (format "> %s\n" (plist-get update :text))))
        ("usage_update"
         (with-current-buffer (goose-ls--chat session) (setq goose-ls--usage update))
         (force-mode-line-update t))
        ("available_commands_update"
         (with-current-buffer (goose-ls--chat session)
           (setq goose-ls--commands (append (plist-get update :availableCommands) nil))))
        ("session_info_update" (goose-ls--retitle session (plist-get update :title)))
        ((or "plan" "plan_update" "plan_removed" "compaction_update" "compaction_summary_chunk")
         (goose-ls--plan session update))))))

(defun goose-ls--retitle (session title)
  "Name SESSION's chat buffer after TITLE, the chat's title, when it is one."
  (when (and (stringp title) (not (string-blank-p title)))
    (with-current-buffer (goose-ls--chat session)
      (rename-buffer (format "*goose: %s*" (string-trim (replace-regexp-in-string "[ \t\n]+" " " title)))
                     t))))

(cl-defmethod eglot-handle-notification (server (_method (eql goose/turnEnd)) &rest params)
  "End a turn in its chat and run `goose-ls-turn-end-hook'."
  (let ((session (plist-get params :sessionId)))
    (goose-ls--chat session server)
    (when (goose-ls--new-index-p session (plist-get params :index))
      (let ((outcome (or (plist-get params :error) (plist-get params :stopReason)))
            (joined (member (plist-get params :messageId)
                            (buffer-local-value 'goose-ls--joined (goose-ls--chat session)))))
        (unless joined ; it ended with the turn it joined, said just above
          (unless (equal outcome "end_turn")
            (goose-ls--append session (format "\n\n_%s_" outcome)))
          (goose-ls--append session "\n"))
        (with-current-buffer (goose-ls--chat session)
          (setq goose-ls--joined (delete (plist-get params :messageId) goose-ls--joined))
          (setq goose-ls--kind nil)
          (puthash (plist-get params :messageId) t goose-ls--started)
          ;; "running": a turn that ran when the chat was opened, id unknown.
          (setq goose-ls--turns (delete "running" (delete (plist-get params :messageId)
                                                          goose-ls--turns)))
          (when (assoc (plist-get params :messageId) goose-ls--queued) ; cancelled while waiting
            (setq goose-ls--queued (assoc-delete-all (plist-get params :messageId) goose-ls--queued))
            (goose-ls--show-queue))
          (force-mode-line-update t)))
      (run-hook-with-args 'goose-ls-turn-end-hook params))))

(cl-defmethod eglot-handle-notification (_server (_method (eql goose/agentStatus)) &rest params)
  "Show the agent's state in the echo area and the mode line."
  (setq goose-ls--agent-state (plist-get params :state))
  (setq goose-ls--sign-ins (append (plist-get params :signIn) nil))
  (force-mode-line-update t)
  (if (equal (plist-get params :reason) "auth_required")
      (message "goose: the agent needs you to sign in; %s signs in"
               (substitute-command-keys "\\[goose-ls-sign-in]"))
    (message "goose: %s%s" (plist-get params :state)
             (if (plist-get params :fix) (format " (%s)" (plist-get params :fix)) ""))))

;;;; Sessions and prompts

(defun goose-ls--uuid ()
  (format "%04x%04x-%04x-4%03x-%04x-%06x%06x"
          (random 65536) (random 65536) (random 65536) (random 4096)
          (logior #x8000 (random 16384)) (random 16777216) (random 16777216)))

(defun goose-ls--new-session (server)
  (let* ((result (goose-ls--request :goose/newSession (list :tabId (goose-ls--uuid)) server))
         (session (plist-get result :sessionId)))
    (goose-ls--chat session server)
    (setq goose-ls-current-session session)))

(defun goose-ls--session ()
  "The session that commands talk to here.
This buffer's chat, the current one, or else a new one."
  (or goose-ls--session
      (and goose-ls-current-session
           (buffer-live-p (car (gethash goose-ls-current-session goose-ls--chats)))
           goose-ls-current-session)
      (goose-ls--new-session (goose-ls--server))))

(defun goose-ls--prompt (question context &optional session)
  "Send QUESTION with CONTEXT to SESSION (default: the current one).
Returns the goose/prompt result; a message that waits shows as queued."
  (let* ((session (or session (goose-ls--session)))
         (chat (goose-ls--chat session))
         (message-id (goose-ls--uuid))
         (result nil))
    ;; Busy from now: the whole turn may have come and gone before the answer is read
    ;; (a permission asked meanwhile runs in a timer while this waits).
    (with-current-buffer chat
      (setq goose-ls--turns (append goose-ls--turns (list message-id))))
    (condition-case err
        (setq result (goose-ls--request :goose/prompt
                                        (list :sessionId session :messageId message-id
                                              :prompt question :context (vconcat context))
                                        (buffer-local-value 'goose-ls--chat-server chat)))
      (error (with-current-buffer chat
               (setq goose-ls--turns (delete message-id goose-ls--turns))
               (force-mode-line-update t))
             (signal (car err) (cdr err))))
    (with-current-buffer chat
      (when (and (eq (plist-get result :queued) t) (not (gethash message-id goose-ls--started)))
        (setq goose-ls--queued (append goose-ls--queued (list (cons message-id question))))
        (goose-ls--show-queue))
      (force-mode-line-update t))
    (goose-ls-show-chat session)
    result))

(defun goose-ls--uri (path)
  "PATH as a file URI, by eglot (whose function was renamed in eglot 1.16)."
  (if (fboundp 'eglot-path-to-uri)
      (eglot-path-to-uri path)
    (with-no-warnings (eglot--path-to-uri path))))

(defun goose-ls-show-chat (&optional session)
  "Show the chat of SESSION (default: the current one) without selecting it."
  (interactive)
  (let ((chat (goose-ls--chat (or session (goose-ls--session)))))
    (or (get-buffer-window chat t) (display-buffer chat))))

;;;###autoload
(defun goose-ls-ask (question start end)
  "Ask QUESTION about the region from START to END."
  (interactive (list (read-string "Ask goose about the region: ") (region-beginning) (region-end)))
  (let ((context (list (list :type "selection"
                             :uri (goose-ls--uri (buffer-file-name))
                             :startLine (line-number-at-pos start)
                             :endLine (line-number-at-pos (max start (1- end)))))))
    ;; The region is used up, as by `kill-ring-save': left active, it would turn a later
    ;; undo here into an undo in the region, which misses the agent's edits elsewhere.
    (deactivate-mark)
    (goose-ls--prompt question context)))

;;;###autoload
(defun goose-ls-send (message)
  "Send MESSAGE, read in the minibuffer, to the current chat."
  (interactive (list (read-string "goose: ")))
  (goose-ls--prompt message nil))

;;;###autoload
(defun goose-ls-new-chat ()
  "Start a new chat and open its compose buffer."
  (interactive)
  (let ((server (goose-ls--server)))
    (goose-ls--new-session server)
    (goose-ls-compose)))

;;;###autoload
(defun goose-ls-cancel ()
  "Cancel the running turn of this chat (or the current one)."
  (interactive)
  (let ((session (or goose-ls--session goose-ls-current-session)))
    (if (not session)
        (message "goose-ls: no chat yet")
      (goose-ls--request :goose/cancel (list :sessionId session)
                         (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session))))))

;;;###autoload
(defun goose-ls-send-now ()
  "Send the oldest message queued in this chat (or the current one) now.
It joins the running turn where the agent can take it, and ends with it; an
agent that cannot take it says why, and the message keeps its place."
  (interactive)
  (let* ((session (or goose-ls--session goose-ls-current-session))
         (chat (and session (goose-ls--chat session)))
         (waiting (and chat (car (buffer-local-value 'goose-ls--queued chat)))))
    (if (not waiting)
        (message "goose-ls: no message waits to be sent now")
      (unless (eq (plist-get (goose-ls--request :goose/steer
                                                (list :sessionId session :messageId (car waiting))
                                                (buffer-local-value 'goose-ls--chat-server chat))
                             :steered)
                  t)
        (message "goose-ls: the turn had ended; your message runs next")))))

;;;###autoload
(defun goose-ls-sessions ()
  "Choose a session and open its chat.
Starts goose-ls for this buffer's project when it does not run yet."
  (interactive)
  (let* ((server (goose-ls--server))
         (sessions (append (plist-get (goose-ls--request :goose/listSessions nil server) :sessions)
                           nil))
         (choices (mapcar (lambda (s)
                            (cons (format "%s  %s  (%s)"
                                          (substring (or (plist-get s :updatedAt) "") 0
                                                     (min 16 (length (or (plist-get s :updatedAt) ""))))
                                          (plist-get s :title) (plist-get s :sessionId))
                                  (plist-get s :sessionId)))
                          sessions)))
    (if (null choices)
        (message "goose-ls: no chats yet; %s starts one"
                 (substitute-command-keys "\\[goose-ls-new-chat]"))
      (let ((choice (cdr (assoc (completing-read "goose session: " choices nil t) choices))))
        (goose-ls--open-session choice server)))))

(defun goose-ls--open-session (session server)
  "Load SESSION into SERVER, draw its whole history, and make it current."
  (let ((summary (goose-ls--request :goose/loadSession (list :sessionId session) server)))
    (goose-ls--chat session server)
    ;; The journal's history: what the agent's replay does not send again.
    (goose-ls--request :goose/replay (list :sessionId session :afterIndex 0) server)
    (with-current-buffer (goose-ls--chat session)
      (when (eq (plist-get summary :busy) t)
        (setq goose-ls--turns (or goose-ls--turns (list "running"))))
      ;; Permissions of the history still open are asked now.
      (maphash (lambda (id _) (run-at-time 0 nil #'goose-ls--ask session id))
               goose-ls--permissions))
    (setq goose-ls-current-session session)
    (goose-ls-compose session)))

;;;; The compose buffer

(defvar goose-ls--history nil
  "Messages sent from compose buffers, newest first.")

(defvar-local goose-ls--history-position -1)

(defvar goose-ls--source nil
  "The file buffer a compose buffer was last opened from, and its region's lines.
They are what `@selection' and `@diagnostics' in a message name.")

(defvar goose-ls-compose-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'goose-ls-compose-send)
    (define-key map (kbd "C-c C-k") #'goose-ls-cancel)
    (define-key map (kbd "C-c C-j") #'goose-ls-send-now)
    (define-key map (kbd "C-c C-p") #'goose-ls-answer-permission)
    (define-key map (kbd "M-p") #'goose-ls-compose-previous)
    (define-key map (kbd "M-n") #'goose-ls-compose-next)
    map)
  "Keys of a compose buffer.")

(define-derived-mode goose-ls-compose-mode text-mode "goose compose"
  "Write a message to a goose chat; \\[goose-ls-compose-send] sends it.
\\{goose-ls-compose-mode-map}"
  (setq mode-line-process '(:eval (goose-ls--state-string)))
  (setq header-line-format
        (substitute-command-keys
         "\\<goose-ls-compose-mode-map>\\[goose-ls-compose-send] send · \\[goose-ls-send-now] send a queued one now · \\[goose-ls-cancel] cancel the turn · \\[goose-ls-compose-previous]/\\[goose-ls-compose-next] history"))
  (add-hook 'completion-at-point-functions #'goose-ls--complete-mention nil t)
  (add-hook 'completion-at-point-functions #'goose-ls--complete-command nil t)
  (visual-line-mode 1))

(defun goose-ls--complete-command ()
  "Complete the agent's slash command a message starts with (\\[completion-at-point])."
  (when (and goose-ls--session (looking-back "\\`/\\([[:alnum:]_-]*\\)" (point-min)))
    (let ((start (match-beginning 1))
          (commands (with-current-buffer (goose-ls--chat goose-ls--session) goose-ls--commands)))
      (list start (point)
            (mapcar (lambda (command) (plist-get command :name)) commands)
            :annotation-function
            (lambda (name)
              (let ((found (seq-find (lambda (c) (equal (plist-get c :name) name)) commands)))
                (when found (concat "  " (plist-get found :description)))))
            :exclusive 'no))))

(defun goose-ls--complete-mention ()
  "Complete the `@file' mention before point (\\[completion-at-point]).
The workspace files goose-ls finds for what follows the @, open buffers
first; goose-ls attaches each @path of the message when it is sent."
  (when (looking-back "\\(?:^\\|[^[:alnum:]@/]\\)@\\([[:alnum:]._~+/-]*\\)" (line-beginning-position))
    (let ((start (match-beginning 1))
          (server goose-ls--chat-server))
      (list start (point)
            (completion-table-dynamic
             (lambda (typed)
               (append (and (buffer-live-p (car goose-ls--source))
                            (seq-filter (lambda (word) (string-prefix-p typed word))
                                        '("selection" "diagnostics")))
                       (plist-get (goose-ls--request :goose/findFiles (list :query typed) server)
                                  :files)
                       nil)))
            :exclusive 'no))))

(defun goose-ls--compose-buffer (session)
  (let ((chat (goose-ls--chat session)))
    (with-current-buffer chat
      (unless (buffer-live-p goose-ls--compose)
        (let ((server goose-ls--chat-server))
          (setq goose-ls--compose (get-buffer-create (format "*goose compose: %s*" session)))
          (with-current-buffer goose-ls--compose
            (goose-ls-compose-mode)
            (setq goose-ls--session session
                  goose-ls--chat-server server))))
      goose-ls--compose)))

;;;###autoload
(defun goose-ls--remember-source ()
  "Keep the current buffer (when it visits a file) as the source of mentions."
  (when buffer-file-name
    (setq goose-ls--source
          (list (current-buffer)
                (and (mark t)
                     (cons (line-number-at-pos (region-beginning))
                           (line-number-at-pos (region-end))))))))

(defun goose-ls--mentioned (text)
  "Context items for `@selection' and `@diagnostics' in TEXT.
They come from `goose-ls--source'; goose-ls attaches each @path itself."
  (let* ((buffer (car goose-ls--source))
         (lines (cadr goose-ls--source))
         (items nil))
    (when (buffer-live-p buffer)
      (let ((uri (concat "file://" (buffer-file-name buffer)))
            (named (lambda (word)
                     (string-match-p (format "\\(?:^\\|[^[:alnum:]@/]\\)@%s\\_>" word) text))))
        (when (and lines (funcall named "selection"))
          (push (list :type "selection" :uri uri :startLine (car lines) :endLine (cdr lines)) items))
        (when (funcall named "diagnostics")
          (let ((found (with-current-buffer buffer
                         (mapcar (lambda (d)
                                   (format "%s:%d: %s: %s"
                                           (file-name-nondirectory (buffer-file-name buffer))
                                           (line-number-at-pos (flymake-diagnostic-beg d))
                                           (string-remove-prefix
                                            ":" (format "%s" (flymake-diagnostic-type d)))
                                           (flymake-diagnostic-text d)))
                                 (and (fboundp 'flymake-diagnostics) (flymake-diagnostics))))))
            (when found
              (push (list :type "text" :text (concat "Diagnostics:\n" (string-join found "\n")))
                    items))))))
    (nreverse items)))

(defun goose-ls-compose (&optional session)
  "Write a message to SESSION (default: the current chat).
In a buffer under its chat."
  (interactive)
  (goose-ls--remember-source)
  (let* ((session (or session (goose-ls--session)))
         (compose (goose-ls--compose-buffer session))
         (chat-window (goose-ls-show-chat session))
         (window (or (get-buffer-window compose)
                     (display-buffer compose
                                     `((display-buffer-reuse-window display-buffer-in-direction)
                                       (direction . below) (window . ,chat-window)
                                       (window-height . ,goose-ls-compose-height))))))
    (setq goose-ls-current-session session)
    (when window (select-window window))
    compose))

(defun goose-ls-chat-type ()
  "Typing in a chat writes in its compose buffer."
  (interactive)
  (let ((compose (goose-ls-compose goose-ls--session)))
    (with-current-buffer compose
      (goto-char (point-max))
      (self-insert-command 1))))

(defun goose-ls-compose-send ()
  "Send what this compose buffer holds.
A message sent during a turn waits, shown as queued."
  (interactive)
  (let ((text (string-trim (buffer-substring-no-properties (point-min) (point-max)))))
    (when (string-empty-p text)
      (user-error "Nothing to send"))
    ;; Emptied first: what is typed while the request goes is the next draft.
    (erase-buffer)
    (push text goose-ls--history)
    (setq goose-ls--history-position -1)
    (condition-case err
        (goose-ls--prompt text (goose-ls--mentioned text) goose-ls--session)
      (error (goto-char (point-min))
             (insert text)
             (signal (car err) (cdr err))))))

(defun goose-ls-compose-previous (count)
  "Replace the draft with the COUNTth earlier message sent."
  (interactive "p")
  (let ((position (max -1 (min (1- (length goose-ls--history)) (+ goose-ls--history-position count)))))
    (setq goose-ls--history-position position)
    (erase-buffer)
    (when (>= position 0) (insert (nth position goose-ls--history)))))

(defun goose-ls-compose-next (count)
  "Replace the draft with the COUNTth later message sent."
  (interactive "p")
  (goose-ls-compose-previous (- count)))

;;;; Config options: the chat's options grouped by category, then the option's value

(defconst goose-ls--option-categories
  '(("mode" . "Mode") ("model" . "Model") ("model_config" . "Model settings")
    ("thought_level" . "Thinking"))
  "The words for the config option categories ACP names; others show as they are.")

(defun goose-ls--option-values (option)
  "OPTION's values as (NAME . VALUE): a select option's, those in groups too;
on and off for a boolean option."
  (if (equal (plist-get option :type) "boolean")
      '(("on" . t) ("off" . :json-false))
    (let (found)
      (seq-doseq (entry (plist-get option :options))
        (seq-doseq (value (or (plist-get entry :options) (vector entry)))
          (when (plist-member value :value)
            (push (cons (or (plist-get value :name) (plist-get value :value))
                        (plist-get value :value))
                  found))))
      (nreverse found))))

(defun goose-ls--option-line (option)
  "OPTION as the picker shows it: its group, name and current value."
  (let ((category (plist-get option :category))
        (current (plist-get option :currentValue)))
    (format "%s · %s: %s"
            (if (stringp category)
                (or (cdr (assoc category goose-ls--option-categories)) category)
              "Other")
            (or (plist-get option :name) (plist-get option :id))
            (or (car (rassoc current (goose-ls--option-values option))) current))))

(defun goose-ls--grouped-options (options)
  "OPTIONS, those of one category together.
The groups keep the agent's order, which is their priority."
  (let (groups)
    (seq-doseq (option options)
      (let ((group (assoc (plist-get option :category) groups)))
        (if group
            (setcdr group (cons option (cdr group)))
          (push (list (plist-get option :category) option) groups))))
    (mapcan (lambda (group) (reverse (cdr group))) (nreverse groups))))

(defun goose-ls--pick (prompt choices &optional group)
  "The cdr of the entry of CHOICES, an alist, picked at PROMPT, in their order.
GROUP, a `group-function', heads the groups in Emacs 28 and later."
  (let ((table (lambda (string predicate action)
                 (if (eq action 'metadata)
                     `(metadata (display-sort-function . identity)
                                (cycle-sort-function . identity)
                                ,@(and group `((group-function . ,group))))
                   (complete-with-action action choices string predicate)))))
    (cdr (assoc (completing-read prompt table nil t) choices))))

(defun goose-ls--option-group (line transform)
  "The `group-function' of the option picker: LINE's group, or LINE without it."
  (let ((parts (split-string line " · ")))
    (if transform (string-join (cdr parts) " · ") (car parts))))

;;;###autoload
(defun goose-ls-set-option ()
  "Choose one of the chat's config options, then its new value.
The options are grouped by category.  The model is switched through
the option of category model; a boolean option is turned on or off."
  (interactive)
  (let ((session (or goose-ls--session goose-ls-current-session)))
    (if (not session)
        (message "goose-ls: no chat yet")
      (let* ((server (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session)))
             (summary (seq-find (lambda (s) (equal (plist-get s :sessionId) session))
                                (plist-get (goose-ls--request :goose/status nil server) :sessions)))
             (options (goose-ls--grouped-options (plist-get summary :configOptions))))
        (if (null options)
            (message "goose-ls: the agent offers no options")
          (let* ((option (goose-ls--pick "goose option: "
                                         (mapcar (lambda (o) (cons (goose-ls--option-line o) o))
                                                 options)
                                         #'goose-ls--option-group))
                 (value (goose-ls--pick (format "%s: " (or (plist-get option :name)
                                                           (plist-get option :id)))
                                        (goose-ls--option-values option))))
            (goose-ls--request :goose/setConfigOption
                               (list :sessionId session :configId (plist-get option :id)
                                     :value value)
                               server)
            (message "goose-ls: %s = %s" (plist-get option :id)
                     (car (rassoc value (goose-ls--option-values option))))))))))

(provide 'goose-ls)
;;; goose-ls.el ends here
