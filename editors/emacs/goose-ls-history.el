;;; goose-ls-history.el --- Past chats: found by a phrase, exported as markdown  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  `goose-ls-search' finds a phrase in every chat goose-ls has
;; kept (goose/searchSessions: the journal, not the agent) and opens the chat picked at
;; the message; `goose-ls-export' writes a chat as plain markdown into the workspace
;; (the command goose.exportChat) and opens the file.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'goose-ls-server)
(require 'goose-ls-chat)
(require 'goose-ls-sessions)

(defun goose-ls--search-choices (results)
  "The goose/searchSessions RESULTS as choices: (line . result), in their order.
A line has the age, the chat's title, what the message is and the snippet."
  (let ((seen (make-hash-table :test #'equal)))
    (mapcar (lambda (result)
              (let* ((kind (plist-get result :kind))
                     (snippet (plist-get result :snippet))
                     (line (concat (goose-ls--age (plist-get result :at)) "  ·  "
                                   (plist-get result :title)
                                   (if (or (null snippet) (string-empty-p snippet))
                                       ""
                                     (format "  ·  %s: %s"
                                             (pcase kind ("user" "you") ("agent" "reply")
                                                    (_ kind))
                                             snippet)))))
                (when (gethash line seen)
                  (setq line (format "%s  ·  %s #%s" line (plist-get result :sessionId)
                                     (plist-get result :index))))
                (puthash line t seen)
                (cons line result)))
            results)))

;;;###autoload
(defun goose-ls-search (query)
  "Find QUERY in the chats goose-ls has kept, pick one, and open it there.
Every workspace's chats are searched, newest message first; an empty QUERY
lists the latest chats.  The chat opens as from `goose-ls-sessions', its
window at the message found."
  (interactive (list (read-string "Search goose chats: ")))
  (let* ((server (goose-ls--server))
         (results (append (plist-get (goose-ls--request :goose/searchSessions
                                                        (list :query query :limit 100)
                                                        server)
                                     :results)
                          nil)))
    (if (null results)
        (message "goose-ls: no chat holds \"%s\"" query)
      (let* ((choices (goose-ls--search-choices results))
             (hit (cdr (assoc (completing-read "Open the chat at: " (goose-ls--in-order choices)
                                               nil t)
                              choices)))
             (session (plist-get hit :sessionId)))
        (goose-ls--open-session session server)
        (goose-ls--show-index session (plist-get hit :index))))))

(defun goose-ls--show-index (session index)
  "Show SESSION's chat with the message that starts at INDEX at the window's top."
  (let* ((chat (goose-ls--chat session))
         (window (or (get-buffer-window chat) (display-buffer chat)))
         (position (and index (> index 0)
                        (with-current-buffer chat (goose-ls--index-position index)))))
    (when (and window position)
      (set-window-point window position)
      (set-window-start window (with-current-buffer chat
                                 (save-excursion (goto-char position) (line-beginning-position)))))))

(defun goose-ls--file-slug (title)
  "TITLE as part of a file name: lower-case words joined by -."
  (let ((words (string-trim (replace-regexp-in-string "[^a-z0-9_]+" "-" (downcase title)) "-+" "-+")))
    (if (string-empty-p words)
        "chat"
      (string-trim-right (substring words 0 (min 40 (length words))) "-+"))))

;;;###autoload
(defun goose-ls-export (file)
  "Write this chat (or the current one) as markdown to FILE, then open FILE.
FILE is in the workspace (goose-ls refuses a path outside it); the default is
goose-chat-<title>-<date>.md at its top.  The markdown holds the conversation,
as goose-ls journaled it: the messages, tool calls and decisions."
  (interactive
   (let* ((session (or goose-ls--session goose-ls-current-session
                       (user-error "goose-ls: no chat to export yet")))
          (server (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session)))
          (root (file-name-as-directory (goose-ls--server-root server)))
          (title (or (seq-some (lambda (s) (and (equal (plist-get s :sessionId) session)
                                                (plist-get s :title)))
                               (plist-get (goose-ls--request :goose/status nil server) :sessions))
                     "chat"))
          (name (format "goose-chat-%s-%s.md" (goose-ls--file-slug title)
                        (format-time-string "%Y-%m-%d"))))
     (list (read-file-name "Export the chat to: " root (expand-file-name name root) nil name))))
  (let* ((session (or goose-ls--session goose-ls-current-session
                      (user-error "goose-ls: no chat to export yet")))
         (server (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session)))
         (root (file-name-as-directory (goose-ls--server-root server)))
         (file (expand-file-name file root))
         (asked (floor (float-time))))
    (goose-ls--request :workspace/executeCommand
                       (list :command "goose.exportChat"
                             :arguments (vector session (file-relative-name file root)))
                       server)
    ;; A refused export (a path outside the workspace) answers as a success: goose-ls
    ;; says why in a message of its own, and writes nothing.
    (let ((written (file-attribute-modification-time (file-attributes file))))
      (when (and written (>= (float-time written) asked))
        (find-file file)
        (message "goose-ls: the chat was exported to %s" (abbreviate-file-name file))))))

(provide 'goose-ls-history)
;;; goose-ls-history.el ends here
