;;; goose-ls-tools.el --- Tool calls in a goose chat: a status line each, output folded  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  Each tool call is one status line in the chat, rewritten in
;; place as the call goes from pending to completed or failed, with its output indented
;; under it and hidden until TAB, RET or a click on the line shows it.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'goose-ls-chat)
(require 'goose-ls-inert)

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
  "The text of the text items in CONTENT, a tool call's content list, or nil.
An image is a line naming the file goose-ls kept of it."
  (let ((texts (delq nil (mapcar (lambda (item)
                                   (let ((inner (plist-get item :content)))
                                     (and (equal (plist-get item :type) "content")
                                          (pcase (plist-get inner :type)
                                            ("text" (plist-get inner :text))
                                            ("image" (goose-ls--image-text inner))))))
                                 content))))
    (let ((text (string-trim-right (string-join texts "\n") "\n+")))
      (and (not (string-empty-p text)) text))))

(defun goose-ls--call-render (call)
  "Write CALL's status line and its indented output over the text it had."
  (let ((header (propertize (format "🔧 %s%s — %s" (goose-ls-inert-line (goose-ls--call-title call))
                                    (let ((name (goose-ls--call-name call)))
                                      (if (and name (not (equal name (goose-ls--call-title call))))
                                          (format " · `%s`" (goose-ls-inert-line name))
                                        ""))
                                    (goose-ls-inert-line (goose-ls--call-status call)))
                            'keymap goose-ls-tool-map 'mouse-face 'highlight
                            'help-echo "TAB: show or hide the output"))
        (output (goose-ls--call-output call)))
    (goto-char (goose-ls--call-start call))
    (delete-region (point) (goose-ls--call-end call))
    (insert header)
    (let ((eol (point)))
      (insert "\n")
      (dolist (line (and output (split-string (goose-ls-inert output) "\n")))
        (insert (propertize (concat "    " line "\n") 'goose-ls-verbatim t)))
      (set-marker (goose-ls--call-end call) (point))
      (when (goose-ls--call-overlay call) (delete-overlay (goose-ls--call-overlay call)))
      (setf (goose-ls--call-overlay call)
            (when output
              (let ((overlay (make-overlay eol (1- (point)))))
                (overlay-put overlay 'goose-ls-call call)
                (overlay-put overlay 'invisible (and (goose-ls--call-folded call) 'goose-ls-tool))
                overlay))))))

(defun goose-ls--disk-changes (session-id update)
  "What a tool call of SESSION-ID really changed on disk, from UPDATE.
UPDATE is goose-ls's disk_changes: a line naming the files under the tool
call's title, then each diff indented (a code block nothing in it ends)."
  (with-current-buffer (goose-ls--chat session-id)
    (let* ((id (plist-get update :toolCallId))
           (call (and (stringp id) (gethash id goose-ls--tools)))
           (by (if call (concat " by " (goose-ls-inert-line (goose-ls--call-title call)))
                 " during the turn"))
           (files (append (plist-get update :files) nil))
           (named (mapconcat
                   (lambda (file)
                     (let ((diff (plist-get file :diff)))
                       (concat (goose-ls-inert-line (file-relative-name (plist-get file :path)))
                               " " (goose-ls-inert-line (or (plist-get file :state) "changed"))
                               (if (and (stringp diff) (not (string-empty-p diff)))
                                   (format " +%s -%s" (plist-get file :added) (plist-get file :removed))
                                 " (not shown)"))))
                   files ", "))
           (diffs (mapconcat
                   (lambda (file)
                     (let ((diff (plist-get file :diff)))
                       (if (and (stringp diff) (not (string-empty-p diff)))
                           (mapconcat (lambda (line) (concat "    " line))
                                      (split-string (goose-ls-inert diff) "\n" t) "\n")
                         "")))
                   files "\n")))
      (concat "💾 Changed on disk" by ": " named "\n"
              (if (string-empty-p (string-trim diffs)) "" (concat "\n" (string-trim-right diffs) "\n"))))))

(defun goose-ls--tool (session-id update &optional who)
  "Show the tool call of UPDATE in SESSION-ID's chat.
UPDATE is a tool_call or a tool_call_update of WHO's: `agent' (the default) or
\(sub . ID), a subagent.  The first update of a toolCallId adds its status
line at the end of the chat; later ones rewrite that line and the output under
it where they are."
  (with-current-buffer (goose-ls--chat session-id)
    (let* ((id (plist-get update :toolCallId))
           (call (gethash id goose-ls--tools))
           (who (or who 'agent)))
      (unless call
        (if (equal goose-ls--speaker who) ; under the agent's heading, once per turn
            (goose-ls--separate session-id 'tool)
          (goose-ls--said-by session-id who 'tool))
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

(provide 'goose-ls-tools)
;;; goose-ls-tools.el ends here
