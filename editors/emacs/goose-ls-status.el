;;; goose-ls-status.el --- What a goose chat is doing, for the mode line  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  The mode line of a chat and of its compose buffer says whether
;; the chat is idle, busy or waiting for the user, how many messages are queued and how
;; full the agent's context is; `goose-ls-mode''s lighter says the same of the current
;; chat, and the agent's state when it is not running.

;;; Code:

(require 'subr-x)
(require 'goose-ls-chat)
(require 'goose-ls-forms)

(defvar goose-ls--agent-state nil
  "The agent's state from the last goose/agentStatus, or nil before any.")

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

(provide 'goose-ls-status)
;;; goose-ls-status.el ends here
