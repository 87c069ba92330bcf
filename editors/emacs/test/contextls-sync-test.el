;;; contextls-sync-test.el --- What the server has of a buffer, and what typing costs  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by scripts/test-emacs.sh in `emacs --batch', against the real server.
;; A buffer is open on the server only while its file has an item; typing
;; in it converts no positions (that happens once per burst, when it is
;; sent), so a line of 246K characters costs what it costs without
;; contextls.  The timings themselves are in contextls-bench.el.  A stale
;; region is read again where it is now, and when the server cannot tell
;; where that is, the person is asked.

;;; Code:

(require 'contextls-test-helpers)

(defun contextls-test--long-json-line (characters)
  "One line of JSON of about CHARACTERS characters, with an emoji now and then."
  (with-temp-buffer
    (insert "{\"rows\": [")
    (let ((n 0))
      (while (< (buffer-size) characters)
        (insert (format "{\"id\": %d, \"name\": \"row %d\", \"tag\": \"%s\"}, "
                        n n (if (zerop (% n 97)) "😀" "plain")))
        (setq n (1+ n))))
    (insert "{}]}\n")
    (buffer-string)))

(defun contextls-test--notifications (thunk)
  "Call THUNK; return the (METHOD . PARAMS) of every notification sent meanwhile."
  (let (sent)
    (cl-letf* ((notify (symbol-function 'jsonrpc-notify))
               ((symbol-function 'jsonrpc-notify)
                (lambda (conn method params)
                  (push (cons method params) sent)
                  (funcall notify conn method params))))
      (funcall thunk))
    (nreverse sent)))

(defun contextls-test--counting (function thunk)
  "Call THUNK; return how many times FUNCTION was called meanwhile."
  (let ((count 0))
    (let ((counter (lambda (&rest _) (setq count (1+ count)))))
      (advice-add function :before counter)
      (unwind-protect (funcall thunk)
        (advice-remove function counter)))
    count))

(defun contextls-test--type (text)
  "Type TEXT at point, one `self-insert-command' per character, as a person does."
  (dolist (char (string-to-list text))
    (let ((last-command-event char))
      (self-insert-command 1))))

(ert-deftest contextls-test-a-buffer-without-items-is-not-synced ()
  (contextls-test--with-workspace
      `(("data.json" . ,(contextls-test--long-json-line 246000))
        ("other.py" . "x = 1\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "other.py"))
      (contextls-test--select-line 1)
      (contextls-add-region (region-beginning) (region-end)))
    (with-current-buffer (find-file-noselect (expand-file-name "data.json"))
      (should (> (line-end-position) 246000))
      ;; The window is live, but holds nothing of this file: nothing is sent,
      ;; no hook runs.
      (should-not contextls--synced)
      (should-not (memq #'contextls--before-change before-change-functions))
      (goto-char (line-end-position))
      (should-not (contextls-test--notifications
                   (lambda () (contextls-test--type "typed") (contextls--flush-changes
                                                             (directory-file-name root))))))))

(ert-deftest contextls-test-typing-on-a-long-line-converts-no-position ()
  (contextls-test--with-workspace
      `(("data.json" . ,(concat "# the first line\n" (contextls-test--long-json-line 246000))))
    (setq contextls-settings '(:maxTokens 400000))
    (with-current-buffer (find-file-noselect (expand-file-name "data.json"))
      (contextls-test--select-line 1)
      (contextls-add-region (region-beginning) (region-end))
      (should contextls--synced)
      (goto-char (point-max))
      (forward-line -1)
      (end-of-line)
      (backward-char 3)
      ;; Fifty keystrokes at the end of the long line: the hooks convert nothing...
      (should (zerop (contextls-test--counting
                      #'contextls--lsp-position
                      (lambda () (contextls-test--type (make-string 50 ?x))))))
      ;; ...until the burst is sent: once, as one change of fifty characters.
      (let (changes)
        (should (= 1 (contextls-test--counting
                      #'contextls--lsp-position
                      (lambda ()
                        (setq changes (cl-loop for (method . params)
                                               in (contextls-test--notifications
                                                   (lambda () (contextls--send-changes
                                                               (current-buffer))))
                                               when (eq method :textDocument/didChange)
                                               append (append (plist-get params :contentChanges)
                                                              nil)))))))
        (should (equal (mapcar (lambda (change) (plist-get change :text)) changes)
                       (list (make-string 50 ?x))))
        ;; Its column counts the emoji before it as two UTF-16 units.
        (let ((line (buffer-substring-no-properties (line-beginning-position) (point))))
          (should (string-match-p "😀" line))
          (should (equal (plist-get (plist-get (plist-get (car changes) :range) :start)
                                    :character)
                         (+ (contextls--utf16-length line) -50)))))
      ;; The server's copy is the buffer, to the character.
      (should (equal (plist-get (contextls-add-buffer) :content)
                     (buffer-substring-no-properties (point-min) (point-max)))))))

(ert-deftest contextls-test-a-refused-add-leaves-nothing-open ()
  (contextls-test--with-workspace
      `(("big.py" . ,(mapconcat (lambda (n) (format "value_%d = %d" n n))
                                (number-sequence 1 400) "\n")))
    (let ((contextls-settings '(:maxTokens 100)))
      (contextls-add-text "something in the window")
      (with-current-buffer (find-file-noselect (expand-file-name "big.py"))
        (let ((sent (contextls-test--notifications
                     (lambda () (should-error (contextls-add-buffer) :type 'user-error)))))
          (should (equal (mapcar #'car sent) '(:textDocument/didOpen :textDocument/didClose))))
        (should-not contextls--synced)
        (should-not (memq #'contextls--before-change before-change-functions))
        ;; Typing in it sends nothing.
        (should-not (contextls-test--notifications
                     (lambda () (contextls-test--type "y = 2")
                       (contextls--send-changes (current-buffer)))))))))

(ert-deftest contextls-test-a-buffer-is-closed-when-its-last-item-goes ()
  (contextls-test--with-workspace '(("a.py" . "one = 1\ntwo = 2\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "a.py"))
      (contextls-test--select-line 1)
      (contextls-add-region (region-beginning) (region-end))
      (should contextls--synced)
      (should (equal (mapcar #'car (contextls-test--notifications
                                    (lambda () (contextls-remove "ctx-1"))))
                     '(:textDocument/didClose)))
      (should-not contextls--synced)
      ;; The item back (from the command line): the buffer is opened again.
      (contextls-test--cli "restore" "ctx-1")
      (contextls-test--wait (lambda () contextls--synced)))))

(ert-deftest contextls-test-a-render-right-after-typing-holds-what-was-typed ()
  (contextls-test--with-workspace '(("notes.py" . "first = 1\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "notes.py"))
      (contextls-add-buffer)
      (dotimes (n 5)
        (goto-char (point-max))
        (contextls-test--type (format "typed_%d = %d\n" n n))
        ;; No idle moment between the typing and the render.
        (should (string-match-p (format "typed_%d = %d" n n)
                                (plist-get (contextls--render) :text)))))))

;;; A stale region is read where it is now

(defun contextls-test--line-text (line count)
  "COUNT lines of the current buffer from LINE, each with its newline."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- line))
    (let ((beg (point)))
      (forward-line count)
      (buffer-substring-no-properties beg (point)))))

(ert-deftest contextls-test-a-stale-region-reads-the-lines-it-moved-to ()
  (contextls-test--with-workspace
      `(("mod.py" . ,(mapconcat (lambda (n) (format "line_%d\n" n)) (number-sequence 1 40) "")))
    (with-current-buffer (find-file-noselect (expand-file-name "mod.py"))
      (let ((root (directory-file-name root)))
        (goto-char (point-min)) (forward-line 29)
        (push-mark (point) t t)
        (forward-line 5)
        (contextls-add-region (region-beginning) (region-end))
        (goto-char (point-min)) (forward-line 31) (end-of-line)
        (insert " edited")
        (contextls--send-changes (current-buffer))
        (contextls-test--wait (lambda () (eq (plist-get (car (contextls-test--items)) :stale) t)))
        (goto-char (point-min)) (forward-line 20)
        (insert "# a line above\n")
        (save-buffer)
        (let ((marked (contextls-test--line-text 31 5)))
          (should (string-match-p "line_32 edited" marked))
          (goto-char (point-min)) (forward-line 32)
          (should (equal (contextls--item-at) (cons root "ctx-1")))
          (call-interactively #'contextls-reread)
          (should (equal (plist-get (car (contextls-test--items)) :content) marked)))))))

(ert-deftest contextls-test-a-region-that-lost-its-place-asks-before-it-is-read ()
  (contextls-test--with-workspace
      `(("mod.py" . ,(mapconcat (lambda (n) (format "line_%d\n" n)) (number-sequence 1 40) "")))
    (with-current-buffer (find-file-noselect (expand-file-name "mod.py"))
      (let ((root (directory-file-name root))
            (inhibit-message nil)
            asked)
        (goto-char (point-min)) (forward-line 29)
        (push-mark (point) t t)
        (forward-line 5)
        (contextls-add-region (region-beginning) (region-end) t)
        ;; Lines 28-32 rewritten as two, typed where they were, the new line
        ;; last: where the region starts is anyone's guess.
        (goto-char (point-min)) (forward-line 27)
        (delete-region (point) (progn (forward-line 5) (point)))
        (insert "rewritten\ntwice")
        (newline)
        (contextls--send-changes (current-buffer))
        (contextls-test--wait
         (lambda () (contextls--lost-p (car (contextls-test--items)))))
        (let ((highlighted (contextls--highlighted-lines root "ctx-1")))
          ;; The lines it is highlighted on: what was left of it, line_33 on.
          (should (equal (cdr highlighted) '(30 . 31)))
          (should (string-prefix-p "line_33\n"
                                   (contextls-test--line-text (cadr highlighted) 1)))
          ;; A highlight that begins at the end of the line above (a newline
          ;; typed in front of it, as some commands insert it) shows from the
          ;; next line: its lines are those shown.
          (let ((overlay (car (contextls--overlays-of root "ctx-1"))))
            (move-overlay overlay (1- (overlay-start overlay)) (overlay-end overlay))
            (should (equal (contextls--highlighted-lines root "ctx-1") highlighted)))
          ;; No: nothing is read, and the message says what to do.
          (cl-letf (((symbol-function 'y-or-n-p) (lambda (prompt) (setq asked prompt) nil)))
            (should (string-match-p
                     "was not read again: the lines around it changed too"
                     (car (last (contextls-test--messages #'contextls-reread))))))
          (should (string-match-p
                   (format "\\`ctx-1 (mod.py:30-34, [0-9]+ tokens): .* cannot tell where it is now; read lines %d-%d, where it is highlighted\\? \\'"
                           (cadr highlighted) (cddr highlighted))
                   asked))
          (should (equal (mapcar (lambda (item) (plist-get item :id)) (contextls-test--items))
                         '("ctx-1")))
          ;; Yes: those lines come in, pinned as the item was; it goes to the archive.
          (cl-letf (((symbol-function 'y-or-n-p) (lambda (_) t)))
            (contextls-reread))
          (let ((items (contextls-test--items)))
            (should (equal (mapcar (lambda (item) (plist-get item :id)) items) '("ctx-2")))
            (should (equal (plist-get (car items) :content)
                           (contextls-test--line-text (cadr highlighted)
                                                      (1+ (- (cddr highlighted)
                                                             (cadr highlighted))))))
            (should (eq (plist-get (car items) :pinned) t))))))))

(provide 'contextls-sync-test)
;;; contextls-sync-test.el ends here
