;;; goose-ls-subagents.el --- A goose chat's subagents: a block each, that folds  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  An update that carries a subagentId is the work of a subagent
;; the agent runs (Claude's Agent tool): it goes into a block of its own in the turn,
;; under a heading drawn here, "### 🤖 Subagent (state): title", rewritten in place as
;; the state changes.  TAB, RET or a click on the heading hides or shows the block.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'goose-ls-chat)
(require 'goose-ls-inert)

(defconst goose-ls--subagent-heading "### 🤖 Subagent"
  "How a subagent's heading begins.")

(defconst goose-ls--subagent-states
  '(("running" . "⏳ running") ("requires_action" . "✋ waiting for you"))
  "How a subagent at work reads.")

(defconst goose-ls--subagent-ends
  '(("end_turn" . "✓ done") ("cancelled" . "⊘ cancelled") ("error" . "✗ failed")
    ("refusal" . "✗ failed (refused)"))
  "How an idle subagent reads, by its stop reason.")

(defvar goose-ls-subagent-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'goose-ls-toggle-subagent)
    (define-key map (kbd "RET") #'goose-ls-toggle-subagent)
    (define-key map [mouse-1] #'goose-ls-toggle-subagent)
    map)
  "Keys on a subagent's heading.")

(cl-defstruct (goose-ls--subagent (:constructor goose-ls--subagent-create))
  "A subagent in a chat: its state, and its last heading (markers) there."
  title description (state "running") stop-reason described start end)

(defvar-local goose-ls--subagents nil
  "subagentId -> its `goose-ls--subagent' in this chat buffer.")

(defun goose-ls--subagent-of (id)
  "The subagent ID of this chat, made on first use."
  (unless goose-ls--subagents (setq goose-ls--subagents (make-hash-table :test #'equal)))
  (or (gethash id goose-ls--subagents)
      (puthash id (goose-ls--subagent-create) goose-ls--subagents)))

(defun goose-ls--subagent-reads (sub)
  "How SUB's state reads: at work, or once idle, by its stop reason."
  (let ((state (goose-ls--subagent-state sub))
        (reason (goose-ls--subagent-stop-reason sub)))
    (if (equal state "idle")
        (cond ((null reason) "■ ended")
              ((cdr (assoc reason goose-ls--subagent-ends)))
              (t (format "■ ended (%s)" (goose-ls-inert-line reason))))
      (or (cdr (assoc (or state "running") goose-ls--subagent-states))
          (format "• %s" (goose-ls-inert-line state))))))

(defun goose-ls--subagent-line (sub box &optional continued)
  "SUB's heading: the chat's words first, the agent's title after them.
BOX holds the overlay of the block it heads (TAB folds it).  CONTINUED: an
earlier block of SUB (its parent spoke between), whose state is told below."
  (let ((title (goose-ls--subagent-title sub)))
    (propertize (format "%s (%s)%s" goose-ls--subagent-heading
                        (if continued "continued below" (goose-ls--subagent-reads sub))
                        (if title (concat ": " (goose-ls-inert-line title)) ""))
                'keymap goose-ls-subagent-map 'mouse-face 'highlight
                'goose-ls-block box 'help-echo "TAB: fold or unfold this subagent")))

(defun goose-ls--subagent-begin (session-id id)
  "Begin subagent ID's block at the end of SESSION-ID's chat: its heading, the
first time its description, then an overlay that grows with what follows."
  (with-current-buffer (goose-ls--chat session-id)
    (let ((sub (goose-ls--subagent-of id))
          (box (list nil)))
      (goose-ls--following
        (when (goose-ls--subagent-start sub) ; an earlier block: its state is told below now
          (let ((old (get-text-property (goose-ls--subagent-start sub) 'goose-ls-block)))
            (goto-char (goose-ls--subagent-start sub))
            (delete-region (point) (goose-ls--subagent-end sub))
            (insert (goose-ls--subagent-line sub old t))))
        (goto-char goose-ls--end)
        (let ((start (point)))
          (insert (goose-ls--subagent-line sub box))
          (setf (goose-ls--subagent-start sub) (copy-marker start)
                (goose-ls--subagent-end sub) (copy-marker (point))))
        (insert "\n")
        (when (and (goose-ls--subagent-description sub)
                   (not (goose-ls--subagent-described sub)))
          (setf (goose-ls--subagent-described sub) t)
          (insert (format "> _%s_\n" (goose-ls-inert-line (goose-ls--subagent-description sub)))))
        (setcar box (make-overlay (point) (point) nil nil t))
        (overlay-put (car box) 'goose-ls-subagent id)
        (setq goose-ls--open-block box)))))

(defun goose-ls--subagent (session-id update)
  "A subagent_update of SESSION-ID: its state kept, its heading rewritten in place.
A subagent with no block yet gets one at the end of the chat."
  (let ((id (plist-get update :subagentId)))
    (with-current-buffer (goose-ls--chat session-id)
      (let ((sub (goose-ls--subagent-of id)))
        (setf (goose-ls--subagent-title sub) (plist-get update :title)
              (goose-ls--subagent-description sub) (plist-get update :description)
              (goose-ls--subagent-state sub) (plist-get update :state)
              (goose-ls--subagent-stop-reason sub) (plist-get update :stopReason))
        (if (goose-ls--subagent-start sub)
            (goose-ls--following
              (let ((box (get-text-property (goose-ls--subagent-start sub) 'goose-ls-block)))
                (goto-char (goose-ls--subagent-start sub))
                (delete-region (point) (goose-ls--subagent-end sub))
                (insert (goose-ls--subagent-line sub box))
                (set-marker (goose-ls--subagent-end sub) (point))))
          (goose-ls--said-by session-id (cons 'sub id) 'subagent))))))

(defun goose-ls-toggle-subagent (&optional event)
  "Fold or unfold the subagent's block whose heading is on this line (or at EVENT)."
  (interactive (list last-nonmenu-event))
  (save-excursion
    (when (mouse-event-p event) (mouse-set-point event))
    (when-let ((box (get-text-property (line-beginning-position) 'goose-ls-block))
               (overlay (car box)))
      (overlay-put overlay 'invisible
                   (unless (overlay-get overlay 'invisible) 'goose-ls-subagent)))))

(provide 'goose-ls-subagents)
;;; goose-ls-subagents.el ends here
