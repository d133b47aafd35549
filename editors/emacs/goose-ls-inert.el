;;; goose-ls-inert.el --- Agent text made inert before the chat shows it  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  goose-ls forwards the agent's raw text, so what would act
;; instead of being read is neutralised here, as goose-ls does for its own views: C0
;; and C1 controls (ESC starts terminal sequences; OSC 52 writes the clipboard), DEL,
;; carriage return (overwrites a line with a forged one), bidirectional controls
;; (reorder a line), zero-width and invisible characters (hide text), and the Unicode
;; line and paragraph separators are each shown as their escape (\x1b, \u202e).  A
;; zero-width joiner between two emoji stays.  A line of agent text that begins as the
;; chat's own lines do (a speaker's heading, a tool, permission or question line) is
;; led by a backslash, so it cannot pass for one of them.

;;; Code:

(require 'rx)
(require 'seq)

(defconst goose-ls--acting
  (rx (any (0 . 8) (11 . 31) (127 . 159) #xad #x61c #x180e (#x200b . #x200f)
           (#x2028 . #x202e) (#x2060 . #x2064) (#x2066 . #x2069) #xfeff))
  "What acts in a block of agent text: newline and tab do not.")

(defconst goose-ls--acting-on-a-line
  (rx (any (0 . 31) (127 . 159) #xad #x61c #x180e (#x200b . #x200f)
           (#x2028 . #x202e) (#x2060 . #x2064) (#x2066 . #x2069) #xfeff))
  "What acts on one line of agent text: newline and tab too.")

(defun goose-ls--emoji-p (char)
  "Whether CHAR is an emoji (or the emoji variation selector)."
  (or (>= char #x1f000) (<= #x2600 char #x27bf) (= char #xfe0f)))

(defun goose-ls--escaped (char)
  "CHAR as its visible escape."
  (pcase char
    (?\n "\\n") (?\t "\\t") (?\r "\\r")
    (_ (if (< char #x100) (format "\\x%02x" char) (format "\\u%04x" char)))))

(defun goose-ls--neutralise (text regexp)
  "TEXT with each character REGEXP matches shown as its escape."
  (let ((case-fold-search nil) (start 0) parts)
    (while (string-match regexp text start)
      (let* ((at (match-beginning 0)) (char (aref text at)))
        (push (substring text start at) parts)
        (push (if (and (= char #x200d) (> at 0) (< (1+ at) (length text))
                       (goose-ls--emoji-p (aref text (1- at)))
                       (goose-ls--emoji-p (aref text (1+ at))))
                  (string char) ; a joiner inside one emoji
                (goose-ls--escaped char))
              parts)
        (setq start (1+ at))))
    (push (substring text start) parts)
    (apply #'concat (nreverse parts))))

(defun goose-ls-inert (text)
  "A block of agent TEXT (a reply, an output) inert; newlines and tabs kept."
  (goose-ls--neutralise (format "%s" (or text "")) goose-ls--acting))

(defun goose-ls-inert-line (text)
  "One line of agent TEXT (a title, a label, a name) inert, newlines escaped too."
  (goose-ls--neutralise (format "%s" (or text "")) goose-ls--acting-on-a-line))

(defconst goose-ls--own-openers
  '("# " "🔧" "🔐" "❓" "📎" "🖼" "⚠" "💾" "_" "**Plan**" "> 💭" "> ⚠" "> 📋" "### 🤖")
  "How the chat's own lines begin; \"## <speaker>\" is checked apart.")

(defconst goose-ls--decides 200
  "How much of a line decides whether it imitates the chat's own.")

(defun goose-ls--as-shown (line)
  "LINE as markdown shows it: up to three spaces dropped, \">x\" read as \"> x\"."
  (when (string-match "\\` \\{0,3\\}" line)
    (setq line (substring line (match-end 0))))
  (if (and (string-prefix-p ">" line) (not (string-prefix-p "> " line)))
      (concat "> " (substring line 1))
    line))

(defun goose-ls--imitates-p (line speakers)
  "Whether LINE begins as the chat's own lines do; SPEAKERS head its turns."
  (let ((line (goose-ls--as-shown line)))
    (or (seq-some (lambda (opener) (string-prefix-p opener line)) goose-ls--own-openers)
        (and (string-prefix-p "## " line)
             (seq-some (lambda (speaker)
                         (and (> (length speaker) 0) (string-prefix-p speaker (substring line 3))))
                       speakers)))))

(defun goose-ls--inert-lines (text speakers)
  "TEXT's lines, each led by a backslash if it imitates the chat's own (SPEAKERS')."
  (mapconcat (lambda (line) (if (goose-ls--imitates-p line speakers) (concat "\\" line) line))
             (split-string text "\n") "\n"))

(provide 'goose-ls-inert)
;;; goose-ls-inert.el ends here
