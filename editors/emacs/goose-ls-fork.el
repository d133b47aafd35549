;;; goose-ls-fork.el --- Fork a goose chat at a turn  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  `goose-ls-fork' (C-c C-f in a chat) starts a new chat that goes
;; on from the end of the turn point is in.  Which turn that is comes from the chat's own
;; drawing: its text is marked with the index of the event that drew it
;; (`goose-ls-index'), and each event's turn (its messageId) is kept here as it is
;; drawn, replayed history too; text drawn without an index (the blank lines between
;; blocks, a turn's end) belongs to the event drawn before it.  Where the agent cannot
;; fork, goose-ls answers a summary of the turns up to there: it is put in the new
;; chat's compose buffer, to edit and send.

;;; Code:

(require 'goose-ls-server)
(require 'goose-ls-chat)
(require 'goose-ls-inert)
(require 'goose-ls-sessions)

(declare-function goose-ls-compose "goose-ls-compose")

(defvar-local goose-ls--turn-of-index nil
  "Event index -> the messageId of its turn, for the events drawn in this chat.")

(defun goose-ls--note-turn (session-id index message-id)
  "The event INDEX of SESSION-ID, drawn in its chat, is of the turn MESSAGE-ID."
  (when (stringp message-id)
    (with-current-buffer (goose-ls--chat session-id)
      (unless goose-ls--turn-of-index
        (setq goose-ls--turn-of-index (make-hash-table)))
      (puthash index message-id goose-ls--turn-of-index))))

(defun goose-ls--turn-at (position)
  "The messageId of the turn POSITION of this chat is in; nil when in none.
None: the chat's first line, a note between turns, the list of queued messages."
  (unless (or (null goose-ls--turn-of-index)
              (and goose-ls--end (>= position goose-ls--end)))
    (let ((index (and (< position (point-max)) (get-text-property position 'goose-ls-index)))
          (at position))
      (while (and (not index) (> at (point-min)))
        (setq index (get-text-property (1- at) 'goose-ls-index))
        (unless index
          (setq at (previous-single-property-change at 'goose-ls-index nil (point-min)))))
      (and index (gethash index goose-ls--turn-of-index)))))

;;;###autoload
(defun goose-ls-fork ()
  "Fork this chat at the turn point is in: a new chat that goes on from its end.
Put point on the turn's heading or anywhere in it.  goose-ls forks the chat at
the agent and copies its history up to there; where the agent cannot fork, the
new chat's compose buffer holds a summary of the turns up to there, to edit and
send (nothing is sent)."
  (interactive)
  (unless (derived-mode-p 'goose-ls-chat-mode)
    (user-error "goose-ls: fork in a chat buffer, with point on a turn"))
  (let ((turn (goose-ls--turn-at (point)))
        (server goose-ls--chat-server))
    (unless turn
      (user-error "goose-ls: line %d is in no turn: put point on a turn (its heading or below it)"
                  (line-number-at-pos)))
    (when (member turn goose-ls--turns)
      (user-error "goose-ls: that turn is still running; fork it once it has ended"))
    (let* ((result (goose-ls--request :goose/forkSession
                                      (list :sessionId goose-ls--session :messageId turn
                                            :tabId (goose-ls--uuid))
                                      server))
           (session (plist-get result :sessionId))
           (seed (plist-get result :seed)))
      ;; Its history came before the answer, drawn as it came.
      (goose-ls--chat session server)
      (setq goose-ls-current-session session)
      (let ((compose (goose-ls-compose session)))
        (when (stringp seed)
          (with-current-buffer compose
            (erase-buffer)
            (insert (string-trim-right seed)))
          (message "goose-ls: not a fork (%s); edit the summary, then send it"
                   (goose-ls-inert-line (format "%s" (or (plist-get result :notForked)
                                                         "the agent cannot fork")))))
        compose))))

(define-key goose-ls-chat-mode-map (kbd "C-c C-f") #'goose-ls-fork)

(provide 'goose-ls-fork)
;;; goose-ls-fork.el ends here
