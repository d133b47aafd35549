;;; goose-ls-disk.el --- Open files the agent changes on disk  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  While a turn runs, goose-ls watches the files open in Emacs.
;; When the agent writes one whose buffer has no unsaved changes, goose-ls brings the
;; buffer to the new text with one edit (`workspace/applyEdit' labelled "goose: changed
;; on disk": one undo takes it back), then tells `goose/diskSynced'.
;;
;; Emacs would question that edit: "File app.py changed on disk.  Reread from disk?"
;; (eglot finds the file's buffer with `find-file-noselect'), then "app.py changed on
;; disk; really edit the buffer?" (the buffer's first change since it was read, Emacs
;; 30), and eglot 1.9 asks "[eglot] Server wants to edit" unless
;; `eglot-confirm-server-initiated-edits' is nil.  For that edit alone, in the time it
;; is applied, none of these is asked: the edit goes ahead.  On `goose/diskSynced', a
;; buffer that holds what its file holds is marked saved, so `C-x C-s' has nothing to
;; write and asks nothing; one undo takes the edit back and leaves the buffer modified
;; (the file holds the agent's text).  Every other change to the buffer, the user's own
;; and any other server edit, meets Emacs's questions as ever.

;;; Code:

(require 'cl-lib)
(require 'url-util)
(require 'eglot)
(require 'goose-ls-server)

;; Special here: bound around goose-ls's own edit (the second is Emacs 30's name).
(defvar eglot-confirm-server-initiated-edits)
(defvar eglot-confirm-server-edits)

(defconst goose-ls--disk-label "goose: changed on disk"
  "The label of goose-ls's edit that brings a buffer to its file's new text.")

(defun goose-ls--file-of-uri (uri)
  "The file name of a file: URI, else nil."
  (when (string-prefix-p "file://" uri)
    (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)))

(cl-defmethod eglot-handle-request :around
  (server (_method (eql workspace/applyEdit)) &key label &allow-other-keys)
  "Apply goose-ls's edit of a buffer to its file's new text, asking nothing.
Any other edit, or another server's, is asked about as eglot and Emacs do."
  (if (not (and (goose-ls--goose-p server) (equal label goose-ls--disk-label)))
      (cl-call-next-method)
    ;; The buffer keeps the time it was read at: the undo of this edit makes it
    ;; modified again, the file holding the new text.  userlock.el is loaded first:
    ;; loaded meanwhile, it would define its question again.
    (autoload-do-load (symbol-function 'ask-user-about-supersession-threat)
                      'ask-user-about-supersession-threat)
    (cl-letf* ((find-file (symbol-function 'find-file-noselect))
               ((symbol-function 'find-file-noselect)
                (lambda (file &optional _nowarn &rest more)
                  (apply find-file file t more)))
               ((symbol-function 'ask-user-about-supersession-threat) #'ignore))
      (with-suppressed-warnings ((obsolete eglot-confirm-server-initiated-edits))
        (let ((eglot-confirm-server-initiated-edits nil)
              (eglot-confirm-server-edits nil))
          (cl-call-next-method))))))

(defun goose-ls--holds-file-p ()
  "Whether the current buffer holds exactly what its file holds."
  (let ((buffer (current-buffer))
        (coding buffer-file-coding-system)
        (file buffer-file-name))
    (and file (file-readable-p file)
         (save-restriction
           (widen)
           (with-temp-buffer
             (let ((coding-system-for-read coding))
               (insert-file-contents file))
             (and (= (buffer-size) (buffer-size buffer))
                  (zerop (let ((case-fold-search nil))
                           (compare-buffer-substrings
                            buffer nil nil (current-buffer) nil nil)))))))))

(cl-defmethod eglot-handle-notification (_server (_method (eql goose/diskSynced)) &key uri)
  "URI's buffer was brought to its file's text: marked saved if it holds it."
  (let* ((file (and (stringp uri) (goose-ls--file-of-uri uri)))
         (buffer (and file (find-buffer-visiting file))))
    (when buffer
      (with-current-buffer buffer
        (when (goose-ls--holds-file-p)
          (set-visited-file-modtime)
          (set-buffer-modified-p nil))))))

(provide 'goose-ls-disk)
;;; goose-ls-disk.el ends here
