;;; goose-ls-notifications.el --- goose-ls's notifications, each sent where it is shown  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  eglot hands goose-ls's own notifications here: each
;; goose/update (once, in index order: a replayed index is skipped, and one after a gap
;; waits for the goose/replay of what was missed) goes to the part that draws it in
;; its chat, goose/turnEnd ends a turn and runs `goose-ls-turn-end-hook', and
;; goose/agentStatus tells the agent's state (the mode line's; the echo area's only when it
;; failed).  An update that carries a subagentId goes into that subagent's block
;; (goose-ls-subagents.el).

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'eglot)
(require 'goose-ls-chat)
(require 'goose-ls-inert)
(require 'goose-ls-status)
(require 'goose-ls-tools)
(require 'goose-ls-permissions)
(require 'goose-ls-forms)
(require 'goose-ls-plans)
(require 'goose-ls-sign-in)
(require 'goose-ls-subagents)
(require 'goose-ls-fork)

(defvar goose-ls-turn-end-hook nil
  "Functions called with the goose/turnEnd params when a turn ends.")

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

(cl-defmethod eglot-handle-notification (server (_method (eql goose/update)) &rest params)
  "Render one goose/update PARAMS in its chat."
  (let* ((session (plist-get params :sessionId))
         (update (plist-get params :update))
         (child (and (stringp (plist-get update :subagentId)) (plist-get update :subagentId)))
         (who (if child (cons 'sub child) 'agent)))
    (goose-ls--chat session server)
    (when (goose-ls--new-index-p
           session (plist-get params :index) server
           (lambda () (apply #'eglot-handle-notification server 'goose/update params)))
      (goose-ls--turn-seen session (plist-get params :messageId))
      (goose-ls--note-turn session (plist-get params :index) (plist-get params :messageId))
      (let ((goose-ls--drawing-index (plist-get params :index)))
        ;; A subagent's card, verdict or note goes into its block too.
        (when (and child (not (equal (plist-get update :sessionUpdate) "subagent_update"))
                   (not (equal (buffer-local-value 'goose-ls--speaker (goose-ls--chat session)) who)))
          (goose-ls--said-by session who 'subagent))
        (pcase (plist-get update :sessionUpdate)
          ("subagent_update" (when child (goose-ls--subagent session update)))
          ((and (or "agent_message_chunk" "agent_thought_chunk")
                (guard (equal (plist-get (plist-get update :content) :type) "image")))
           (goose-ls--said-by session who 'image)
           (goose-ls--append session (concat (goose-ls--image-text (plist-get update :content))
                                             "\n")))
          ("agent_message_chunk"
           (goose-ls--said-by session who 'agent)
           (goose-ls--agent-text session (goose-ls--text (plist-get update :content))))
          ((and "user_message_chunk" (guard child)) ; the task its agent gave it
           (goose-ls--said-by session who 'task "> 📋 Task: ")
           (goose-ls--agent-text session (goose-ls--text (plist-get update :content)) "> "))
          ("user_message_chunk"
           ;; A resumed chat's user messages are replayed by the agent: inert too.
           (goose-ls--said-by session 'user 'user)
           (let ((content (plist-get update :content)))
             (goose-ls--append session
                               (concat (if (equal (plist-get content :type) "text")
                                           (goose-ls--inert-lines
                                            (goose-ls-inert (plist-get content :text))
                                            (list "You" goose-ls--agent-name))
                                         (goose-ls--text content))
                                       "\n"))))
          ("agent_thought_chunk"
           (goose-ls--said-by session who 'thought "> 💭 ")
           (goose-ls--agent-text session (goose-ls--text (plist-get update :content)) "> "))
          ((or "tool_call" "tool_call_update") (goose-ls--tool session update who))
          ("permission_request" (goose-ls--permission session update server
                                                      (plist-get params :replay)))
          ("permission_resolved" (goose-ls--resolved session update))
          ((or "elicitation_request" "elicitation_resolved")
           (goose-ls--question session update (plist-get params :replay)))
          ("note"
           (goose-ls--separate session 'note)
           ;; goose-ls's words, with the agent's in them (a tool's title): one line.
           (goose-ls--append session (format "> %s\n" (goose-ls-inert-line (plist-get update :text)))))
          ("disk_changes"
           (goose-ls--separate session 'disk)
           (goose-ls--append session (goose-ls--disk-changes session update)))
          ("usage_update"
           (with-current-buffer (goose-ls--chat session) (setq goose-ls--usage update))
           (force-mode-line-update t))
          ("available_commands_update"
           (with-current-buffer (goose-ls--chat session)
             (setq goose-ls--commands (append (plist-get update :availableCommands) nil))))
          ("session_info_update" (goose-ls--retitle session (plist-get update :title)))
          ((or "plan" "plan_update" "plan_removed" "compaction_update" "compaction_summary_chunk")
           (goose-ls--plan session update)))))))

(cl-defmethod eglot-handle-notification (server (_method (eql goose/turnEnd)) &rest params)
  "End a turn in its chat and run `goose-ls-turn-end-hook'."
  (let ((session (plist-get params :sessionId)))
    (goose-ls--chat session server)
    (when (goose-ls--new-index-p
           session (plist-get params :index) server
           (lambda () (apply #'eglot-handle-notification server 'goose/turnEnd params)))
      (let ((outcome (or (plist-get params :error) (plist-get params :stopReason)))
            (joined (member (plist-get params :messageId)
                            (buffer-local-value 'goose-ls--joined (goose-ls--chat session)))))
        (unless joined ; it ended with the turn it joined, said just above
          (unless (equal outcome "end_turn")
            (goose-ls--append session (format "\n\n_%s_" (goose-ls-inert-line outcome))))
          (goose-ls--append session "\n"))
        (goose-ls--close-block session)
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

(defconst goose-ls--starting "goose-ls: starting the agent…"
  "What the echo area says while the agent starts.")

(cl-defmethod eglot-handle-notification (_server (_method (eql goose/agentStatus)) &rest params)
  "Keep the agent's state for the mode line; tell a failure in the echo area.
While the agent starts (a first question waits for it), the echo area says so,
until it runs: a state said there stayed after the turn had ended, as if the
turn still ran (\"goose: running\")."
  (setq goose-ls--agent-state (plist-get params :state))
  (when (stringp (plist-get params :name))
    (setq goose-ls--agent-name (goose-ls-inert-line (plist-get params :name))))
  (setq goose-ls--sign-ins (append (plist-get params :signIn) nil))
  (force-mode-line-update t)
  (cond ((equal (plist-get params :state) "starting")
         (message "%s" goose-ls--starting))
        ((equal (current-message) goose-ls--starting)
         (message nil)))
  (cond ((equal (plist-get params :reason) "auth_required")
         (message "goose: the agent needs you to sign in; %s signs in"
                  (substitute-command-keys "\\[goose-ls-sign-in]")))
        ((equal (plist-get params :state) "error")
         (message "goose-ls: %s%s" (or (plist-get params :message) "the agent failed")
                  (if (plist-get params :fix) (format " (%s)" (plist-get params :fix)) "")))))

(provide 'goose-ls-notifications)
;;; goose-ls-notifications.el ends here
