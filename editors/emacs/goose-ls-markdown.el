;;; goose-ls-markdown.el --- The markdown of a goose chat, fontified without markdown-mode  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  A chat is markdown, and Debian's Emacs 28 has no
;; markdown-mode: this fontifies headings, fenced code blocks, inline code, bold and
;; quotes itself.  Text with the `goose-ls-verbatim' property (diffs, tool output)
;; keeps faces of its own and is left alone.

;;; Code:

(require 'cl-lib)

(defface goose-ls-heading '((t :inherit (bold font-lock-function-name-face)))
  "Headings (`## You', `## goose') in a chat."
  :group 'goose-ls)

(defface goose-ls-code '((t :inherit font-lock-constant-face))
  "Code, fenced or in backquotes, in a chat."
  :group 'goose-ls)

(defface goose-ls-quote '((t :inherit font-lock-comment-face))
  "Thoughts and notes (`> ' lines) in a chat."
  :group 'goose-ls)

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

(provide 'goose-ls-markdown)
;;; goose-ls-markdown.el ends here
