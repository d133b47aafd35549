;;; goose-ls-options.el --- The agent's config options of a goose chat, picked and set  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  `goose-ls-set-option' lists the chat's config options grouped
;; by category (Mode, Model, Thinking...), in the agent's order, then the chosen
;; option's values (on and off for a boolean one), and sets the value picked.  The
;; model is switched here, through the option of category model.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'goose-ls-chat)

(defconst goose-ls--option-categories
  '(("mode" . "Mode") ("model" . "Model") ("model_config" . "Model settings")
    ("thought_level" . "Thinking"))
  "The words for the config option categories ACP names; others show as they are.")

(defun goose-ls--option-values (option)
  "OPTION's values as (NAME . VALUE): a select option's, those in groups too;
on and off for a boolean option."
  (if (equal (plist-get option :type) "boolean")
      '(("on" . t) ("off" . :json-false))
    (let (found)
      (seq-doseq (entry (plist-get option :options))
        (seq-doseq (value (or (plist-get entry :options) (vector entry)))
          (when (plist-member value :value)
            (push (cons (or (plist-get value :name) (plist-get value :value))
                        (plist-get value :value))
                  found))))
      (nreverse found))))

(defun goose-ls--option-line (option)
  "OPTION as the picker shows it: its group, name and current value."
  (let ((category (plist-get option :category))
        (current (plist-get option :currentValue)))
    (format "%s · %s: %s"
            (if (stringp category)
                (or (cdr (assoc category goose-ls--option-categories)) category)
              "Other")
            (or (plist-get option :name) (plist-get option :id))
            (or (car (rassoc current (goose-ls--option-values option))) current))))

(defun goose-ls--grouped-options (options)
  "OPTIONS, those of one category together.
The groups keep the agent's order, which is their priority."
  (let (groups)
    (seq-doseq (option options)
      (let ((group (assoc (plist-get option :category) groups)))
        (if group
            (setcdr group (cons option (cdr group)))
          (push (list (plist-get option :category) option) groups))))
    (mapcan (lambda (group) (reverse (cdr group))) (nreverse groups))))

(defun goose-ls--pick (prompt choices &optional group)
  "The cdr of the entry of CHOICES, an alist, picked at PROMPT, in their order.
GROUP, a `group-function', heads the groups in Emacs 28 and later."
  (cdr (assoc (completing-read prompt (goose-ls--in-order choices group) nil t) choices)))

(defun goose-ls--option-group (line transform)
  "The `group-function' of the option picker: LINE's group, or LINE without it."
  (let ((parts (split-string line " · ")))
    (if transform (string-join (cdr parts) " · ") (car parts))))

;;;###autoload
(defun goose-ls-set-option ()
  "Choose one of the chat's config options, then its new value.
The options are grouped by category.  The model is switched through
the option of category model; a boolean option is turned on or off."
  (interactive)
  (let ((session (or goose-ls--session goose-ls-current-session)))
    (if (not session)
        (message "goose-ls: no chat yet")
      (let* ((server (buffer-local-value 'goose-ls--chat-server (goose-ls--chat session)))
             (summary (seq-find (lambda (s) (equal (plist-get s :sessionId) session))
                                (plist-get (goose-ls--request :goose/status nil server) :sessions)))
             (options (goose-ls--grouped-options (plist-get summary :configOptions))))
        (if (null options)
            (message "goose-ls: the agent offers no options")
          (let* ((option (goose-ls--pick "goose option: "
                                         (mapcar (lambda (o) (cons (goose-ls--option-line o) o))
                                                 options)
                                         #'goose-ls--option-group))
                 (value (goose-ls--pick (format "%s: " (or (plist-get option :name)
                                                           (plist-get option :id)))
                                        (goose-ls--option-values option))))
            (goose-ls--request :goose/setConfigOption
                               (list :sessionId session :configId (plist-get option :id)
                                     :value value)
                               server)
            (message "goose-ls: %s = %s" (plist-get option :id)
                     (car (rassoc value (goose-ls--option-values option))))))))))

(provide 'goose-ls-options)
;;; goose-ls-options.el ends here
