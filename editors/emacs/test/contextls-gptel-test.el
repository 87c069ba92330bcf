;;; contextls-gptel-test.el --- contextls-gptel against gptel's hook contract  -*- lexical-binding: t -*-

;;; Commentary:

;; gptel is not installable here: gptel-standin/gptel.el follows the
;; documented contract of `gptel-prompt-transform-functions' (a temporary
;; prompt buffer, functions called with the request state, the buffer's
;; text sent).  The context comes from the real server.

;;; Code:

(require 'contextls-test-helpers)

(defconst contextls-gptel-test--standin (expand-file-name "gptel-standin" contextls-test--dir))

(add-to-list 'load-path contextls-gptel-test--standin)
(require 'gptel)
(require 'contextls-gptel)

(defun contextls-gptel-test--chat (root)
  "A chat buffer in ROOT: a first prompt, a response, and a new prompt."
  (let ((buffer (generate-new-buffer "*chat*")))
    (with-current-buffer buffer
      (setq default-directory (file-name-as-directory root))
      (text-mode)                       ; gptel's prompt prefix here is "### "
      (setq-local gptel-mode t)
      (insert "### What does alpha do?\n\n")
      (insert (propertize "It returns one." 'gptel 'response))
      (insert "\n\n### And beta?"))
    buffer))

(defun contextls-gptel-test--send (buffer)
  "Send BUFFER through the stand-in; return the messages sent and what was said."
  (let (sent said)
    (with-current-buffer buffer
      (setq said (contextls-test--messages
                  (lambda ()
                    (gptel-standin-request (lambda (messages) (setq sent messages)))
                    (contextls-test--wait (lambda () sent))))))
    (list sent said)))

(ert-deftest contextls-gptel-test-every-request-carries-the-window ()
  (contextls-test--with-workspace '(("a.py" . "def alpha():\n    return 1\n"))
    (let ((chat (contextls-gptel-test--chat root))
          (inhibit-message nil))
      (unwind-protect
          (progn
            (with-current-buffer (find-file-noselect (expand-file-name "a.py"))
              (contextls-add-buffer))
            (contextls-add-text "beta is deprecated")
            (contextls-gptel-mode 1)
            ;; gptel's own transforms are still there.
            (should (memq 'gptel--transform-add-context
                          (default-value 'gptel-prompt-transform-functions)))
            (pcase-let ((`(,sent ,said) (contextls-gptel-test--send chat)))
              (should (equal (mapcar #'car sent) '("user" "assistant" "user")))
              (should (equal (nth 1 sent) '("assistant" . "It returns one.")))
              (should (equal (cdr (nth 0 sent)) "What does alpha do?"))
              ;; The context goes after the prompt's prefix, which gptel strips.
              (let ((last (cdr (nth 2 sent))))
                (should (string-prefix-p "## Context" last))
                (should (string-match-p "def alpha():" last))
                (should (string-match-p "beta is deprecated" last))
                (should (string-suffix-p "\n\nAnd beta?" last))
                (should-not (string-match-p "### And beta" last)))
              (should (seq-find (lambda (m) (string-match-p
                                             "\\`contextls: 2 items, [0-9.]+k? tokens attached\\'"
                                             m))
                                said)))
            ;; The next request renders the window as it is then.
            (contextls-add-text "gamma is new")
            (should (string-match-p "gamma is new"
                                    (cdr (car (last (car (contextls-gptel-test--send chat)))))))
            ;; Off: the requests go as they are.
            (contextls-gptel-mode -1)
            (should-not (memq #'contextls-gptel-transform
                              (default-value 'gptel-prompt-transform-functions)))
            (should (equal (cdr (car (last (car (contextls-gptel-test--send chat)))))
                           "And beta?")))
        (contextls-gptel-mode -1)
        (kill-buffer chat)))))

(ert-deftest contextls-gptel-test-the-context-after-the-system-message ()
  ;; For a prompt cache: the system message, then the render (which changes
  ;; at its end), then the conversation as it was typed.
  (contextls-test--with-workspace '(("a.py" . "def alpha():\n    return 1\n"))
    (let ((chat (contextls-gptel-test--chat root))
          (contextls-gptel-place 'system))
      (unwind-protect
          (progn
            (with-current-buffer chat (setq-local gptel--system-message "You are terse."))
            (contextls-add-text "beta is deprecated")
            (contextls-gptel-mode 1)
            (let ((sent (car (contextls-gptel-test--send chat))))
              (should (equal (mapcar #'car sent) '("system" "user" "assistant" "user")))
              (should (string-prefix-p "You are terse.\n\n## Context" (cdr (nth 0 sent))))
              (should (string-match-p "beta is deprecated" (cdr (nth 0 sent))))
              (should (equal (cdr (nth 3 sent)) "And beta?")))
            ;; The chat's own system message is left as it was.
            (should (equal (buffer-local-value 'gptel--system-message chat) "You are terse."))
            ;; A system message that is not text: the context goes into the prompt.
            (with-current-buffer chat (setq-local gptel--system-message (lambda () "dynamic")))
            (let ((sent (car (contextls-gptel-test--send chat))))
              (should (equal (mapcar #'car sent) '("user" "assistant" "user")))
              (should (string-match-p "beta is deprecated" (cdr (nth 2 sent))))))
        (contextls-gptel-mode -1)
        (kill-buffer chat)))))

(ert-deftest contextls-gptel-test-what-was-typed-just-before-sending-is-attached ()
  (contextls-test--with-workspace '(("a.py" . "def alpha():\n    return 1\n"))
    (let ((chat (contextls-gptel-test--chat root))
          (source (find-file-noselect (expand-file-name "a.py" root))))
      (unwind-protect
          (progn
            (with-current-buffer source (contextls-add-buffer))
            (contextls-gptel-mode 1)
            (dotimes (n 3)
              ;; Typed, and sent at once: no idle moment in between.
              (with-current-buffer source
                (goto-char (point-max))
                (insert (format "def typed_%d():\n    return %d\n" n n)))
              (should (string-match-p (format "def typed_%d():" n)
                                      (cdr (car (last (car (contextls-gptel-test--send chat)))))))))
        (contextls-gptel-mode -1)
        (kill-buffer chat)))))

(ert-deftest contextls-gptel-test-a-budget-of-its-own ()
  (contextls-test--with-workspace nil
    (let ((chat (contextls-gptel-test--chat root))
          (inhibit-message nil))
      (unwind-protect
          (progn
            (contextls-add-text (mapconcat #'identity (make-list 40 "older words") " "))
            (contextls-add-text "the newest note")
            (contextls-gptel-mode 1)
            (pcase-let* ((contextls-gptel-max-tokens 30)
                         (`(,sent ,said) (contextls-gptel-test--send chat)))
              (let ((last (cdr (car (last sent)))))
                (should (string-match-p "the newest note" last))
                (should-not (string-match-p "older words" last)))
              (should (seq-find (lambda (m) (string-match-p
                                             "\\`contextls: 1 item, [0-9]+ tokens attached (1 left out by the budget)\\'"
                                             m))
                                said))))
        (contextls-gptel-mode -1)
        (kill-buffer chat)))))

(ert-deftest contextls-gptel-test-a-chat-of-its-own ()
  (contextls-test--with-workspace nil
    (let ((with (contextls-gptel-test--chat root))
          (without (contextls-gptel-test--chat root)))
      (unwind-protect
          (progn
            (contextls-add-text "only for one chat")
            (with-current-buffer with (contextls-gptel-local-mode 1))
            (should (string-match-p "only for one chat"
                                    (cdr (car (last (car (contextls-gptel-test--send with)))))))
            (should (equal (cdr (car (last (car (contextls-gptel-test--send without)))))
                           "And beta?"))
            ;; Both on: attached once.
            (contextls-gptel-mode 1)
            (let ((last (cdr (car (last (car (contextls-gptel-test--send with)))))))
              (should (= (length (split-string last "only for one chat")) 2))))
        (contextls-gptel-mode -1)
        (kill-buffer with)
        (kill-buffer without)))))

(ert-deftest contextls-gptel-test-a-request-goes-even-when-the-server-cannot-answer ()
  (contextls-test--with-workspace nil
    (let ((chat (contextls-gptel-test--chat root))
          (contextls-server-command '("/nonexistent/contextls" "serve"))
          (inhibit-message nil))
      (unwind-protect
          (progn
            (contextls-gptel-mode 1)
            (pcase-let ((`(,sent ,said) (contextls-gptel-test--send chat)))
              (should (equal (cdr (car (last sent))) "And beta?"))
              (should (seq-find (lambda (m) (string-match-p "no context attached.*pip install" m))
                                said))))
        (contextls-gptel-mode -1)
        (kill-buffer chat)))))

(ert-deftest contextls-gptel-test-loads-without-gptel-and-says-what-it-needs ()
  (let* ((lisp (file-name-directory (locate-library "contextls-gptel")))
         (output
          (with-temp-buffer
            (call-process (expand-file-name invocation-name invocation-directory) nil t nil
                          "--batch" "-Q" "-L" lisp "-l" "contextls-gptel"
                          "--eval" "(princ (format \"loaded %s\\n\" (featurep 'gptel)))"
                          "--eval" "(condition-case err (contextls-gptel-mode 1)
                                      (user-error (princ (cadr err))))")
            (buffer-string))))
    (should (string-match-p "^loaded nil$" output))
    (should (string-match-p "needs gptel 0.9.8.5 or newer" output))))

(provide 'contextls-gptel-test)
;;; contextls-gptel-test.el ends here
