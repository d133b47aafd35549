;;; flow.el --- drives goose-ls.el in Emacs batch mode; writes what it saw as JSON  -*- lexical-binding: t; -*-
;;
;; GOOSE_FLOW picks the flow: "ask" (the default: ask about the region after M-x eglot)
;; or "compose" (no M-x eglot; the keys, the compose buffer, a queued message, follow),
;; or "mention" (an @ mention completed in the compose buffer, then sent), or "option"
;; (after "ask", the option picker, answered with the lines GOOSE_PICK lists), or
;; "question" (the agent's questions, answered with the lines GOOSE_ANSWERS lists), or
;; "plans" (a turn of plans, a compaction, tool names and a title), or "subagents" (a
;; subagent's block, folded by TAB on its heading), or "subagents_resumed" (a subagent's
;; work in two sections, its parent's words between: TAB on each heading), or "steer" and
;; "steer_refused" (a queued message sent now into the running turn, or refused), or
;; "restart" (after "ask", C-c g r and C-u C-c g r), or "gap" (the chat buffer killed
;; while a reply streams), or "index_gap" (goose-ls killed mid-turn, the chat loaded
;; again in a new one and asked again), or "dir_locals" ("ask" in a project whose .dir-locals.el sets
;; `eglot-workspace-configuration'), or "image" (an image file attached in the compose
;; buffer, refused once and kept, then sent), or "fork" (two turns, then C-c C-f in the
;; chat).
(require 'json)
(require 'goose-ls)

(defvar flow--result nil)
(defvar flow--ended nil)

(defun flow--finish ()
  (with-temp-file (getenv "GOOSE_OUT")
    (insert (json-encode flow--result)))
  (kill-emacs 0))

(defun flow--record (key value)
  (push (cons key value) flow--result))

(defun flow--wait (predicate what)
  (let ((deadline (+ (float-time) 60)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate) (error "gave up waiting for %s" what))))

(defun flow--chat ()
  (goose-ls--chat goose-ls-current-session))

(defun flow--chat-text ()
  (with-current-buffer (flow--chat)
    (buffer-substring-no-properties (point-min) (point-max))))

(defun flow--answer-allow-once (request)
  "The package's own permission prompt, the user picking allow-once by its words."
  (let* ((options (append (plist-get request :options) nil))
         (once (seq-find (lambda (o) (equal (plist-get o :kind) "allow_once")) options)))
    (flow--record 'asked (plist-get (plist-get request :toolCall) :title))
    (flow--record 'sent (vconcat (mapcar (lambda (o) (plist-get o :label)) options)))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (flow--record 'prompt prompt)
                 (flow--record 'choices (vconcat (all-completions "" collection)))
                 ;; The choices are listed as the minibuffer opens, not after TAB.
                 (flow--record 'listed-at-once (if minibuffer-setup-hook t :json-false))
                 (plist-get once :label))))
      (goose-ls-ask-permission request))))

(defun flow--setup ()
  (setq goose-ls-command (append (json-parse-string (getenv "GOOSE_CMD")) nil))
  (setq goose-ls-initialization-options
        (json-parse-string (getenv "GOOSE_INIT") :object-type 'plist))
  (setq goose-ls-modes '(python-mode))
  (goose-ls-setup)
  (add-hook 'goose-ls-turn-end-hook (lambda (params) (push params flow--ended)))
  (flow--record 'emacs emacs-major-version))

(defun flow--ask ()
  "Ask about the region after M-x eglot."
  (setq goose-ls-permission-function #'flow--answer-allow-once)
  (find-file (getenv "GOOSE_FILE"))
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (flow--wait (lambda () (eglot-current-server)) "eglot to connect")
  (flow--record 'eglot (eglot--server-info (eglot-current-server)))
  (goose-ls-ask "What does this do?" (point-min) (point-max))
  (flow--wait (lambda () flow--ended) "the turn to end")
  (flow--record 'stop (or (plist-get (car flow--ended) :stopReason)
                          (plist-get (car flow--ended) :error)))
  (with-current-buffer (flow--chat)
    (flow--record 'text (buffer-substring-no-properties (point-min) (point-max)))
    ;; Each tool call's output: hidden at first, shown by TAB on its status line.
    (let (folds)
      (goto-char (point-min))
      (while (re-search-forward "^🔧 .*$" nil t)
        (let ((header (match-string-no-properties 0))
              (output (1+ (match-end 0))))
          (when (< output (point-max))
            (let ((before (if (invisible-p output) t :json-false)))
              (funcall (lookup-key (get-text-property (match-beginning 0) 'keymap) (kbd "TAB")))
              (push (vector header before (if (invisible-p output) t :json-false)) folds)))))
      (flow--record 'folds (vconcat (nreverse folds))))))

(defun flow--restart ()
  "Ask, then C-c g r and C-u C-c g r from the file's buffer: what the user is told."
  (flow--ask)
  (goose-ls-mode 1)
  (let (told)
    (cl-letf (((symbol-function 'message)
               (lambda (format &rest args)
                 (let ((said (and format (apply #'format-message format args))))
                   (when (and said (string-prefix-p "goose-ls: " said)) (push said told))))))
      (call-interactively (key-binding (kbd "C-c g r")))
      (let ((current-prefix-arg '(4)))
        (call-interactively (key-binding (kbd "C-c g r")))))
    (flow--record 'told (vconcat (nreverse told)))))

(defun flow--send-from-compose (text)
  "Type TEXT in the compose buffer and press C-c C-c there."
  (with-current-buffer (goose-ls--compose-buffer goose-ls-current-session)
    (goto-char (point-max))
    (insert text)
    (call-interactively (key-binding (kbd "C-c C-c")))))

(defun flow--face-at (text &optional property)
  "The face (or PROPERTY) of the first character of TEXT in the chat."
  (with-current-buffer (flow--chat)
    (goto-char (point-min))
    (if (search-forward text nil t)
        (format "%s" (get-text-property (match-beginning 0) (or property 'face)))
      "absent")))

(defun flow--compose ()
  "The keys, goose-ls started by a command, compose, a queued message, follow."
  (goose-ls-mode 1)
  ;; Every key of the command map, as the mode binds it (the docs list the same).
  (let (keys)
    (map-keymap (lambda (_event command)
                  (push (cons command (key-description
                                       (where-is-internal command goose-ls-mode-map t)))
                        keys))
                goose-ls-command-map)
    (flow--record 'keys keys))
  (find-file (getenv "GOOSE_FILE"))
  (python-mode)
  (flow--record 'server-before (if (eglot-current-server) t :json-false))
  ;; Before any M-x eglot: the command starts goose-ls for the project.
  (flow--record 'sessions-before (goose-ls-sessions))
  (flow--record 'server-after
                (plist-get (eglot--server-info (goose-ls--project-server (goose-ls--project)))
                           :name))
  (goose-ls-compose)
  ;; Two windows on the chat: one at its end, one scrolled up.
  (let* ((chat (flow--chat))
         (following (progn (delete-other-windows (get-buffer-window chat))
                           (get-buffer-window chat)))
         (scrolled (split-window following nil 'above)))
    (set-window-buffer scrolled chat)
    (set-window-point scrolled (with-current-buffer chat (point-min)))
    (set-window-point following (with-current-buffer chat (point-max)))
    (setq goose-ls-permission-function
          (lambda (request)
            ;; What the user sees as the question comes: the diff is drawn.
            (flow--record 'chat-when-asked (flow--chat-text))
            ;; A second message while the turn runs, then a draft left unsent.
            (flow--record 'second-result
                          (flow--send-from-compose (getenv "GOOSE_SECOND")))
            (flow--record 'queue-shown (flow--chat-text))
            (flow--record 'state-when-queued
                          (with-current-buffer chat (goose-ls--state-string)))
            (with-current-buffer (goose-ls--compose-buffer goose-ls-current-session)
              (insert "my draft, not sent"))
            (flow--answer-allow-once request)))
    (flow--send-from-compose (getenv "GOOSE_MESSAGE"))
    (flow--wait (lambda () (= (length flow--ended) 2)) "both turns to end")
    (with-current-buffer chat
      (flow--record 'text (buffer-substring-no-properties (point-min) (point-max)))
      (flow--record 'state-after (goose-ls--state-string))
      (flow--record 'read-only (if buffer-read-only t :json-false))
      (flow--record 'typing-goes-to (format "%s" (key-binding "x")))
      (flow--record 'following (if (= (window-point following) (point-max)) t :json-false))
      (flow--record 'scrolled (if (= (window-point scrolled) (point-min)) t :json-false))
      (font-lock-ensure))
    (flow--record 'draft (with-current-buffer (goose-ls--compose-buffer goose-ls-current-session)
                           (buffer-string)))
    (flow--record 'faces
                  (list (cons 'heading (flow--face-at "## You"))
                        (cons 'code (flow--face-at "print(1)"))
                        (cons 'comment-in-code (flow--face-at "# not a heading"))
                        (cons 'added (flow--face-at "line ten" 'font-lock-face))
                        (cons 'removed (flow--face-at "line 10" 'font-lock-face))))
    ;; The sessions now: the chat is listed.
    (flow--record 'sessions-after
                  (catch 'listed
                    (cl-letf (((symbol-function 'completing-read)
                               (lambda (_prompt collection &rest _)
                                 (throw 'listed (vconcat (all-completions "" collection))))))
                      (goose-ls-sessions))))))

(defun flow--mention ()
  "An @ mention completed in the compose buffer, then sent."
  (find-file (getenv "GOOSE_FILE"))
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (flow--wait (lambda () (eglot-current-server)) "eglot to connect")
  ;; The last region in app.py: its two lines.
  (goto-char (point-min))
  (push-mark (point) t)
  (forward-line 1)
  (end-of-line)
  (let ((source (current-buffer)))
    (goose-ls-compose)
    (cl-letf (((symbol-function 'flymake-diagnostics)
               (lambda (&rest _)
                 (with-current-buffer source
                   (list (flymake-make-diagnostic source (line-beginning-position) (point)
                                                  :warning "x is never used"))))))
      (flow--mention-compose))))

(defun flow--mention-compose ()
  (with-current-buffer (window-buffer (selected-window))
    (insert "compare @ap")
    (completion-at-point)
    (flow--record 'completed (buffer-substring-no-properties (point-min) (point-max)))
    (erase-buffer)
    (insert "mail me@ap")
    (flow--record 'in-word (if (goose-ls--complete-mention) t :json-false))
    (erase-buffer)
    (insert "compare @s")
    (flow--record 'specials (vconcat (all-completions "s" (nth 2 (goose-ls--complete-mention)))))
    (erase-buffer)
    (insert "/com")
    (completion-at-point)
    (flow--record 'slash (buffer-substring-no-properties (point-min) (point-max)))
    (erase-buffer)
    (insert "compare @app.py, @selection and @diagnostics")
    (goose-ls-compose-send))
  (flow--wait (lambda () flow--ended) "the turn to end"))

(defun flow--image ()
  "Attach notes.png (no PNG) and send: refused, the message and the image stay.
Then, notes.png taken out, attach docs/shot.png and send the message again."
  (find-file (getenv "GOOSE_FILE"))
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (flow--wait (lambda () (eglot-current-server)) "eglot to connect")
  (goose-ls-compose)
  (with-current-buffer (window-buffer (selected-window))
    (goose-ls-attach-image "notes.png")
    (insert "What is in it?")
    (flow--record 'refused (condition-case err
                               (progn (goose-ls-compose-send) "sent")
                             (error (error-message-string err))))
    (flow--record 'kept (buffer-substring-no-properties (point-min) (point-max)))
    (flow--record 'attached (goose-ls--attached-line))
    (setq goose-ls--attached nil)
    (goose-ls-attach-image "docs/shot.png")
    (goose-ls-compose-send))
  (flow--wait (lambda () flow--ended) "the turn to end")
  (flow--record 'chat (flow--chat-text)))

(defun flow--option ()
  "Ask, then set options through the picker: each two GOOSE_PICK lines, option and value."
  (flow--ask)
  (let ((picks (append (json-parse-string (getenv "GOOSE_PICK")) nil))
        (pickers nil))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt table &rest _)
                 (let* ((lines (all-completions "" table))
                        (group (cdr (assq 'group-function
                                          (cdr (funcall table "" nil 'metadata))))))
                   (push (list :prompt prompt :items (vconcat lines)
                               :groups (vconcat (and group
                                                     (mapcar (lambda (l) (funcall group l nil))
                                                             lines))))
                         pickers))
                 (pop picks))))
      (with-current-buffer (flow--chat)
        (while picks (goose-ls-set-option))))
    (flow--record 'pickers (vconcat (nreverse pickers)))))

(defun flow--question ()
  "The agent's questions, answered from GOOSE_ANSWERS as a person picks and types.
Each prompt is recorded with what it offered; `browse-url' records the page."
  (let ((answers (append (json-parse-string (getenv "GOOSE_ANSWERS")) nil))
        (asked nil)
        (opened nil))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt table &rest _)
                 (push (list :prompt prompt :items (vconcat (all-completions "" table))) asked)
                 (pop answers)))
              ((symbol-function 'completing-read-multiple)
               (lambda (prompt table &rest _)
                 (push (list :prompt prompt :items (vconcat (all-completions "" table))) asked)
                 (split-string (pop answers) "," t)))
              ((symbol-function 'read-string)
               (lambda (prompt &rest _)
                 (push (list :prompt prompt) asked)
                 (pop answers)))
              ((symbol-function 'browse-url) (lambda (url &rest _) (push url opened))))
      (find-file (getenv "GOOSE_FILE"))
      (goose-ls-send "Ask me")
      (flow--wait (lambda () flow--ended) "the turn to end"))
    (flow--record 'questions (vconcat (nreverse asked)))
    (flow--record 'opened (vconcat (nreverse opened)))
    (flow--record 'text (flow--chat-text))))

(defun flow--plans ()
  "A turn of plans, a compaction, tool names and a title."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "Plan it")
  (flow--wait (lambda () flow--ended) "the turn to end")
  (flow--record 'text (flow--chat-text))
  (flow--record 'name (buffer-name (flow--chat))))

(defun flow--subagents ()
  "A turn in which the agent runs a subagent: its block, folded and unfolded by TAB
on its heading."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "Count with a subagent")
  (flow--wait (lambda () flow--ended) "the turn to end")
  (flow--record 'text (flow--chat-text))
  (with-current-buffer (flow--chat)
    (let* ((heading (progn (goto-char (point-min))
                           (search-forward "### 🤖 Subagent (")
                           (line-beginning-position)))
           (inside (progn (search-forward "There are 3 files.") (match-beginning 0)))
           (after (progn (search-forward "The subagent counted 3.") (match-beginning 0)))
           (tab (lambda () (goto-char heading)
                  (funcall (lookup-key (get-text-property heading 'keymap) (kbd "TAB")))))
           (seen (lambda () (vector (if (invisible-p heading) t :json-false)
                                    (if (invisible-p inside) t :json-false)
                                    (if (invisible-p after) t :json-false)))))
      (flow--record 'before (funcall seen))
      (funcall tab)
      (flow--record 'folded (funcall seen))
      (funcall tab)
      (flow--record 'unfolded (funcall seen)))))

(defun flow--subagents-resumed ()
  "A turn in which the parent speaks while its subagent works: for each subagent
heading in order, which of the texts GOOSE_PROBES lists TAB on it hides (a text
hidden in part reads \"partly\")."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "Make notes with a subagent")
  (flow--wait (lambda () flow--ended) "the turn to end")
  (flow--record 'text (flow--chat-text))
  (with-current-buffer (flow--chat)
    (let* ((spots (mapcar (lambda (probe)
                            (goto-char (point-min))
                            (search-forward probe)
                            (cons (match-beginning 0) (1- (match-end 0))))
                          (json-read-from-string (getenv "GOOSE_PROBES"))))
           ;; Hidden whole, shown whole, or "partly".
           (seen (lambda ()
                   (vconcat (mapcar (lambda (spot)
                                      (let ((first (invisible-p (car spot)))
                                            (last (invisible-p (cdr spot))))
                                        (cond ((and first last) t)
                                              ((or first last) "partly")
                                              (t :json-false))))
                                    spots))))
           (headings nil))
      (goto-char (point-min))
      (while (search-forward "### 🤖 Subagent (" nil t)
        (push (line-beginning-position) headings))
      (flow--record 'before (funcall seen))
      (flow--record
       'folded
       (vconcat
        (mapcar (lambda (heading)
                  (let ((tab (lambda ()
                               (goto-char heading)
                               (funcall (lookup-key (get-text-property heading 'keymap)
                                                    (kbd "TAB"))))))
                    (funcall tab)
                    (prog1 (funcall seen) (funcall tab))))
                (nreverse headings))))
      (flow--record 'after (funcall seen)))))

(defun flow--steer (refused)
  "A message queued while a turn runs, then sent now with C-c C-j in the compose buffer.
When REFUSED, the agent cannot take it: the turn is cancelled after."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "Refactor the parser")
  (flow--wait (lambda () (string-match-p "Working on it\\." (flow--chat-text))) "the turn under way")
  (let ((chat (flow--chat)))
    (goose-ls-send "Keep the old name as an alias")
    (flow--record 'queue-shown (flow--chat-text))
    (with-current-buffer (goose-ls--compose-buffer goose-ls-current-session)
      (condition-case err
          (call-interactively (key-binding (kbd "C-c C-j")))
        (error (flow--record 'refused (error-message-string err)))))
    (flow--record 'queued-after (length (buffer-local-value 'goose-ls--queued chat)))
    (when refused (goose-ls-cancel))
    (flow--wait (lambda () (= (length flow--ended) 2)) "both turns to end")
    (flow--record 'text (flow--chat-text))
    (flow--record 'queued (length (buffer-local-value 'goose-ls--queued chat)))
    (flow--record 'state (string-trim (goose-ls--state-string chat)))))

(defun flow--gap ()
  "The chat buffer killed while a reply streams: the chat that the next event opens
again shows the whole turn, the question too."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "Tell me")
  (let ((session goose-ls-current-session))
    (flow--wait (lambda () (string-match-p "part3 " (flow--chat-text))) "the reply under way")
    (kill-buffer (flow--chat))
    (flow--wait (lambda () flow--ended) "the turn to end")
    (flow--record 'text (with-current-buffer (goose-ls--chat session)
                          (buffer-substring-no-properties (point-min) (point-max))))))

(defun flow--index-gap ()
  "A turn, then one in which the agent kills goose-ls: goose-ls started again, the
chat loaded in it and asked again, what the chat shows once that turn ended."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "first question")
  (flow--wait (lambda () flow--ended) "the first turn to end")
  (let ((server (goose-ls--project-server (goose-ls--project)))
        (session goose-ls-current-session))
    (goose-ls-send "die now")
    (flow--wait (lambda () (not (jsonrpc-running-p server))) "goose-ls to be killed")
    (setq flow--ended nil)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &rest _) (car (all-completions "" collection)))))
      (goose-ls-sessions))
    (flow--record 'same-chat (if (equal session goose-ls-current-session) t :json-false))
    (goose-ls-send "after the gap?")
    (flow--wait (lambda () flow--ended) "the turn after the gap to end")
    (flow--record 'text (flow--chat-text))
    (flow--record 'state (string-trim (goose-ls--state-string (flow--chat))))))

(defun flow--dir-locals ()
  "Ask after M-x eglot in a project whose .dir-locals.el (written by the test)
sets `eglot-workspace-configuration'; record what goose-ls said of it."
  (let (shown)
    (cl-letf (((symbol-function 'eglot--message)
               (lambda (format &rest args) (push (apply #'format format args) shown))))
      (flow--ask))
    (flow--record 'shown (vconcat shown))))

(defun flow--fork ()
  "Two turns, then C-c C-f in the chat: on its first line (in no turn), on a third
turn still running, then on the first turn's reply.  What the new chat and its compose buffer show, and what was said."
  (find-file (getenv "GOOSE_FILE"))
  (goose-ls-send "first question")
  (flow--wait (lambda () (= (length flow--ended) 1)) "the first turn to end")
  (goose-ls-send "second question")
  (flow--wait (lambda () (= (length flow--ended) 2)) "the second turn to end")
  (let ((source goose-ls-current-session)
        (said nil))
    (cl-letf (((symbol-function 'message)
               (lambda (format &rest args)
                 (when format (push (apply #'format-message format args) said)))))
      (with-current-buffer (flow--chat)
        (goto-char (point-min))
        (condition-case err
            (call-interactively (key-binding (kbd "C-c C-f")))
          (user-error (flow--record 'refused (error-message-string err))))
        ;; A third turn, still running (it waits for a cancel).
        (goose-ls-send "third question")
        (flow--wait (lambda () (string-match-p "Working on it\\." (flow--chat-text))) "the third turn")
        (goto-char (point-max))
        (search-backward "Working on it.")
        (condition-case err
            (call-interactively (key-binding (kbd "C-c C-f")))
          (user-error (flow--record 'running (error-message-string err))))
        (goose-ls-cancel)
        (flow--wait (lambda () (= (length flow--ended) 3)) "the third turn to end")
        (goto-char (point-min))
        (search-forward "First answer.")
        (call-interactively (key-binding (kbd "C-c C-f")))))
    (flow--record 'said (vconcat (nreverse said)))
    (flow--record 'source source)
    (flow--record 'session goose-ls-current-session)
    (flow--record 'text (flow--chat-text))
    (flow--record 'compose (with-current-buffer (goose-ls--compose-buffer goose-ls-current-session)
                             (buffer-string)))
    (flow--record 'selected (buffer-name (window-buffer (selected-window))))))

(condition-case err
    (progn
      (flow--setup)
      (pcase (getenv "GOOSE_FLOW")
        ("compose" (flow--compose))
        ("mention" (flow--mention))
        ("option" (flow--option))
        ("question" (flow--question))
        ("plans" (flow--plans))
        ("subagents" (flow--subagents))
        ("subagents_resumed" (flow--subagents-resumed))
        ("steer" (flow--steer nil))
        ("steer_refused" (flow--steer t))
        ("restart" (flow--restart))
        ("gap" (flow--gap))
        ("index_gap" (flow--index-gap))
        ("dir_locals" (flow--dir-locals))
        ("image" (flow--image))
        ("fork" (flow--fork))
        (_ (flow--ask))))
  (error
   (flow--record 'error (error-message-string err))
   ;; What was seen so far, to tell a hang from a slow run.
   (ignore-errors (flow--record 'chat (flow--chat-text)))
   (ignore-errors
     (with-current-buffer (jsonrpc-events-buffer
                           (or (eglot-current-server) (goose-ls--project-server (goose-ls--project))))
       (flow--record 'events (buffer-substring-no-properties
                              (max (point-min) (- (point-max) 6000)) (point-max)))))))
(flow--finish)
