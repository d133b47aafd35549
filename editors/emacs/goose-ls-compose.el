;;; goose-ls-compose.el --- The compose buffer: writing and sending a message to a goose chat  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  Under each chat, a compose buffer to write in, as many lines as
;; wanted: C-c C-c sends, M-p and M-n go through the messages sent, and
;; `completion-at-point' completes an `@file' mention or the agent's slash commands.
;; `@selection' and `@diagnostics' name the region and the flymake diagnostics of the
;; file buffer the compose buffer was opened from.  Typing in the chat writes here.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'flymake)
(require 'goose-ls-chat)
(require 'goose-ls-sessions)

(defcustom goose-ls-compose-height 6
  "Height in lines of the compose window under a chat."
  :type 'integer
  :group 'goose-ls)

(defvar-local goose-ls--compose nil
  "The compose buffer of this chat.")

(defvar goose-ls--history nil
  "Messages sent from compose buffers, newest first.")

(defvar-local goose-ls--history-position -1)

(defvar-local goose-ls--attached nil
  "Image files attached to the next message of this compose buffer.
Context items, dropped once goose-ls has accepted the message, kept when it
refuses it.")

(defvar goose-ls--source nil
  "The file buffer a compose buffer was last opened from, and its region's lines.
They are what `@selection' and `@diagnostics' in a message name.")

(defvar goose-ls-compose-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'goose-ls-compose-send)
    (define-key map (kbd "C-c C-k") #'goose-ls-cancel)
    (define-key map (kbd "C-c C-j") #'goose-ls-send-now)
    (define-key map (kbd "C-c C-p") #'goose-ls-answer-permission)
    (define-key map (kbd "C-c C-a") #'goose-ls-attach-image)
    (define-key map (kbd "M-p") #'goose-ls-compose-previous)
    (define-key map (kbd "M-n") #'goose-ls-compose-next)
    map)
  "Keys of a compose buffer.")

(define-derived-mode goose-ls-compose-mode text-mode "goose compose"
  "Write a message to a goose chat; \\[goose-ls-compose-send] sends it.
\\{goose-ls-compose-mode-map}"
  (setq mode-line-process '(:eval (goose-ls--state-string)))
  (setq header-line-format
        (list (substitute-command-keys
               "\\<goose-ls-compose-mode-map>\\[goose-ls-compose-send] send · \\[goose-ls-attach-image] attach an image · \\[goose-ls-send-now] send a queued one now · \\[goose-ls-cancel] cancel the turn · \\[goose-ls-compose-previous]/\\[goose-ls-compose-next] history")
              '(:eval (goose-ls--attached-line))))
  (add-hook 'completion-at-point-functions #'goose-ls--complete-mention nil t)
  (add-hook 'completion-at-point-functions #'goose-ls--complete-command nil t)
  (visual-line-mode 1))

(defun goose-ls--complete-command ()
  "Complete the agent's slash command a message starts with (\\[completion-at-point])."
  (when (and goose-ls--session (looking-back "\\`/\\([[:alnum:]_-]*\\)" (point-min)))
    (let ((start (match-beginning 1))
          (commands (with-current-buffer (goose-ls--chat goose-ls--session) goose-ls--commands)))
      (list start (point)
            (mapcar (lambda (command) (plist-get command :name)) commands)
            :annotation-function
            (lambda (name)
              (let ((found (seq-find (lambda (c) (equal (plist-get c :name) name)) commands)))
                (when found (concat "  " (plist-get found :description)))))
            :exclusive 'no))))

(defun goose-ls--complete-mention ()
  "Complete the `@file' mention before point (\\[completion-at-point]).
The workspace files goose-ls finds for what follows the @, open buffers
first; goose-ls attaches each @path of the message when it is sent."
  (when (looking-back "\\(?:^\\|[^[:alnum:]@/]\\)@\\([[:alnum:]._~+/-]*\\)" (line-beginning-position))
    (let ((start (match-beginning 1))
          (server goose-ls--chat-server))
      (list start (point)
            (completion-table-dynamic
             (lambda (typed)
               (append (and (buffer-live-p (car goose-ls--source))
                            (seq-filter (lambda (word) (string-prefix-p typed word))
                                        '("selection" "diagnostics")))
                       (plist-get (goose-ls--request :goose/findFiles (list :query typed) server)
                                  :files)
                       nil)))
            :exclusive 'no))))

(defun goose-ls--compose-buffer (session)
  (let ((chat (goose-ls--chat session)))
    (with-current-buffer chat
      (unless (buffer-live-p goose-ls--compose)
        (let ((server goose-ls--chat-server))
          (setq goose-ls--compose (get-buffer-create (format "*goose compose: %s*" session)))
          (with-current-buffer goose-ls--compose
            (goose-ls-compose-mode)
            (setq goose-ls--session session
                  goose-ls--chat-server server))))
      goose-ls--compose)))

(defun goose-ls--remember-source ()
  "Keep the current buffer (when it visits a file) as the source of mentions."
  (when buffer-file-name
    (setq goose-ls--source
          (list (current-buffer)
                (and (mark t)
                     (cons (line-number-at-pos (region-beginning))
                           (line-number-at-pos (region-end))))))))

(defun goose-ls--mentioned (text)
  "Context items for `@selection' and `@diagnostics' in TEXT.
They come from `goose-ls--source'; goose-ls attaches each @path itself."
  (let* ((buffer (car goose-ls--source))
         (lines (cadr goose-ls--source))
         (items nil))
    (when (buffer-live-p buffer)
      (let ((uri (concat "file://" (buffer-file-name buffer)))
            (named (lambda (word)
                     (string-match-p (format "\\(?:^\\|[^[:alnum:]@/]\\)@%s\\_>" word) text))))
        (when (and lines (funcall named "selection"))
          (push (list :type "selection" :uri uri :startLine (car lines) :endLine (cdr lines)) items))
        (when (funcall named "diagnostics")
          (let ((found (with-current-buffer buffer
                         (mapcar (lambda (d)
                                   (format "%s:%d: %s: %s"
                                           (file-name-nondirectory (buffer-file-name buffer))
                                           (line-number-at-pos (flymake-diagnostic-beg d))
                                           (string-remove-prefix
                                            ":" (format "%s" (flymake-diagnostic-type d)))
                                           (flymake-diagnostic-text d)))
                                 (and (fboundp 'flymake-diagnostics) (flymake-diagnostics))))))
            (when found
              (push (list :type "text" :text (concat "Diagnostics:\n" (string-join found "\n")))
                    items))))))
    (nreverse items)))

;;;###autoload
(defun goose-ls-compose (&optional session)
  "Write a message to SESSION (default: the current chat).
In a buffer under its chat."
  (interactive)
  (goose-ls--remember-source)
  (let* ((session (or session (goose-ls--session)))
         (compose (goose-ls--compose-buffer session))
         (chat-window (goose-ls-show-chat session))
         (window (or (get-buffer-window compose)
                     (display-buffer compose
                                     `((display-buffer-reuse-window display-buffer-in-direction)
                                       (direction . below) (window . ,chat-window)
                                       (window-height . ,goose-ls-compose-height))))))
    (setq goose-ls-current-session session)
    (when window (select-window window))
    compose))

(defun goose-ls--attached-line ()
  "The images attached to the next message, for the header line."
  (if goose-ls--attached
      (concat " · 📎 "
              (string-replace
               "%" "%%" (mapconcat (lambda (item) (file-name-nondirectory (plist-get item :uri)))
                                   goose-ls--attached ", ")))
    ""))

(defun goose-ls--image-file-p (name)
  "Whether `read-file-name' offers NAME: a folder, or an image file's name."
  (or (file-directory-p name)
      (string-match-p "\\.\\(?:png\\|jpe?g\\|gif\\|webp\\)\\'" (downcase name))))

;;;###autoload
(defun goose-ls-attach-image (file)
  "Attach the image FILE to the next message of the compose buffer.
goose-ls reads it when the message is sent and sends the image itself, to an
agent that takes images; when it refuses it (an agent that takes none, a file
outside the workspace or a secret, a .png that is no PNG), the message and the
image stay for another try."
  (interactive (list (read-file-name "Image to attach: " nil nil t nil #'goose-ls--image-file-p)))
  (let ((compose (if (derived-mode-p 'goose-ls-compose-mode) (current-buffer) (goose-ls-compose)))
        (path (expand-file-name file)))
    (unless (file-regular-p path)
      (user-error "No file %s" file))
    (with-current-buffer compose
      (setq goose-ls--attached
            (append goose-ls--attached (list (list :type "image" :uri (goose-ls--uri path)))))
      (force-mode-line-update))
    (message "goose-ls: image %s attached to the next message" (file-name-nondirectory path))))

(defun goose-ls-chat-type ()
  "Typing in a chat writes in its compose buffer."
  (interactive)
  (let ((compose (goose-ls-compose goose-ls--session)))
    (with-current-buffer compose
      (goto-char (point-max))
      (self-insert-command 1))))

(defun goose-ls-compose-send ()
  "Send what this compose buffer holds.
A message sent during a turn waits, shown as queued."
  (interactive)
  (let ((text (string-trim (buffer-substring-no-properties (point-min) (point-max)))))
    (when (string-empty-p text)
      (user-error "Nothing to send"))
    ;; Emptied first: what is typed while the request goes is the next draft.
    (erase-buffer)
    (push text goose-ls--history)
    (setq goose-ls--history-position -1)
    (condition-case err
        (prog1 (goose-ls--prompt text (append goose-ls--attached (goose-ls--mentioned text))
                                 goose-ls--session)
          (setq goose-ls--attached nil)
          (force-mode-line-update))
      ;; Refused (an image goose-ls may not send): the message and its images stay.
      (error (goto-char (point-min))
             (insert text)
             (signal (car err) (cdr err))))))

(defun goose-ls-compose-previous (count)
  "Replace the draft with the COUNTth earlier message sent."
  (interactive "p")
  (let ((position (max -1 (min (1- (length goose-ls--history)) (+ goose-ls--history-position count)))))
    (setq goose-ls--history-position position)
    (erase-buffer)
    (when (>= position 0) (insert (nth position goose-ls--history)))))

(defun goose-ls-compose-next (count)
  "Replace the draft with the COUNTth later message sent."
  (interactive "p")
  (goose-ls-compose-previous (- count)))

(provide 'goose-ls-compose)
;;; goose-ls-compose.el ends here
