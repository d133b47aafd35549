;;; goose-ls.el --- Chat with the goose agent through goose-ls and eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience
;; URL: https://github.com/aaif-goose/goose

;;; Commentary:

;; goose-ls is a language server that runs the goose agent (or another ACP agent).
;; This package registers it with eglot and renders its goose/* notifications in a
;; chat buffer per session.
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

(defcustom goose-ls-permission-function #'goose-ls-ask-permission
  "Function called with a permission request plist.
It returns the chosen optionId, or nil to decline."
  :type 'function)

(defvar goose-ls--chats (make-hash-table :test #'equal)
  "Session id -> (buffer . last index).")

(defvar goose-ls-current-session nil
  "The session of the chat that commands talk to.")

(defvar goose-ls-turn-end-hook nil
  "Functions called with the goose/turnEnd params when a turn ends.")

;;;###autoload
(defun goose-ls-setup ()
  "Register goose-ls with eglot for `goose-ls-modes'."
  (add-to-list 'eglot-server-programs
               `(,goose-ls-modes . (,@goose-ls-command
                                    :initializationOptions ,goose-ls-initialization-options))))

(defun goose-ls--server ()
  (or (eglot-current-server) (user-error "goose-ls is not the eglot server of this buffer")))

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
        (let ((error (plist-get outcome :error)))
          (error "goose-ls: %s: %s" method (or (plist-get error :message) error)))
      (plist-get outcome :result))))

(defvar-local goose-ls--kind nil
  "The kind of the block that the end of this chat buffer continues.")

(defvar-local goose-ls--tools nil
  "toolCallId -> its `goose-ls--call' in this chat buffer.")

(cl-defstruct (goose-ls--call (:constructor goose-ls--call-create))
  "A tool call shown in a chat: a status line and its output under it."
  start end title status output (folded t) overlay)

(defun goose-ls--chat (session-id)
  "The chat buffer of SESSION-ID, created if need be."
  (let ((entry (gethash session-id goose-ls--chats)))
    (if (and entry (buffer-live-p (car entry)))
        (car entry)
      (let ((buffer (get-buffer-create (format "*goose: %s*" session-id))))
        (with-current-buffer buffer
          (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
          (setq goose-ls--tools (make-hash-table :test #'equal))
          (add-to-invisibility-spec '(goose-ls-tool . t))
          (insert (format "# goose chat · %s\n" session-id)))
        (puthash session-id (cons buffer 0) goose-ls--chats)
        buffer))))

(defun goose-ls--append (session-id text)
  (with-current-buffer (goose-ls--chat session-id)
    (save-excursion
      (goto-char (point-max))
      (insert text))))

(defun goose-ls--separate (session-id kind)
  "End the last block of SESSION-ID's chat with a blank line.
The block that follows is of KIND."
  (with-current-buffer (goose-ls--chat session-id)
    (setq goose-ls--kind kind)
    (save-excursion
      (goto-char (point-max))
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

(defun goose-ls--text (content)
  (pcase (plist-get content :type)
    ("text" (plist-get content :text))
    ("resource_link" (format "[%s]" (or (plist-get content :name) (plist-get content :uri))))
    ("resource" (format "📎 %s" (plist-get (plist-get content :resource) :uri)))
    (type (format "[%s]" type))))

;;;; Tool calls: one status line each, rewritten in place, output indented and folded

(defvar goose-ls-tool-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'goose-ls-toggle-tool)
    (define-key map (kbd "RET") #'goose-ls-toggle-tool)
    (define-key map [mouse-1] #'goose-ls-toggle-tool)
    map)
  "Keys on a tool call's status line.")

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
  (let ((header (propertize (format "🔧 %s — %s" (goose-ls--call-title call)
                                    (goose-ls--call-status call))
                            'keymap goose-ls-tool-map 'mouse-face 'highlight
                            'help-echo "TAB: show or hide the output"))
        (output (goose-ls--call-output call)))
    (save-excursion
      (goto-char (goose-ls--call-start call))
      (delete-region (point) (goose-ls--call-end call))
      (insert header)
      (let ((eol (point)))
        (insert "\n")
        (dolist (line (and output (split-string output "\n")))
          (insert "    " line "\n"))
        (set-marker (goose-ls--call-end call) (point))
        (when (goose-ls--call-overlay call) (delete-overlay (goose-ls--call-overlay call)))
        (setf (goose-ls--call-overlay call)
              (when output
                (let ((overlay (make-overlay eol (1- (point)))))
                  (overlay-put overlay 'goose-ls-call call)
                  (overlay-put overlay 'invisible (and (goose-ls--call-folded call) 'goose-ls-tool))
                  overlay)))))))

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
        (setq call (goose-ls--call-create :start (copy-marker (point-max))
                                          :end (copy-marker (point-max))
                                          :title id :status "pending"))
        (puthash id call goose-ls--tools))
      (when-let ((title (plist-get update :title))) (setf (goose-ls--call-title call) title))
      (when-let ((status (plist-get update :status))) (setf (goose-ls--call-status call) status))
      (when (plist-member update :content) ; content replaces the earlier content
        (setf (goose-ls--call-output call)
              (goose-ls--content-text (append (plist-get update :content) nil))))
      (goose-ls--call-render call))))

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

;;;; Notifications

(cl-defmethod eglot-handle-notification (_server (_method (eql goose/update)) &rest params)
  "Render one goose/update PARAMS in its chat."
  (let ((session (plist-get params :sessionId))
        (update (plist-get params :update)))
    (when (goose-ls--new-index-p session (plist-get params :index))
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
        ("permission_request" (goose-ls--permission session update))
        ("note"
         (goose-ls--separate session 'note)
         (goose-ls--append session (format "> %s\n" (plist-get update :text))))))))

(cl-defmethod eglot-handle-notification (_server (_method (eql goose/turnEnd)) &rest params)
  "End a turn in its chat and run `goose-ls-turn-end-hook'."
  (let ((session (plist-get params :sessionId)))
    (when (goose-ls--new-index-p session (plist-get params :index))
      (let ((outcome (or (plist-get params :error) (plist-get params :stopReason))))
        (unless (equal outcome "end_turn")
          (goose-ls--append session (format "\n\n_%s_" outcome)))
        (goose-ls--append session "\n")
        (with-current-buffer (goose-ls--chat session) (setq goose-ls--kind nil)))
      (run-hook-with-args 'goose-ls-turn-end-hook params))))

(cl-defmethod eglot-handle-notification (_server (_method (eql goose/agentStatus)) &rest params)
  "Show the agent's state in the echo area."
  (message "goose: %s" (plist-get params :state)))

(defun goose-ls-ask-permission (request)
  "Ask in the minibuffer which option of REQUEST to choose; return its optionId.
The choices are the options' labels, as goose-ls words them."
  (let* ((choices (mapcar (lambda (o) (cons (plist-get o :label) (plist-get o :optionId)))
                          (plist-get request :options)))
         (title (plist-get (plist-get request :toolCall) :title))
         (answer (completing-read (format "goose wants to run %s: " title) choices nil t)))
    (cdr (assoc answer choices))))

(defun goose-ls--permission (session request)
  (goose-ls--separate session 'permission)
  (goose-ls--append session (format "🔐 permission: %s\n"
                                    (plist-get (plist-get request :toolCall) :title)))
  (let ((server (eglot-current-server))
        (request-id (plist-get request :requestId)))
    (run-at-time 0 nil
                 (lambda ()
                   (let ((option (funcall goose-ls-permission-function request)))
                     (goose-ls--request :goose/permission
                                        (if option
                                            (list :requestId request-id :optionId option)
                                          (list :requestId request-id))
                                        server))))))

(defun goose-ls--uuid ()
  (format "%04x%04x-%04x-4%03x-%04x-%06x%06x"
          (random 65536) (random 65536) (random 65536) (random 4096)
          (logior #x8000 (random 16384)) (random 16777216) (random 16777216)))

(defun goose-ls--session ()
  (or goose-ls-current-session
      (let ((result (goose-ls--request :goose/newSession (list :tabId (goose-ls--uuid)))))
        (setq goose-ls-current-session (plist-get result :sessionId))
        (goose-ls--chat goose-ls-current-session)
        goose-ls-current-session)))

(defun goose-ls--prompt (question context)
  (let ((session (goose-ls--session)))
    (goose-ls--request :goose/prompt
                       (list :sessionId session :messageId (goose-ls--uuid)
                             :prompt question :context (vconcat context)))
    (display-buffer (goose-ls--chat session))))

(defun goose-ls--uri (path)
  "PATH as a file URI, by eglot (whose function was renamed in eglot 1.16)."
  (if (fboundp 'eglot-path-to-uri)
      (eglot-path-to-uri path)
    (with-no-warnings (eglot--path-to-uri path))))

;;;###autoload
(defun goose-ls-ask (question start end)
  "Ask QUESTION about the region from START to END."
  (interactive (list (read-string "Ask goose: ") (region-beginning) (region-end)))
  (goose-ls--prompt question
                    (list (list :type "selection"
                                :uri (goose-ls--uri (buffer-file-name))
                                :startLine (line-number-at-pos start)
                                :endLine (line-number-at-pos (max start (1- end)))))))

;;;###autoload
(defun goose-ls-send (message)
  "Send MESSAGE to the current chat."
  (interactive (list (read-string "goose: ")))
  (goose-ls--prompt message nil))

;;;###autoload
(defun goose-ls-cancel ()
  "Cancel the current chat's turn."
  (interactive)
  (when goose-ls-current-session
    (goose-ls--request :goose/cancel (list :sessionId goose-ls-current-session))))

;;;###autoload
(defun goose-ls-sessions ()
  "Choose a session and load it."
  (interactive)
  (let* ((sessions (append (plist-get (goose-ls--request :goose/listSessions nil) :sessions) nil))
         (choices (mapcar (lambda (s) (cons (format "%s (%s)" (plist-get s :title) (plist-get s :sessionId))
                                            (plist-get s :sessionId)))
                          sessions))
         (choice (cdr (assoc (completing-read "goose session: " choices nil t) choices))))
    (goose-ls--request :goose/loadSession (list :sessionId choice))
    (setq goose-ls-current-session choice)
    (display-buffer (goose-ls--chat choice))))

(provide 'goose-ls)
;;; goose-ls.el ends here
