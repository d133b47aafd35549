;;; goose-ls-plans.el --- Plans and compactions, drawn in place in a goose chat  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  The agent's plan (one checklist), its plans by id
;; (`plan_update', `plan_removed') and its compactions of the conversation (one line
;; each, with the summary it kept under it) are blocks of the chat that are drawn
;; again where they are as they change, worded as goose-ls's own transcript words
;; them.  Each block is held by two markers, so text added above it moves it along.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'goose-ls-chat)
(require 'goose-ls-inert)

(defvar-local goose-ls--drawn nil
  "Key -> (start . end) markers of each block of this chat drawn in place.")

(defvar-local goose-ls--compactions nil
  "compactionId -> (its last compaction_update . the summary streamed so far).")

(defun goose-ls--draw (session key text)
  "Draw block KEY of SESSION's chat as TEXT.
At the end of the chat the first time, else in place of its earlier text,
wherever it is; what follows it stays."
  (with-current-buffer (goose-ls--chat session)
    (unless goose-ls--drawn (setq goose-ls--drawn (make-hash-table :test #'equal)))
    (let ((drawn (gethash key goose-ls--drawn)))
      (unless drawn
        (goose-ls--separate session 'block)
        (setq drawn (cons (copy-marker goose-ls--end) (copy-marker goose-ls--end)))
        (puthash key drawn goose-ls--drawn))
      (goose-ls--follow
       (lambda ()
         (goto-char (car drawn))
         (delete-region (car drawn) (cdr drawn))
         (insert text)
         (set-marker (cdr drawn) (point)))))))

(defun goose-ls--checklist (entries &optional head)
  "ENTRIES, a plan's, as a checklist under HEAD (\"**Plan**\").
Entries that are not objects are skipped."
  (concat (or head "**Plan**") "\n"
          (mapconcat (lambda (entry)
                       (format "- [%s] %s\n"
                               (if (equal (plist-get entry :status) "completed") "x" " ")
                               (goose-ls-inert-line (plist-get entry :content))))
                     (seq-filter #'consp (and (vectorp entries) (append entries nil)))
                     "")))

(defun goose-ls--plan-file (location)
  "The file a plan names, LOCATION (a path or a file URI), on one line.
Relative to the project when inside it; never a link: the agent chose it."
  (format "`%s`" (goose-ls-inert-line
                  (string-remove-prefix "📎 " (goose-ls--attachment (format "%s" (or location "")))))))

(defun goose-ls--plan-document (plan)
  "PLAN, one of several (plan_update): a checklist, markdown, or a file.
A markdown plan's file (its path) heads it; a plan of a kind goose-ls does not
know is shown by what it carries of those."
  (let* ((kind (plist-get plan :type))
         (entries (plist-get plan :entries))
         (content (plist-get plan :content))
         (where (or (plist-get plan :path) (plist-get plan :uri)))
         (head (concat "**Plan**"
                       (unless (equal kind "markdown")
                         (format " of a kind goose-ls does not know: `%s`"
                                 (goose-ls-inert-line (format "%s" kind))))
                       (and (stringp where) (concat " · " (goose-ls--plan-file where))))))
    (cond ((equal kind "items") (goose-ls--checklist entries))
          ((equal kind "file") (format "**Plan**: %s\n" (goose-ls--plan-file (plist-get plan :uri))))
          ((and (not (equal kind "markdown")) (vectorp entries)) (goose-ls--checklist entries head))
          ((and (stringp content) (not (string-empty-p (string-trim content))))
           (format "%s\n\n%s\n" head (goose-ls--inert-lines (goose-ls-inert (string-trim content)) nil)))
          (t (concat head "\n")))))

(defconst goose-ls--compaction-words
  '(("in_progress" . "🗜 Compacting the conversation…")
    ("completed" . "🗜 The conversation was compacted.")
    ("cancelled" . "🗜 Compacting the conversation was cancelled."))
  "How a compaction's line says where it stands.")

(defun goose-ls--blocks-text (blocks)
  "The text of the text content BLOCKS, joined."
  (mapconcat (lambda (block) (or (and (equal (plist-get block :type) "text")
                                      (plist-get block :text))
                                 ""))
             (and (sequencep blocks) (append blocks nil))
             ""))

(defun goose-ls--compaction-text (update streamed)
  "Where the compaction of UPDATE stands, and its summary (else STREAMED) under it."
  (let ((status (or (plist-get update :status) "in_progress")))
    (if (equal status "failed")
        (format "> ⚠ **Compacting the conversation failed:** %s\n"
                (goose-ls-inert-line (or (plist-get update :error) "no reason given")))
      (let ((summary (string-trim (let ((kept (goose-ls--blocks-text (plist-get update :summary))))
                                    (if (string-empty-p kept) streamed kept)))))
        (concat "_" (or (cdr (assoc status goose-ls--compaction-words))
                        (format "🗜 Compaction: %s" (goose-ls-inert-line status)))
                "_\n"
                (if (string-empty-p summary)
                    ""
                  (concat "\n> " (replace-regexp-in-string
                                  "\n" "\n> " (goose-ls--inert-lines (goose-ls-inert summary) nil))
                          "\n")))))))

(defun goose-ls--plan (session update)
  "Draw UPDATE, a plan, a plan by id or a compaction, in SESSION's chat."
  (pcase (plist-get update :sessionUpdate)
    ("plan" (goose-ls--draw session "plan" (goose-ls--checklist (plist-get update :entries))))
    ("plan_update"
     (let ((plan (plist-get update :plan)))
       (goose-ls--draw session (format "plan:%s" (plist-get plan :planId))
                       (goose-ls--plan-document plan))))
    ("plan_removed"
     (goose-ls--draw session (format "plan:%s" (plist-get update :planId)) "_Plan removed._\n"))
    (kind
     (with-current-buffer (goose-ls--chat session)
       (unless goose-ls--compactions
         (setq goose-ls--compactions (make-hash-table :test #'equal)))
       (let* ((id (format "%s" (plist-get update :compactionId)))
              (state (gethash id goose-ls--compactions (cons nil ""))))
         (if (equal kind "compaction_update")
             (setq state (cons update (cdr state)))
           (setq state (cons (car state) (concat (cdr state) (goose-ls--blocks-text
                                                              (list (plist-get update :content)))))))
         (puthash id state goose-ls--compactions)
         (goose-ls--draw session (concat "compaction:" id)
                         (goose-ls--compaction-text (car state) (cdr state))))))))

(provide 'goose-ls-plans)
;;; goose-ls-plans.el ends here
