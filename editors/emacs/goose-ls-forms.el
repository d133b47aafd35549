;;; goose-ls-forms.el --- The agent's questions, asked in the minibuffer  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  An `elicitation_request' asks the user a form, field by field:
;; `completing-read' for a choice or yes/no, `completing-read-multiple' for several
;; choices, `read-string' for text and numbers (checked, and asked again when wrong).
;; Or it offers to open a page with `browse-url'.  Decline and cancel are always
;; offered, \\[keyboard-quit] in any prompt cancels, and only what the user gave is
;; sent: never a made-up value.  A question closed elsewhere (`elicitation_resolved')
;; is dropped; an answer finished after that is not sent.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'browse-url)
(require 'goose-ls-chat)
(require 'goose-ls-inert)

(declare-function goose-ls--show-choices "goose-ls-permissions")

(defvar goose-ls--questions (make-hash-table :test #'equal)
  "requestId -> (session . the elicitation_request), while the question waits.")

(defvar goose-ls--answered-here (make-hash-table :test #'equal)
  "requestId -> t for a question answered from this Emacs.")

(defun goose-ls--question-waiting-p (session)
  "Whether a question of SESSION waits for the user."
  (let (found)
    (maphash (lambda (_ entry) (when (equal (car entry) session) (setq found t)))
             goose-ls--questions)
    found))

(defun goose-ls--choose (prompt choices &optional default)
  "Read one of CHOICES (strings, in their order) after PROMPT, listed at once."
  (minibuffer-with-setup-hook #'goose-ls--show-choices
    (completing-read prompt (goose-ls--in-order choices) nil t nil nil default)))

(defun goose-ls--field-choices (prop)
  "PROP's choices as (label . value): its enum or titled oneOf (its items' for a
list), yes and no for a boolean; nil for a value typed in."
  (let* ((list-p (equal (plist-get prop :type) "array"))
         (source (if list-p (plist-get prop :items) prop))
         (enum (plist-get source :enum))
         (titled (or (plist-get source :oneOf) (plist-get source :anyOf))))
    (cond ((equal (plist-get prop :type) "boolean") '(("yes" . t) ("no" . :json-false)))
          (enum (let ((names (append (plist-get source :enumNames) nil)))
                  (seq-map-indexed (lambda (value i) (cons (goose-ls-inert-line (format "%s" (or (nth i names) value)))
                                                              value))
                                   (append enum nil))))
          (titled (mapcar (lambda (item) (cons (goose-ls-inert-line
                                                (format "%s" (or (plist-get item :title)
                                                                 (plist-get item :const))))
                                               (plist-get item :const)))
                          (append titled nil))))))

(defun goose-ls--field-askable-p (prop)
  "Whether this package can ask PROP: text, a number, a choice or several."
  (pcase (plist-get prop :type)
    ((or "string" "number" "integer") t)
    ((or "boolean" "array") (and (goose-ls--field-choices prop) t))))

(defun goose-ls--field-number (prop text)
  "TEXT as PROP's number, or nil when it is not one."
  (let ((integer (equal (plist-get prop :type) "integer"))
        (text (string-trim text)))
    (when (string-match-p (if integer "\\`[-+]?[0-9]+\\'"
                            "\\`[-+]?\\([0-9]+\\.?[0-9]*\\|\\.[0-9]+\\)\\([eE][-+]?[0-9]+\\)?\\'")
                          text)
      (if integer (string-to-number text) (float (string-to-number text))))))

(defun goose-ls--ask-field (name prop required)
  "Ask field NAME of PROP; (value) with what the user gave, or nil to leave it out.
REQUIRED fields cannot be left out.  A quit goes up as a quit."
  (let* ((title (format "%s%s%s" (goose-ls-inert-line (or (plist-get prop :title) name))
                        (if (plist-get prop :description)
                            (format " (%s)" (goose-ls-inert-line (plist-get prop :description)))
                          "")
                        (if required "" ", optional")))
         (default (plist-get prop :default))
         (choices (goose-ls--field-choices prop))
         (skip "(leave it out)"))
    (cond
     ((equal (plist-get prop :type) "array")
      (let ((picked (completing-read-multiple
                     (format "%s (%s; several with ,): " title
                             (string-join (mapcar #'car choices) " / "))
                     (mapcar #'car choices) nil t)))
        (when (or picked required)
          (list (vconcat (mapcar (lambda (label) (cdr (assoc label choices))) picked))))))
     (choices
      (let* ((labels (append (mapcar #'car choices) (unless required (list skip))))
             (fallback (car (rassoc default choices)))
             (answer "")
             (prompt (format "%s (%s): " title (string-join labels " / "))))
        (while (equal answer "")
          (setq answer (goose-ls--choose prompt labels fallback))
          (when (and (equal answer "") (not required)) (setq answer skip)))
        (unless (equal answer skip) (list (cdr (assoc answer choices))))))
     (t
      (let ((problem nil) (value nil) (done nil))
        (while (not done)
          (let ((text (read-string (format "%s%s: " title (if problem (format " — %s" problem) ""))
                                   (and default (format "%s" default)))))
            (cond ((equal text "")
                   (if required (setq problem "required") (setq done t)))
                  ((equal (plist-get prop :type) "string")
                   (setq value (list text) done t))
                  ((goose-ls--field-number prop text)
                   (setq value (list (goose-ls--field-number prop text)) done t))
                  (t (setq problem (if (equal (plist-get prop :type) "integer")
                                       "must be an integer" "must be a number"))))))
        value)))))

(defun goose-ls--ask-form (request)
  "Ask the form of REQUEST; (action) or (\"accept\" . content)."
  (let* ((schema (plist-get request :requestedSchema))
         (properties (plist-get schema :properties))
         (required (mapcar (lambda (name) (intern (concat ":" name)))
                           (append (plist-get schema :required) nil)))
         (missing (seq-filter (lambda (key) (not (goose-ls--field-askable-p (plist-get properties key))))
                              required))
         (actions (if missing '("Decline" "Cancel") '("Answer" "Decline" "Cancel")))
         (action (goose-ls--choose
                  (format "%s asks: %s%s (%s): " goose-ls--agent-name
                          (goose-ls-inert-line (plist-get request :message))
                          (if missing (format " [cannot be filled in here: %s]"
                                              (mapconcat (lambda (k) (substring (symbol-name k) 1))
                                                         missing ", "))
                            "")
                          (string-join actions " / "))
                  actions (car actions))))
    (pcase action
      ("Answer"
       (let ((content (make-hash-table :test #'equal)))
         (cl-loop for (key prop) on properties by #'cddr
                  for name = (substring (symbol-name key) 1)
                  when (goose-ls--field-askable-p prop)
                  do (when-let ((given (goose-ls--ask-field name prop (memq key required))))
                       (puthash name (car given) content)))
         (cons "accept" content)))
      ("Decline" (list "decline"))
      (_ (list "cancel")))))

(defun goose-ls--ask-url (request)
  "Offer to open the page of REQUEST (a web page only); (action)."
  (let* ((url (or (plist-get request :url) ""))
         (web (string-match-p "\\`https?://[^[:space:]]+\\'" url))
         (actions (if web '("Open" "Decline" "Cancel") '("Decline" "Cancel")))
         (action (goose-ls--choose (format "%s asks: %s (%s%s) (%s): " goose-ls--agent-name
                                           (goose-ls-inert-line (plist-get request :message))
                                           (goose-ls-inert-line url) (if web "" ": not a web page")
                                           (string-join actions " / "))
                                   actions (car actions))))
    (pcase action
      ("Open" (condition-case err
                  (progn (browse-url url) (list "accept"))
                (error (message "goose-ls: could not open %s: %s" (goose-ls-inert-line url) (error-message-string err))
                       (list "decline"))))
      ("Decline" (list "decline"))
      (_ (list "cancel")))))

(defun goose-ls--ask-question (session request-id)
  "Ask question REQUEST-ID of SESSION, if it still waits, and send the answer.
A refused form (the error is shown) is asked again."
  (when-let ((entry (gethash request-id goose-ls--questions)))
    (let* ((request (cdr entry))
           (answer (condition-case nil
                       (if (equal (plist-get request :mode) "url")
                           (goose-ls--ask-url request)
                         (goose-ls--ask-form request))
                     (quit (list "cancel")))))
      (if (not (gethash request-id goose-ls--questions))
          (message "goose-ls: that question was closed meanwhile; your answer was not sent")
        (puthash request-id t goose-ls--answered-here)
        (condition-case err
            (goose-ls--request :goose/elicitation
                               (append (list :sessionId session :requestId request-id
                                             :action (car answer))
                                       (and (cdr answer) (list :content (cdr answer))))
                               (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session)))
          (error
           (remhash request-id goose-ls--answered-here)
           (message "%s" (error-message-string err))
           (if (string-match-p "requestId:" (error-message-string err))
               (remhash request-id goose-ls--questions)
             (when (equal (car answer) "accept")
               (run-at-time 0 nil #'goose-ls--ask-question session request-id)))))))))

(defun goose-ls--question (session update replay)
  "Write UPDATE, an elicitation update, into SESSION's chat; ask a new question.
History (REPLAY) is not asked."
  (let ((request-id (plist-get update :requestId)))
    (goose-ls--separate session 'question)
    (if (equal (plist-get update :sessionUpdate) "elicitation_resolved")
        (progn
          (remhash request-id goose-ls--questions)
          (goose-ls--append session
                            (format "❓ %s%s\n"
                                    (pcase (plist-get update :action)
                                      ("accept" "answered") ("decline" "declined")
                                      ("cancel" "cancelled") (action action))
                                    (if (gethash request-id goose-ls--answered-here) " by you" ""))
                            'font-lock-face 'goose-ls-permission 'goose-ls-verbatim t)
          (remhash request-id goose-ls--answered-here))
      (goose-ls--append session
                        (format "❓ %s\n%s" (goose-ls-inert-line (plist-get update :message))
                                (if (equal (plist-get update :mode) "url")
                                    (format "%s\n" (goose-ls-inert-line (plist-get update :url)))
                                  ""))
                        'font-lock-face 'goose-ls-permission 'goose-ls-verbatim t)
      (unless replay
        (puthash request-id (cons session update) goose-ls--questions)
        ;; Asked from a timer: not inside eglot's process filter.
        (run-at-time 0 nil #'goose-ls--ask-question session request-id)))
    (force-mode-line-update t)))

(provide 'goose-ls-forms)
;;; goose-ls-forms.el ends here
