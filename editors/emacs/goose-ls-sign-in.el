;;; goose-ls-sign-in.el --- Sign in to the agent in a terminal buffer  -*- lexical-binding: t; -*-

;;; Commentary:

;; Part of goose-ls.el.  An agent that signs in through its own terminal program (an ACP
;; `terminal' auth method, named in goose/agentStatus's `signIn', its command given by
;; goose/signInCommand) has it run in a `term' buffer, where the user answers it; once it
;; exits 0, goose-ls connects to the agent again (goose/authenticate with its methodId).

;;; Code:

(require 'cl-lib)
(require 'term)
(require 'goose-ls-server)

(defvar goose-ls--sign-ins nil
  "The agent's terminal sign-ins, from the last goose/agentStatus (its `signIn').")

(defun goose-ls--report-sign-in (result)
  "Say whether RESULT, a goose/authenticate result, signed in."
  (if (eq (plist-get result :signedIn) t)
      (message "goose-ls: signed in")
    (message "goose-ls: not signed in: %s" (plist-get (plist-get result :agent) :message))))

(defun goose-ls--sign-in-ended (process sign-in server)
  "PROCESS, SIGN-IN's terminal program, ended: take the sign-in up if it exited 0.
The terminal stays to be read when it did not."
  (when (memq (process-status process) '(exit signal))
    (let ((code (process-exit-status process))
          (buffer (process-buffer process)))
      (if (not (and (eq (process-status process) 'exit) (= code 0)))
          (message "goose-ls: the sign-in exited with code %s; not signed in" code)
        (when (buffer-live-p buffer)
          (dolist (window (get-buffer-window-list buffer nil t))
            (quit-window t window)))
        ;; Not from inside the sentinel: the request waits for its answer.
        (run-at-time 0 nil
                     (lambda ()
                       (goose-ls--report-sign-in
                        (goose-ls--request :goose/authenticate
                                           (list :methodId (plist-get sign-in :methodId))
                                           server))))))))

(defun goose-ls--run-sign-in (sign-ins server)
  "Run one of SIGN-INS (the user picks when there are several) for SERVER."
  (let* ((labels (mapcar (lambda (s) (cons (plist-get s :label) s)) sign-ins))
         (sign-in (if (cdr labels)
                      (cdr (assoc (completing-read "goose: sign in with: " labels nil t) labels))
                    (cdar labels)))
         (command (goose-ls--request :goose/signInCommand
                                     (list :methodId (plist-get sign-in :methodId)) server))
         (env (plist-get command :env))
         (process-environment
          (append (cl-loop for (key value) on env by #'cddr
                           collect (format "%s=%s" (substring (symbol-name key) 1) value))
                  process-environment))
         (buffer (apply #'make-term "goose sign-in" (plist-get command :command) nil
                        (append (plist-get command :args) nil)))
         (process (get-buffer-process buffer)))
    (with-current-buffer buffer (term-char-mode))
    (add-function :after (process-sentinel process)
                  (lambda (proc _event) (goose-ls--sign-in-ended proc sign-in server)))
    (pop-to-buffer buffer)))

;;;###autoload
(defun goose-ls-sign-in ()
  "Sign in to the agent.
Its terminal sign-in when goose-ls gave one, in a terminal buffer; else goose-ls
tries the methods that work on their own, and gives it when none did."
  (interactive)
  (let ((server (goose-ls--server)))
    (if goose-ls--sign-ins
        (goose-ls--run-sign-in goose-ls--sign-ins server)
      (let* ((result (goose-ls--request :goose/authenticate nil server))
             (sign-ins (append (plist-get (plist-get result :agent) :signIn) nil)))
        (if (or (eq (plist-get result :signedIn) t) (null sign-ins))
            (goose-ls--report-sign-in result)
          (goose-ls--run-sign-in sign-ins server))))))

(provide 'goose-ls-sign-in)
;;; goose-ls-sign-in.el ends here
