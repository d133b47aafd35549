;;; goose-ls-sessions.el --- goose sessions, and the messages sent to them  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  The session a command talks to (this buffer's chat, the
;; current one, or a new one), the commands that send it a message (a question about
;; the region, a line from the minibuffer), cancel its turn or send a queued message
;; into it now, and the list of sessions to open one from, drawn with its whole
;; history.

;;; Code:

(require 'eglot)
(require 'parse-time)
(require 'goose-ls-chat)
(require 'goose-ls-inert)
(require 'goose-ls-permissions)

(declare-function goose-ls-compose "goose-ls-compose")

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

(defun goose-ls--send-changes (server)
  "Send SERVER the changes to its buffers eglot holds back until Emacs is idle.
goose-ls names unsaved buffers to the agent, and compares what the agent writes
with what each buffer holds: a change typed just before a message counts."
  (dolist (buffer (eglot--managed-buffers server))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (eglot--signal-textDocument/didChange)))))

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
    (goose-ls--send-changes (buffer-local-value 'goose-ls--chat-server chat))
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
(defun goose-ls-restart (&optional server)
  "Restart the agent and take the open chats back.
With a prefix argument (SERVER), the shared goose serve too (`agent.share'):
every window then reconnects to a new one, as after `goose configure'."
  (interactive "P")
  (goose-ls--request :goose/restart (list :server (if server t :json-false)))
  (message "goose-ls: %s restarted"
           (if server "the agent and its shared goose serve" "the agent")))

;;;###autoload
(defun goose-ls-new-chat ()
  "Start a new chat and open its compose buffer.
The new chat is handed to `goose-ls-compose' by name: from a chat or its compose
buffer, that buffer's own chat would be taken instead."
  (interactive)
  (goose-ls-compose (goose-ls--new-session (goose-ls--server))))

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

(defun goose-ls--age (timestamp &optional now)
  "How long before NOW (default: now) TIMESTAMP was: \"5 min ago\".
TIMESTAMP is in ISO 8601; an empty string when it is not a time."
  (let ((time (and (stringp timestamp) (not (string-empty-p timestamp))
                   (ignore-errors (parse-iso8601-time-string timestamp)))))
    (if (null time)
        ""
      (let ((seconds (float-time (time-subtract (or now (current-time)) time))))
        (cond ((< seconds 60) "just now")
              ((< seconds 3600) (format "%d min ago" (floor seconds 60)))
              ((< seconds 86400) (format "%d h ago" (floor seconds 3600)))
              ((< seconds (* 2 86400)) "yesterday")
              ((< seconds (* 30 86400)) (format "%d days ago" (floor seconds 86400)))
              (t (format-time-string "%Y-%m-%d" time)))))))

(defun goose-ls--session-time (session)
  "When SESSION (a goose/listSessions entry) was last changed, as a number."
  (let ((updated (plist-get session :updatedAt)))
    (or (and (stringp updated) (not (string-empty-p updated))
             (ignore-errors (float-time (parse-iso8601-time-string updated))))
        0)))

(defun goose-ls--same-folder-p (a b)
  "Whether A and B name the same folder."
  (let ((a (file-name-as-directory (expand-file-name a)))
        (b (file-name-as-directory (expand-file-name b))))
    (or (string= a b)
        (and (file-directory-p a) (file-directory-p b) (file-equal-p a b)))))

(defun goose-ls--session-choices (sessions root)
  "The goose/listSessions SESSIONS as choices: (line . session id).
The chats of the workspace ROOT come first, then the others; newest first in
each.  A line has the title, the workspace (shortened with ~) and the age; the
session id is added to a line that would be the same as another's."
  (let* ((here (lambda (s) (and (stringp (plist-get s :cwd))
                                (not (string-empty-p (plist-get s :cwd)))
                                (goose-ls--same-folder-p (plist-get s :cwd) root))))
         (ordered (sort (copy-sequence sessions)
                        (lambda (a b)
                          (let ((a-here (funcall here a)) (b-here (funcall here b)))
                            (if (eq (not a-here) (not b-here))
                                (> (goose-ls--session-time a) (goose-ls--session-time b))
                              a-here)))))
         (seen (make-hash-table :test #'equal)))
    (mapcar (lambda (s)
              (let* ((cwd (plist-get s :cwd))
                     (parts (list (goose-ls-inert-line
                                   (replace-regexp-in-string "[ \t\n]+" " " (or (plist-get s :title) "")))
                                  (if (and (stringp cwd) (not (string-empty-p cwd)))
                                      (abbreviate-file-name (directory-file-name cwd))
                                    "")
                                  (goose-ls--age (plist-get s :updatedAt))
                                  (if (eq (plist-get s :openElsewhere) t) "open in another window" "")))
                     (line (mapconcat #'identity (seq-remove #'string-empty-p parts) "  ·  ")))
                (when (gethash line seen)
                  (setq line (concat line "  ·  " (plist-get s :sessionId))))
                (puthash line t seen)
                (cons line (plist-get s :sessionId))))
            ordered)))

(defun goose-ls--server-root (server)
  "The workspace folder SERVER serves."
  (expand-file-name (or (ignore-errors (project-root (eglot--project server))) default-directory)))

;;;###autoload
(defun goose-ls-sessions ()
  "Choose a session and open its chat.
This workspace's chats are listed first, newest first, each with its
workspace and its age.  Starts goose-ls for this buffer's project when it
does not run yet."
  (interactive)
  (let* ((server (goose-ls--server))
         (sessions (append (plist-get (goose-ls--request :goose/listSessions nil server) :sessions)
                           nil))
         (choices (goose-ls--session-choices sessions (goose-ls--server-root server))))
    (if (null choices)
        (message "goose-ls: no chats yet; %s starts one"
                 (substitute-command-keys "\\[goose-ls-new-chat]"))
      (let ((choice (cdr (assoc (completing-read "goose session: " (goose-ls--in-order choices)
                                                 nil t)
                                choices))))
        (goose-ls--open-session choice server)))))

(defun goose-ls--open-session (session server)
  "Load SESSION into SERVER, draw its whole history, and make it current."
  (let ((summary (goose-ls--request :goose/loadSession (list :sessionId session) server)))
    ;; Loaded there: the chat speaks to SERVER now (its buffer may have outlived the
    ;; goose-ls it was opened in).
    (with-current-buffer (goose-ls--chat session server)
      (setq goose-ls--chat-server server))
    ;; The journal's history, from where the chat is: goose-ls sent it already when the
    ;; agent spoke while taking the chat back (then nothing is missing).
    (goose-ls--request :goose/replay
                       (list :sessionId session :afterIndex (goose-ls--last-index session))
                       server)
    (with-current-buffer (goose-ls--chat session)
      (when (eq (plist-get summary :busy) t)
        (setq goose-ls--turns (or goose-ls--turns (list "running"))))
      ;; Permissions of the history still open are asked now.
      (maphash (lambda (id _) (run-at-time 0 nil #'goose-ls--ask session id))
               goose-ls--permissions))
    (setq goose-ls-current-session session)
    (goose-ls-compose session)))

(provide 'goose-ls-sessions)
;;; goose-ls-sessions.el ends here
