;;; goose-ls-chat.el --- The chat buffer of a goose session  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  Each session has one read-only chat buffer that its stream is
;; written into.  This holds the chats by session, the state each chat keeps (its
;; turns, queue and open permissions), the chat's mode and keys, and how text is added
;; at its end: in blocks, with the windows that show the end kept at the end.  What
;; goes into the blocks is drawn by the other parts.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'url-util)
(require 'goose-ls-server)
(require 'goose-ls-markdown)
(require 'goose-ls-inert)

(declare-function goose-ls-chat-type "goose-ls-compose")
(declare-function goose-ls-compose "goose-ls-compose")
(declare-function goose-ls-cancel "goose-ls-sessions")
(declare-function goose-ls-send-now "goose-ls-sessions")
(declare-function goose-ls-sessions "goose-ls-sessions")
(declare-function goose-ls-answer-permission "goose-ls-permissions")
(declare-function goose-ls--subagent-begin "goose-ls-subagents")

(defvar goose-ls--chats (make-hash-table :test #'equal)
  "Session id -> (buffer . last index).")

(defvar goose-ls-current-session nil
  "The session of the chat that commands talk to outside chat buffers.")

(defvar-local goose-ls--session nil
  "The session of this chat or compose buffer.")

(defvar-local goose-ls--kind nil
  "The kind of the block that the end of this chat buffer continues.")

(defvar-local goose-ls--speaker nil
  "Who the last heading of this chat buffer names: `user', `agent', or
\(sub . ID) for the agent's subagent ID.")

(defvar-local goose-ls--open-block nil
  "While a subagent's block is the end of this chat: a box holding its overlay.
The overlay grows with what is appended (it advances at its end), until the
block ends (`goose-ls--close-block').")

(defvar goose-ls--agent-name "agent"
  "The agent's name for people (goose/agentStatus's `name').
It heads the agent's messages.")

(defvar-local goose-ls--line-start nil
  "Where the line of agent text at the chat's end begins, after any lead.
nil once it is known not to imitate the chat's own lines, or when it follows a
lead of the chat's own (\"> 💭 \").")

(defvar-local goose-ls--line-head ""
  "The line of agent text at the chat's end, as far as it decides.")

(defvar-local goose-ls--line-lead ""
  "The chat's own lead of that line (\"> \" in a thought), read with it.")

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

(defvar-local goose-ls--usage nil
  "The agent's last usage_update in this chat: how full its context is.")

(defvar-local goose-ls--commands nil
  "The agent's slash commands in this chat (its last available_commands_update).")

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

(define-derived-mode goose-ls-chat-mode text-mode "goose chat"
  "A goose chat: the stream of a session, read-only.
Write in its compose buffer (\\[goose-ls-compose]; typing here goes there).
\\{goose-ls-chat-mode-map}"
  (setq buffer-read-only t)
  (setq-local font-lock-defaults '(goose-ls--font-lock-keywords t))
  (add-hook 'font-lock-extend-region-functions #'goose-ls--extend-to-fence nil t)
  (setq mode-line-process '(:eval (goose-ls--state-string)))
  (add-to-invisibility-spec '(goose-ls-tool . t))
  (add-to-invisibility-spec '(goose-ls-subagent . t))
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
            (insert (format "# %s chat · %s\n" goose-ls--agent-name session-id)))
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

(defvar goose-ls--drawing-index nil
  "The index of the event being drawn, while it is: its text is marked with it.")

(defun goose-ls--append (session-id text &rest properties)
  "Add TEXT, with PROPERTIES, to the end of SESSION-ID's chat.
The text is marked with the index of the event being drawn (`goose-ls-index'),
for a search to find where a message starts."
  (when goose-ls--drawing-index
    (setq properties (append properties (list 'goose-ls-index goose-ls--drawing-index))))
  (with-current-buffer (goose-ls--chat session-id)
    (goose-ls--following
      (goto-char goose-ls--end)
      (insert (if properties (apply #'propertize text properties) text)))))

(defun goose-ls--index-position (index)
  "Where the first text drawn for an event at INDEX or after starts, in this chat."
  (let ((position (point-min)) found)
    (while (and (not found) position (< position (point-max)))
      (let ((drawn (get-text-property position 'goose-ls-index)))
        (if (and drawn (>= drawn index))
            (setq found position)
          (setq position (next-single-property-change position 'goose-ls-index)))))
    found))

(defun goose-ls--separate (session-id kind)
  "End the last block of SESSION-ID's chat with a blank line.
The block that follows is of KIND."
  (with-current-buffer (goose-ls--chat session-id)
    (setq goose-ls--kind kind)
    (goose-ls--following
      (goto-char goose-ls--end)
      (insert (make-string (- 2 (cond ((looking-back "\n\n" 2) 2) ((bolp) 1) (t 0))) ?\n)))))

(defun goose-ls--said-by (session-id who kind &optional lead)
  "Start a KIND block of WHO's in SESSION-ID's chat.
WHO is `user', `agent' or (sub . ID), the agent's subagent ID.  Unless the chat
is in one already.  Under a heading naming WHO only when the last heading
named another: a turn's tool calls and cards do not head the agent's words
again; a subagent's heading (`goose-ls--subagent-begin') comes under the
agent's.  LEAD starts the block."
  (let ((chat (goose-ls--chat session-id)))
    (unless (and (eq (buffer-local-value 'goose-ls--kind chat) kind)
                 (equal (buffer-local-value 'goose-ls--speaker chat) who))
      (goose-ls--separate session-id kind)
      (unless (equal (buffer-local-value 'goose-ls--speaker chat) who)
        (goose-ls--close-block session-id)
        (when (and (consp who) (memq (buffer-local-value 'goose-ls--speaker chat) '(nil user)))
          (with-current-buffer chat (setq goose-ls--speaker 'agent))
          (goose-ls--append session-id (format "## %s\n\n" goose-ls--agent-name)))
        (with-current-buffer chat (setq goose-ls--speaker who))
        (if (consp who)
            (goose-ls--subagent-begin session-id (cdr who))
          (goose-ls--append session-id
                            (format "## %s\n\n" (if (eq who 'user) "You" goose-ls--agent-name)))))
      (when lead (goose-ls--append session-id lead))
      (goose-ls--new-line session-id (and (not lead) "")))))

(defun goose-ls--close-block (session-id)
  "End the subagent's block that SESSION-ID's chat ends with, if it does.
Its overlay stops growing: what comes next is not in it."
  (with-current-buffer (goose-ls--chat session-id)
    (when-let ((box goose-ls--open-block))
      (let* ((open (car box))
             (closed (make-overlay (overlay-start open) (overlay-end open) nil nil nil)))
        (overlay-put closed 'invisible (overlay-get open 'invisible))
        (delete-overlay open)
        (setcar box closed))
      (setq goose-ls--open-block nil))))

(defun goose-ls--new-line (session-id lead)
  "A line of agent text begins at the end of SESSION-ID's chat after LEAD.
LEAD nil: it follows a lead of the chat's own, and is not judged."
  (with-current-buffer (goose-ls--chat session-id)
    (when goose-ls--line-start (set-marker goose-ls--line-start nil))
    (setq goose-ls--line-start (and lead (copy-marker goose-ls--end))
          goose-ls--line-head ""
          goose-ls--line-lead (or lead ""))))

(defun goose-ls--agent-text (session-id text &optional lead)
  "Add agent TEXT to SESSION-ID's chat: inert, each new line led by LEAD.
A line that begins as the chat's own lines do is led by a backslash.  Chunks
split lines anywhere, so a line's beginning is judged as it is assembled."
  (let ((first t))
    (dolist (piece (split-string (goose-ls-inert text) "\n"))
      (unless first
        (goose-ls--append session-id (concat "\n" lead))
        (goose-ls--new-line session-id (or lead "")))
      (setq first nil)
      (goose-ls--append session-id piece)
      (with-current-buffer (goose-ls--chat session-id)
        (when (and goose-ls--line-start (< (length goose-ls--line-head) goose-ls--decides))
          (setq goose-ls--line-head (concat goose-ls--line-head piece))
          (when (goose-ls--imitates-p (concat goose-ls--line-lead goose-ls--line-head)
                                      (list "You" goose-ls--agent-name))
            (goose-ls--following
              (goto-char goose-ls--line-start)
              (insert "\\"))
            (set-marker goose-ls--line-start nil)
            (setq goose-ls--line-start nil)))))))

(defvar goose-ls--catching-up (make-hash-table :test #'equal)
  "Session id -> t while the goose/replay asked for after a gap has not answered.")

(defvar goose-ls--held (make-hash-table :test #'equal)
  "Session id -> the events that came after a gap, as (INDEX . DRAW), until the
goose/replay asked for answers.")

(defun goose-ls--new-index-p (session-id index &optional server draw)
  "Whether INDEX is the next event of SESSION-ID (of SERVER) to show.
If it is, it counts as shown.  An index shown already is a duplicate (a replay).
One after a gap is not shown yet: the events missed are asked for with
goose/replay, which sends them and this one again, in order.  Shown first, it
would make the replayed ones below it look like duplicates.  DRAW, a function,
shows it once the replay has answered, past indices the journal never had."
  (goose-ls--chat session-id server)
  (let* ((entry (gethash session-id goose-ls--chats))
         (last (cdr entry)))
    (cond ((<= index last) nil)
          ((= index (1+ last)) (setcdr entry index) t)
          (t (when draw (push (cons index draw) (gethash session-id goose-ls--held)))
             (goose-ls--catch-up session-id last server)
             nil))))

(defun goose-ls--catch-up (session-id after server)
  "Ask SERVER for SESSION-ID's events after index AFTER, unless asked already.
Called from a notification: the request is sent without waiting for its answer."
  (let ((server (or server (buffer-local-value 'goose-ls--chat-server
                                               (goose-ls--chat session-id)))))
    (unless (or (gethash session-id goose-ls--catching-up) (null server))
      (puthash session-id t goose-ls--catching-up)
      (let ((failed (lambda (&rest _)
                      (remhash session-id goose-ls--catching-up)
                      (remhash session-id goose-ls--held))) ; the next one asks again
            (answered (lambda (&rest _)
                        (remhash session-id goose-ls--catching-up)
                        (goose-ls--settle session-id server))))
        (jsonrpc-async-request server :goose/replay
                               (list :sessionId session-id :afterIndex after)
                               :success-fn answered :error-fn failed :timeout-fn failed)))))

(defun goose-ls--settle (session-id server)
  "Show SESSION-ID's events held after a gap, in order, once the replay answered.
The journal sent all it holds up to them: indices it never had are skipped (a
goose-ls killed mid-chat leaves such a gap); those the replay brought are not
shown twice."
  (let ((held (sort (gethash session-id goose-ls--held)
                    (lambda (a b) (< (car a) (car b))))))
    (remhash session-id goose-ls--held)
    (dolist (event held)
      (goose-ls--chat session-id server)
      (let ((entry (gethash session-id goose-ls--chats)))
        (when (> (car event) (cdr entry))
          (setcdr entry (1- (car event)))
          (funcall (cdr event)))))))

(defun goose-ls--last-index (session-id)
  "The index of the last event of SESSION-ID shown in its chat."
  (goose-ls--chat session-id)
  (cdr (gethash session-id goose-ls--chats)))

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

(defconst goose-ls--image-kinds
  '(("image/png" . "PNG") ("image/jpeg" . "JPEG") ("image/gif" . "GIF") ("image/webp" . "WebP"))
  "The image types goose-ls keeps, and their names.")

(defun goose-ls--size-text (size)
  "SIZE in bytes as a person reads it: 812 bytes, 14 KB, 2.4 MB."
  (cond ((< size 1000) (format "%d bytes" size))
        ((< size 1000000) (format "%.0f KB" (/ size 1000.0)))
        (t (format "%.1f MB" (/ size 1000000.0)))))

(defun goose-ls--image-text (content)
  "CONTENT, an image of the chat, as lines of the chat's own.
The file the user's was read from, then the copy goose-ls kept (a file name
`find-file-at-point' opens), or why it was not kept (docs/protocol.md,
\"Images in updates\")."
  (let ((source (plist-get content :source))
        (refused (plist-get content :refused))
        (uri (plist-get content :uri))
        (size (plist-get content :size)))
    (concat
     (if (stringp source) (concat (goose-ls--attachment source) " (image)\n") "")
     (if (or (stringp refused) (not (stringp uri)))
         (concat "⚠ image not shown: "
                 (goose-ls-inert-line (if (stringp refused) refused "goose-ls kept no copy of it")))
       (format "🖼 %s image%s: %s"
               (or (cdr (assoc (plist-get content :mimeType) goose-ls--image-kinds)) "image")
               (if (numberp size) (concat ", " (goose-ls--size-text size)) "")
               (goose-ls-inert-line
                (if (string-prefix-p "file://" uri)
                    (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)
                  uri)))))))

(defun goose-ls--text (content)
  (pcase (plist-get content :type)
    ("image" (goose-ls--image-text content))
    ("text" (plist-get content :text))
    ("resource_link" (format "[%s]" (goose-ls-inert-line (or (plist-get content :name)
                                                             (plist-get content :uri)))))
    ("resource" (goose-ls--attachment (plist-get (plist-get content :resource) :uri)))
    (type (format "[%s]" type))))

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
    (set-marker-insertion-type goose-ls--end t)
    (when-let ((box goose-ls--open-block)) ; the queue is no part of a subagent's block
      (move-overlay (car box) (overlay-start (car box)) goose-ls--end)))
  (force-mode-line-update t))

(defun goose-ls--retitle (session title)
  "Name SESSION's chat buffer after TITLE, the chat's title, when it is one."
  (when (and (stringp title) (not (string-blank-p title)))
    (with-current-buffer (goose-ls--chat session)
      (rename-buffer (format "*goose: %s*" (goose-ls-inert-line
                                             (string-trim (replace-regexp-in-string
                                                           "[ \t\n]+" " " title))))
                     t))))

(provide 'goose-ls-chat)
;;; goose-ls-chat.el ends here
