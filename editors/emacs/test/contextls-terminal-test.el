;;; contextls-terminal-test.el --- contextls as drawn in a real terminal frame  -*- lexical-binding: t -*-

;;; Commentary:

;; Batch Emacs draws no mode line (`format-mode-line' gives "").  These
;; tests run in `emacs -nw' inside tmux (scripts/test-emacs.sh starts it):
;; they read the mode line as Emacs formats it in the frame, and the screen
;; itself with `tmux capture-pane'.  `contextls-terminal-test-run' runs
;; them, writes the results to a file and exits.

;;; Code:

(require 'contextls-test-helpers)
(require 'time)
(require 'which-func)

;;; The screen

(defun contextls-terminal-test--screen ()
  "The lines of the terminal as tmux shows them now."
  (with-temp-buffer
    (call-process "tmux" nil t nil "capture-pane" "-p" "-t" (getenv "TMUX_PANE"))
    (split-string (buffer-string) "\n")))

(defun contextls-terminal-test--mode-line-row (&optional window)
  "The screen line of WINDOW's mode line, once drawn."
  (1- (nth 3 (window-edges window))))

(defun contextls-terminal-test--drawn (regexp &optional window)
  "WINDOW's mode line as drawn on the screen, once it matches REGEXP.
Redisplays and reads the screen until it matches (2 s at most), without
letting process output in: what is drawn is what Emacs knew already."
  (let ((deadline (+ (float-time) 2)) line)
    (while (progn (redisplay t)
                  (setq line (nth (contextls-terminal-test--mode-line-row window)
                                  (contextls-terminal-test--screen)))
                  (and (not (string-match-p regexp line)) (< (float-time) deadline)))
      (call-process "sleep" nil nil nil "0.05"))
    line))

(defun contextls-terminal-test--formatted (&optional window)
  "WINDOW's mode line as Emacs formats it in this frame."
  (with-selected-window (or window (selected-window))
    (format-mode-line mode-line-format nil window)))

(defmacro contextls-terminal-test--with-project (files &rest body)
  "Run BODY in a fresh git project holding FILES, with `contextls-mode' on."
  (declare (indent 1))
  `(contextls-test--with-workspace ,files
     (should (zerop (call-process "git" nil nil nil "init" "-q")))
     (let ((inhibit-message nil))
       (delete-other-windows)
       (contextls-mode 1)
       (unwind-protect (progn ,@body)
         (contextls-mode -1)))))

(defun contextls-terminal-test--visit (file)
  "Visit FILE in the selected window and wait for its window's status."
  (find-file file)
  (contextls-test--wait (lambda () (consp (contextls--status (contextls--root))))))

;;; The mode line

(ert-deftest contextls-terminal-test-the-mode-line-shows-the-budget-beside-its-neighbours ()
  (contextls-terminal-test--with-project '(("tool.py" . "def tool():\n    return 1\n"))
    (let ((display-time-format "%H:%M"))
      (display-time-mode 1)
      (unwind-protect
          (progn
            ;; Visiting a file of a project is enough: no command first.
            (contextls-terminal-test--visit (expand-file-name "tool.py"))
            (should (string-match-p " ctx 0/8k gpt-4o·0/50 +[0-9]+:[0-9]+"
                                    (contextls-terminal-test--formatted)))
            (should (string-match-p " ctx 0/8k gpt-4o·0/50 +[0-9]+:[0-9]+"
                                    (contextls-terminal-test--drawn " ctx 0/8k gpt-4o·0/50 ")))
            ;; With which-func and the clock: a space on each side, nothing glued.
            (which-function-mode 1)
            (goto-char (point-min)) (forward-line 1)
            (contextls-test--select-line 1)
            (contextls-add-region (region-beginning) (region-end))
            (which-func-update)
            (should (string-match-p " ctx [0-9]+/8k gpt-4o·1/50 \\[tool\\] [0-9]+:[0-9]+"
                                    (contextls-terminal-test--drawn "·1/50 \\[tool")))
            ;; Off: the budget goes, the clock and which-func stay; on: back.
            (contextls-mode -1)
            (let ((line (contextls-terminal-test--drawn "\\[tool\\] +[0-9]+:[0-9]+")))
              (should-not (string-match-p "ctx" line))
              (should (string-match-p "\\[tool\\] +[0-9]+:[0-9]+" line)))
            (contextls-mode 1)
            (should (string-match-p " ctx [0-9]+/8k gpt-4o·1/50 \\[tool\\] [0-9]+:[0-9]+"
                                    (contextls-terminal-test--drawn "ctx [0-9]+/8k gpt-4o·1/50"))))
        (which-function-mode -1)
        (display-time-mode -1)))))

(ert-deftest contextls-terminal-test-your-own-change-is-drawn-at-once ()
  (contextls-terminal-test--with-project '(("own.py" . "one = 1\ntwo = 2\nthree = 3\n"))
    (contextls-terminal-test--visit (expand-file-name "own.py"))
    (contextls-add-text "first")
    (contextls-add-text "second")
    (contextls-test--select-line 2)
    (contextls-add-region (region-beginning) (region-end))
    (should (string-match-p "·3/50 " (contextls-terminal-test--drawn "·3/50 ")))
    ;; Each command's own answer is drawn: no push from the server is let in.
    (contextls-remove "ctx-1")
    (should (string-match-p "·2/50 " (contextls-terminal-test--formatted)))
    (should (string-match-p "·2/50 " (contextls-terminal-test--drawn "·2/50 ")))
    (goto-char (point-min)) (forward-line 1)
    (call-interactively #'contextls-remove)
    (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))
    (should-not (overlays-at (point)))
    (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t)))
      (contextls-clear))
    (should (string-match-p " ctx 0/8k gpt-4o·0/50 " (contextls-terminal-test--drawn " ctx 0/8k gpt-4o·0/50 ")))))

(ert-deftest contextls-terminal-test-two-projects-each-in-its-window ()
  (contextls-test--with-workspace '(("a/one.py" . "a1 = 1\na2 = 2\n") ("b/two.py" . "b1 = 1\n"))
    (let ((root-a (expand-file-name "a" root))
          (root-b (expand-file-name "b" root))
          (inhibit-message nil))
      (dolist (dir (list root-a root-b))
        (let ((default-directory (file-name-as-directory dir)))
          (should (zerop (call-process "git" nil nil nil "init" "-q")))))
      (delete-other-windows)
      (contextls-mode 1)
      (unwind-protect
          (let ((window-a (selected-window))
                (window-b (split-window-below)))
            (contextls-terminal-test--visit (expand-file-name "one.py" root-a))
            (contextls-test--select-line 1)
            (contextls-add-region (region-beginning) (region-end))
            (contextls-add-text "a's note")
            (with-selected-window window-b
              (contextls-terminal-test--visit (expand-file-name "two.py" root-b))
              (contextls-test--select-line 1)
              (contextls-add-region (region-beginning) (region-end)))
            (should (string-match-p "·2/50 " (contextls-terminal-test--drawn "·2/50 " window-a)))
            (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 " window-b)))
            ;; Both have a ctx-1; removing a's leaves b's highlight and count.
            (contextls-remove "ctx-1" root-a)
            (sit-for 0.5)
            (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 " window-a)))
            (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 " window-b)))
            (with-selected-window window-b
              (should (equal (contextls--item-at (point-min)) (cons root-b "ctx-1")))))
        (contextls-mode -1)
        (delete-other-windows)
        (contextls-test--cleanup (list root-a root-b))))))

(ert-deftest contextls-terminal-test-a-change-from-the-command-line-while-idle ()
  (contextls-terminal-test--with-project '(("cli.py" . "x = 1\n"))
    (let* ((contextls-server-command nil)
           (contextls-use-daemon t)
           (exec-path (cons (file-name-directory contextls-test--server) exec-path)))
      (unwind-protect
          (progn
            (contextls-terminal-test--visit (expand-file-name "cli.py"))
            (contextls-add-text "from Emacs")
            (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))
            ;; The command line adds while Emacs waits for a key.
            (make-process :name "cli" :command (list contextls-test--server "add-text"
                                                     "from the command line")
                          :noquery t)
            (let ((deadline (+ (float-time) 5)))
              (while (and (< (float-time) deadline)
                          (not (string-match-p "·2/50 " (contextls-terminal-test--formatted))))
                (sit-for 0.1)))
            (should (string-match-p "·2/50 " (contextls-terminal-test--drawn "·2/50 "))))
        (ignore-errors (contextls-shutdown (contextls--root)))
        (call-process contextls-test--server nil nil nil "daemon" "stop")))))

(ert-deftest contextls-terminal-test-restart-then-edit ()
  (contextls-terminal-test--with-project '(("r.py" . "a = 1\nb = 2\nc = 3\n"))
    (contextls-terminal-test--visit (expand-file-name "r.py"))
    (contextls-test--select-line 2)
    (contextls-add-region (region-beginning) (region-end))
    (contextls-restart)
    (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))
    (goto-char (point-min))
    (execute-kbd-macro (kbd "# SPC new RET"))
    (contextls--send-changes (current-buffer))
    (contextls-test--wait
     (lambda () (eql (contextls-test--meta (car (contextls-test--items)) :startLine) 3)))
    (should-not (string-match-p "Error" (or (current-message) "")))
    (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))))

;;; A stale region, read again where it is now

(defun contextls-terminal-test--echo-area (&optional regexp)
  "The echo area as drawn: the screen's last line, once it matches REGEXP (2 s at most)."
  (let ((deadline (+ (float-time) 2)) line)
    (while (progn (redisplay t)
                  (setq line (car (last (seq-remove #'string-blank-p
                                                    (contextls-terminal-test--screen)))))
                  (and regexp (not (string-match-p regexp line)) (< (float-time) deadline)))
      (call-process "sleep" nil nil nil "0.05"))
    line))

(defun contextls-terminal-test--press (keys)
  "Run the command KEYS are bound to, as pressing them does.
Unlike a keyboard macro, its messages reach the echo area."
  (let* ((command (key-binding (kbd keys)))
         (this-command command))
    (should (commandp command))
    (call-interactively command)))

(defun contextls-terminal-test--goto-line (line)
  "Go to LINE of the current buffer."
  (goto-char (point-min))
  (forward-line (1- line)))

(ert-deftest contextls-terminal-test-a-stale-region-re-reads-the-lines-that-were-marked ()
  ;; Mark json/decoder.py (the standard library's) lines 30-34, edit line 32,
  ;; insert a line above at 21, save, close, reopen, C-c x u on the highlight.
  (contextls-terminal-test--with-project nil
    (contextls-test--copy-stdlib-json root)
    (let ((file (expand-file-name "json/decoder.py"))
          (map (current-global-map))
          marked)
      (define-key map (kbd "C-c x") 'contextls-command-map)
      ;; ElDoc would write over the echo area, where the answers are read.
      (global-eldoc-mode -1)
      (unwind-protect
          (progn
            (contextls-terminal-test--visit file)
            (contextls-terminal-test--goto-line 30)
            (push-mark (point) t t)
            (forward-line 4)
            (end-of-line)
            (contextls-terminal-test--press "C-c x r")
            (should (string-match-p "contextls: added ctx-1 (json/decoder.py:30-34, "
                                    (contextls-terminal-test--echo-area "added ctx-1")))
            (contextls-terminal-test--goto-line 32)
            (end-of-line)
            (execute-kbd-macro (kbd "SPC SPC # SPC edited"))
            (contextls-terminal-test--goto-line 21)
            (execute-kbd-macro (kbd "# SPC a SPC line SPC above RET"))
            ;; What was marked (to the end of its last line), with the edit.
            (setq marked (save-excursion (contextls-terminal-test--goto-line 31)
                                         (buffer-substring-no-properties
                                          (point) (progn (forward-line 4) (line-end-position)))))
            (should (string-match-p "# edited\n" marked))
            (save-buffer)
            (kill-buffer)
            (contextls-terminal-test--visit file)
            ;; The server followed the region's place: stale, at 31-35, highlighted there.
            (contextls-test--wait
             (lambda () (let ((item (car (contextls--items (contextls--root)))))
                          (and (eq (plist-get item :stale) t)
                               (equal (plist-get (plist-get item :metadata) :startLine) 31)
                               (contextls--overlays-of (contextls--root) "ctx-1")))))
            (should (string-match-p "·1 stale " (contextls-terminal-test--drawn "·1 stale ")))
            (let ((overlay (car (contextls--overlays-of (contextls--root) "ctx-1"))))
              (should (= (line-number-at-pos (overlay-start overlay)) 31))
              (should (= (line-number-at-pos (overlay-end overlay)) 36)))
            (contextls-terminal-test--goto-line 33)
            (contextls-terminal-test--press "C-c x u")
            (redisplay t)
            (should (string-match-p
                     "contextls: read ctx-1 (json/decoder.py:31-35, [0-9,]+ tokens) again"
                     (contextls-terminal-test--echo-area "read ctx-1")))
            (should (equal (plist-get (car (contextls-test--items (contextls--root))) :content)
                           marked))
            (should (string-match-p " ctx [0-9.]+k?/8k gpt-4o·1/50 "
                                    (contextls-terminal-test--drawn "·1/50 "))))
        (global-eldoc-mode 1)
        (define-key map (kbd "C-c x") nil)))))

;;; Typing on a long line

(defun contextls-terminal-test--type-for-real (keys)
  "Type KEYS into this frame through tmux, as a person would, and let Emacs read them.
Returns how many of them the command loop handled, once it handled them all."
  (let* ((count (length keys))
         (handled 0)
         (counter (lambda () (when (eq this-command 'self-insert-command)
                               (setq handled (1+ handled)))))
         (deadline (+ (float-time) 20))
         (watch nil))
    (add-hook 'post-command-hook counter)
    (unwind-protect
        (progn
          (run-at-time 0.1 nil (lambda ()
                                 (call-process "tmux" nil nil nil "send-keys" "-t"
                                               (getenv "TMUX_PANE") "-l" keys)))
          ;; Left from a timer, not from the hook: the command loop is between
          ;; commands then.
          (setq watch (run-at-time 0.05 0.05
                                   (lambda ()
                                     (when (or (>= handled count) (> (float-time) deadline))
                                       (exit-recursive-edit)))))
          (recursive-edit))
      (cancel-timer watch)
      (remove-hook 'post-command-hook counter))
    handled))

(ert-deftest contextls-terminal-test-typing-on-a-246k-line-converts-nothing ()
  (contextls-terminal-test--with-project
      `(("data.json" . ,(concat "{\"first\": 1}\n\n"
                                (with-temp-buffer
                                  (insert "{\"rows\": [")
                                  (while (< (buffer-size) 246000)
                                    (insert "{\"id\": 1, \"name\": \"a row\", \"tag\": \"😀\"}, "))
                                  (insert "{}]}\n")
                                  (buffer-string)))))
    (contextls-terminal-test--visit (expand-file-name "data.json"))
    (contextls-test--select-line 1)
    (contextls-add-region (region-beginning) (region-end))
    (should contextls--synced)
    (contextls-terminal-test--goto-line 3)
    (end-of-line)
    (backward-char 2)
    (let ((conversions 0)
          (count (lambda (&rest _) (setq conversions (1+ conversions)))))
      (advice-add 'contextls--lsp-position :before count)
      (unwind-protect
          (should (= (contextls-terminal-test--type-for-real "typed-by-hand") 13))
        (advice-remove 'contextls--lsp-position count))
      ;; Thirteen keystrokes, each drawn on a 246K-character line: no position
      ;; was converted while typing (the burst is sent once, when typing stops).
      (should (<= conversions 1))
      (should (equal (buffer-substring-no-properties (- (line-end-position) 20)
                                                     (line-end-position))
                     "}, {}typed-by-hand]}")))
    (contextls--send-changes (current-buffer))
    ;; The server's copy of the line's end (a region without its text is cut
    ;; from the server's copy of the buffer).
    (should (string-suffix-p "typed-by-hand]}"
                             (plist-get (plist-get (contextls--request
                                                    :contextls/addRegion
                                                    (contextls--workspace-params
                                                     (contextls--root)
                                                     :uri (contextls--uri buffer-file-name)
                                                     :range (contextls--range
                                                             (- (line-end-position) 20)
                                                             (line-end-position))))
                                                   :item)
                                        :content)))))

;;; The server going away, and coming back

(ert-deftest contextls-terminal-test-the-cross-clears-by-itself-when-the-daemon-is-back ()
  (contextls-terminal-test--with-project '(("back.py" . "a = 1\nb = 2\n"))
    (let* ((contextls-server-command nil)
           (contextls-use-daemon t)
           (exec-path (cons (file-name-directory contextls-test--server) exec-path)))
      (unwind-protect
          (progn
            (contextls-terminal-test--visit (expand-file-name "back.py"))
            (contextls-test--select-line 2)
            (contextls-add-region (region-beginning) (region-end))
            (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))
            (let ((before (contextls--window-connection (contextls--window-of (contextls--root)))))
              (should (zerop (call-process contextls-test--server nil nil nil "daemon" "stop")))
              (contextls-test--wait (lambda () (eq (contextls--state before) 'crashed)))
              (should (string-match-p " ctx ✗ " (contextls-terminal-test--drawn " ctx ✗ ")))
              ;; Said in words of our own, not jsonrpc's `Server exited with status 0'.
              (should (string-match-p "\\`contextls: the server stopped (it exited: a `contextls daemon stop', or a new version); connecting again"
                                      (contextls-terminal-test--echo-area "server stopped")))
              ;; No command: Emacs starts it again in the background.  Starting
              ;; returns at once, before the server answers: nothing waits on it.
              (let ((returned nil) (typed nil))
                (let ((note (lambda (conn) (push (contextls--state conn) returned))))
                  (advice-add 'contextls--start-again :filter-return
                              (lambda (conn) (funcall note conn) conn)
                              '((name . contextls-terminal-test)))
                  (unwind-protect
                      (contextls-test--wait
                       (lambda () (not (eq (contextls--window-connection
                                            (contextls--window-of (contextls--root)))
                                           before)))
                       10)
                    (advice-remove 'contextls--start-again 'contextls-terminal-test)))
                (should (equal returned '(starting)))
                (let ((after (contextls--window-connection (contextls--window-of (contextls--root)))))
                  ;; A key typed meanwhile is handled as any other.
                  (goto-char (point-max))
                  (setq typed (contextls--state after))
                  (should (= (contextls-terminal-test--type-for-real "c") 1))
                  (message "contextls: a key typed while the new server was %s was handled" typed))
                (contextls-test--wait
                 (lambda () (string-match-p "·1/50 " (contextls-terminal-test--formatted))) 20)
                (let ((line (contextls-terminal-test--drawn "·1/50 ")))
                  (should (string-match-p " ctx [0-9]+/8k gpt-4o·1/50 " line))
                  (should-not (string-match-p "✗" line)))
                (should-not (with-current-buffer (messages-buffer)
                              (string-match-p "\\[jsonrpc\\]" (buffer-string)))))
              ;; The buffer is open on the new server: its edits move the region.
              (goto-char (point-min))
              (insert "# new first line\n")
              (contextls--send-changes (current-buffer))
              (contextls-test--wait
               (lambda () (eql (contextls-test--meta (car (contextls-test--items)) :startLine) 3)))))
        (ignore-errors (contextls-shutdown (contextls--root)))
        (call-process contextls-test--server nil nil nil "daemon" "stop")))))

(ert-deftest contextls-terminal-test-no-warnings-window-with-this-jsonrpc ()
  ;; jsonrpc 1.0.25 and later warn about `:events-buffer-scrollback-size' in a
  ;; *Warnings* window; test-emacs.sh runs this suite with Emacs 28's jsonrpc
  ;; and with GNU ELPA's.
  (contextls-terminal-test--with-project '(("w.py" . "w = 1\n"))
    (contextls-terminal-test--visit (expand-file-name "w.py"))
    (contextls-add-text "a note")
    (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))
    (message "contextls: jsonrpc %s from %s" (contextls-terminal-test--jsonrpc-version)
             (locate-library "jsonrpc"))
    (should-not (get-buffer "*Warnings*"))
    (should-not (seq-find (lambda (line) (string-match-p "\\*Warnings\\*" line))
                          (contextls-terminal-test--screen)))))

(defun contextls-terminal-test--jsonrpc-version ()
  "The version of the jsonrpc library loaded."
  (require 'find-func)
  (with-temp-buffer
    (insert-file-contents (find-library-name "jsonrpc"))
    (if (re-search-forward "^;; Version: \\(.*\\)$" nil t) (match-string 1) "unknown")))

;;; Definitions, outlines, the model

(ert-deftest contextls-terminal-test-views-and-the-model-as-drawn ()
  (contextls-terminal-test--with-project
      '(("circle.py" . "def radius(c):\n    return c.r\n")
        ("shapes.py" . "class Square:\n    def area(self):\n        return self.side ** 2\n\n\ndef total(shapes):\n    return sum(s.area() for s in shapes)\n"))
    (progn
      (define-key global-map (kbd "C-c x") contextls-command-map)
      (unwind-protect
          (progn
            (contextls-terminal-test--visit (expand-file-name "shapes.py"))
            ;; The definition at point, by its name, with the key a person presses.
            (contextls-terminal-test--goto-line 3)
            (contextls-terminal-test--press "C-c x f")
            (should (string-match-p "contextls: added ctx-1 (shapes.py:2-3 (Square.area), [0-9]+ tokens)"
                                    (contextls-terminal-test--echo-area "added ctx-1")))
            ;; The file as its outline.
            (contextls-terminal-test--goto-line 7)
            (contextls-terminal-test--press "C-c x o")
            ;; An outline hides bodies: the definition shown whole stays an item of its own.
            (should (string-match-p "contextls: added ctx-2 (shapes.py, outline, [0-9]+ tokens)"
                                    (contextls-terminal-test--echo-area "added ctx-2")))
            (should (string-match-p " ctx [0-9]+/8k gpt-4o·2/50 "
                                    (contextls-terminal-test--drawn "gpt-4o·2/50 ")))
            ;; A definition of another file beside it.
            (find-file (expand-file-name "circle.py"))
            (contextls-terminal-test--goto-line 2)
            (contextls-terminal-test--press "C-c x f")
            (should (string-match-p "contextls: added ctx-3 (circle.py:1-2 (radius), [0-9]+ tokens)"
                                    (contextls-terminal-test--echo-area "added ctx-3")))
            ;; The inspector says how each item is shown.
            (contextls-list)
            (redisplay t)
            (let ((screen (contextls-terminal-test--screen)))
              (should (seq-find (lambda (line) (string-match-p "ctx-2 +file +outline +shapes.py " line))
                                screen))
              (should (seq-find (lambda (line) (string-match-p "ctx-3 +code +definition +circle.py:1-2 (radius)" line))
                                screen))
              (should (seq-find (lambda (line) (string-match-p "tokens of gpt-4o (exact) · 3/50 items (1 outlined)" line))
                                screen)))
            ;; `e' on the outline shows it whole.
            (goto-char (point-min))
            (forward-line 1)
            (should (equal (tabulated-list-get-id) "ctx-2"))
            (contextls-terminal-test--press "e")
            (should (string-match-p "contextls: ctx-2 (shapes.py, [0-9]+ tokens) shown whole"
                                    (contextls-terminal-test--echo-area "shown whole")))
            (contextls-test--wait
             (lambda () (seq-find (lambda (line) (string-match-p "ctx-2 +file +whole " line))
                                  (progn (redisplay t) (contextls-terminal-test--screen)))))
            (quit-window)
            ;; The model set from the command line: the mode line names it.
            (contextls-test--cli "config" "set" "model" "claude-opus-4.7")
            (contextls-test--wait
             (lambda () (string-match-p "claude-opus-4.7·3/50" (contextls-terminal-test--formatted))))
            (should (string-match-p " ctx [0-9.]+k?/8k claude-opus-4.7·3/50 "
                                    (contextls-terminal-test--drawn "claude-opus-4.7·3/50 "))))
        (define-key global-map (kbd "C-c x") nil)))))

;;; Search

(ert-deftest contextls-terminal-test-search-hits-are-listed-best-first ()
  (contextls-terminal-test--with-project '(("s.py" . "s = 1\n"))
    (let ((contextls-settings '(:maxItems 1))
          screen)
      (contextls-terminal-test--visit (expand-file-name "s.py"))
      ;; The best hit has the later id: a sorted list would show it last.
      (contextls-add-text "aaa retry once")
      (contextls-add-text "zzz retry the upload retry the upload retry")
      (contextls-add-text "mmm unrelated text")
      (minibuffer-with-setup-hook
          (lambda ()
            (run-at-time 0.3 nil
                         (lambda ()
                           (minibuffer-completion-help)
                           (redisplay t)
                           (setq screen (contextls-terminal-test--screen))
                           (abort-recursive-edit))))
        (condition-case nil
            (contextls-search "retry" 'keyword)
          (quit nil)))
      (let ((best (cl-position "ctx-2  zzz" screen :test #'string-prefix-p))
            (next (cl-position "ctx-1  aaa" screen :test #'string-prefix-p)))
        (should best)
        (should next)
        (should (< best next))))))

;;; Cost (a benchmark: `scripts/test-emacs.sh bench' runs it, the suite does not)

(ert-deftest contextls-terminal-bench-redisplay-with-the-budget-in-the-mode-line ()
  (contextls-terminal-test--with-project '(("cost.py" . "x = 1\n"))
    (contextls-terminal-test--visit (expand-file-name "cost.py"))
    (contextls-add-text "something in the window")
    (should (string-match-p "·1/50 " (contextls-terminal-test--drawn "·1/50 ")))
    (let (with without)
      ;; Many short blocks, alternating, and the median of each side: load on
      ;; the machine weighs on both alike.  Without the mode's variable, its
      ;; entry draws nothing: the same mode line without contextls.
      (dotimes (block 30)
        (dolist (on (if (cl-evenp block) '(t nil) '(nil t)))
          (setq contextls-mode on)
          (force-mode-line-update)
          (redisplay t)
          (let ((start (float-time)))
            (dotimes (_ 100)
              (force-mode-line-update)
              (redisplay t))
            (let ((per (/ (* 1000 (- (float-time) start)) 100)))
              (if on (push per with) (push per without))))))
      (setq contextls-mode t)
      (let ((with-ms (nth 15 (sort with #'<)))
            (without-ms (nth 15 (sort without #'<))))
        (message "bench: a redisplay takes %.3f ms with the budget in the mode line, %.3f without: %+.3f ms"
                 with-ms without-ms (- with-ms without-ms))))))

;;; Running

(defun contextls-terminal-test-run (results &optional selector)
  "Run the terminal tests (or those SELECTOR picks), write what they said to RESULTS, and exit."
  (run-with-timer
   0.5 nil
   (lambda ()
     ;; ERT shows its progress in the mode line, where the tests look.
     (setq minor-mode-alist (seq-remove (lambda (entry)
                                          (eq (car-safe entry) 'ert--current-run-stats))
                                        minor-mode-alist))
     (let* ((stats (ert-run-tests-batch (or selector "^contextls-terminal-test-")))
            (passed (ert-stats-completed-expected stats))
            (failed (+ (ert-stats-completed-unexpected stats)
                       (- (ert-stats-total stats) (ert-stats-completed stats)))))
       (message "terminal: %d passed, %d failed" passed failed)
       (with-current-buffer (messages-buffer)
         (when (get-buffer "*Warnings*")
           (let ((inhibit-read-only t))  ; *Messages* is read-only
             (goto-char (point-max))
             (insert-buffer-substring "*Warnings*")))
         (write-region (point-min) (point-max) results))
       (kill-emacs (if (zerop failed) 0 1))))))

(provide 'contextls-terminal-test)
;;; contextls-terminal-test.el ends here
