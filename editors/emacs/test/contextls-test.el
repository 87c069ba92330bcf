;;; contextls-test.el --- ERT tests of contextls.el against the real server  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by scripts/test-emacs.sh: emacs --batch, the real `contextls serve'
;; from the project's venv ($CONTEXTLS_TEST_SERVER), a temporary workspace
;; and database for each test.  What the server holds is read back over the
;; client's own connection with `contextls/list', so every range and text
;; is checked where it ends up.

;;; Code:

(require 'ert)
(require 'json)
(require 'comint)
(require 'flymake)
(require 'compile)
(require 'contextls)

(defconst contextls-test--dir (file-name-directory (or load-file-name buffer-file-name)))

(defconst contextls-test--schema
  (expand-file-name "../../../clients/protocol/contextls.schema.json" contextls-test--dir))

(defvar contextls-test--server (or (getenv "CONTEXTLS_TEST_SERVER") "contextls"))

(defun contextls-test--wait (predicate &optional seconds)
  "Wait until PREDICATE holds (at most SECONDS), serving process output meanwhile."
  (let ((deadline (+ (float-time) (or seconds 10))))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (should (funcall predicate))))

(defmacro contextls-test--with-workspace (files &rest body)
  "Run BODY in a fresh workspace holding FILES ((NAME . CONTENT) ...), then clean up."
  (declare (indent 1))
  `(let* ((root (make-temp-file "contextls-ws" t))
          (state (make-temp-file "contextls-state" t))
          (process-environment (cons (concat "CONTEXTLS_STORAGE=" state "/db.sqlite3")
                                     process-environment))
          (contextls-server-command (list contextls-test--server "serve"))
          (contextls-settings nil)
          (default-directory (file-name-as-directory root))
          (transient-mark-mode t)
          (inhibit-message t))
     (unwind-protect
         (progn
           (dolist (file ,files)
             (let ((coding-system-for-write 'no-conversion))
               (with-temp-file (expand-file-name (car file) root)
                 (set-buffer-multibyte nil)
                 (insert (encode-coding-string (cdr file) 'utf-8)))))
           ,@body)
       (ignore-errors (contextls-shutdown (directory-file-name root)))
       (dolist (buffer (buffer-list))
         (when (and (buffer-file-name buffer)
                    (string-prefix-p root (buffer-file-name buffer)))
           (with-current-buffer buffer (set-buffer-modified-p nil))
           (kill-buffer buffer)))
       (clrhash contextls--overlays)
       (delete-directory root t)
       (delete-directory state t))))

(defun contextls-test--items ()
  "The server's window, newest last."
  (append (plist-get (contextls--request :contextls/list (list :workspace
                                                               (contextls--uri default-directory)))
                     :items)
          nil))

(defun contextls-test--meta (item key)
  "KEY of ITEM's metadata."
  (plist-get (plist-get item :metadata) key))

(defun contextls-test--select-line (line &optional from-text)
  "Select line LINE (1-based); from the end of FROM-TEXT on it, if given."
  (goto-char (point-min))
  (forward-line (1- line))
  (when from-text (search-forward from-text (line-end-position)))
  (push-mark (point) t t)
  (end-of-line))

;;; The protocol

(ert-deftest contextls-test-methods-and-fields-match-the-schema ()
  (let* ((schema (json-parse-string (with-temp-buffer
                                      (insert-file-contents contextls-test--schema)
                                      (buffer-string))
                                    :object-type 'hash-table))
         (methods (gethash "x-methods" schema))
         (defs (gethash "$defs" schema)))
    (dolist (method contextls--methods)
      (should (gethash (symbol-name method) methods)))
    (dolist (notification '("contextls/didChangeStatus" "contextls/didEvict"))
      (should (gethash notification (gethash "x-notifications" schema))))
    (let ((fields '(("AddRegionParams" "uri" "range" "text" "language" "pin" "workspace")
                    ("AddFileParams" "uri" "language" "pin")
                    ("AddSymbolParams" "uri" "name" "symbolKind" "range" "text")
                    ("AddTextParams" "kind" "content" "metadata" "pin")
                    ("RemoveParams" "ids") ("PinParams" "id" "pinned")
                    ("ClearParams" "keepPinned") ("SearchParams" "query")
                    ("RestoreParams" "ids") ("RenderParams" "format")
                    ("Status" "tokens" "maxTokens" "itemCount" "maxItems" "percent"
                     "nextEviction" "lastEvicted" "staleCount")
                    ("RefreshParams" "ids") ("RefreshResult" "refreshed")
                    ("ForgetParams" "ids" "query" "dryRun") ("ForgetResult" "forgotten")
                    ("ContextItem" "id" "kind" "label" "tokens" "pinned" "stale" "metadata")
                    ("DidEvictParams" "items"))))
      (dolist (entry fields)
        (let ((properties (gethash "properties" (gethash (car entry) defs))))
          (dolist (field (cdr entry))
            (should (gethash field properties))))))))

;;; Adding

(ert-deftest contextls-test-region-with-emoji-tabs-and-crlf ()
  (contextls-test--with-workspace
      '(("emoji.py" . "# café 😀 tail\nmiddle\n\tindented = \"é😀x\"\nlast line\n")
        ("dos.py" . "one\r\ntwo\r\nthree\r\nfour\r\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "emoji.py"))
      ;; From after the emoji to the end of line 1: UTF-16 column 9.
      (contextls-test--select-line 1 "😀")
      (should (equal (contextls--lsp-position (mark)) '(:line 0 :character 9)))
      (contextls-add-region (region-beginning) (region-end))
      ;; Line 3 (not next to line 1, which would merge), after a tab and an emoji.
      (contextls-test--select-line 3 "😀")
      (should (equal (contextls--lsp-position (mark)) '(:line 2 :character 16)))
      (should (equal (contextls--lsp-position (point)) '(:line 2 :character 18)))
      (contextls-add-region (region-beginning) (region-end)))
    (with-current-buffer (find-file-noselect (expand-file-name "dos.py"))
      (should (eq (coding-system-eol-type buffer-file-coding-system) 1))
      (goto-char (point-min)) (forward-line 1)
      (push-mark (point) t t)
      (forward-line 2)
      (contextls-add-region (region-beginning) (region-end)))
    (let ((items (contextls-test--items)))
      (should (equal (mapcar (lambda (i) (plist-get i :content)) items)
                     '(" tail" "x\"" "two\nthree\n")))
      (should (equal (contextls-test--meta (nth 2 items) :startLine) 2))
      (should (equal (contextls-test--meta (nth 2 items) :endLine) 3))
      (should (equal (contextls-test--meta (nth 1 items) :startLine) 3))
      (should (equal (contextls-test--meta (car items) :path) "emoji.py")))))

(ert-deftest contextls-test-unsaved-edits-are-what-is-added ()
  (contextls-test--with-workspace '(("a.py" . "saved\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "a.py"))
      (goto-char (point-max))
      (insert "unsaved line\n")
      (contextls-add-buffer)
      (should (equal (plist-get (car (last (contextls-test--items))) :content)
                     "saved\nunsaved line\n")))))

(ert-deftest contextls-test-buffer-without-file-is-code-text ()
  (contextls-test--with-workspace nil
    (with-temp-buffer
      (setq default-directory (file-name-as-directory root))
      (emacs-lisp-mode)
      (insert "(message \"scratch\")")
      (contextls-add-buffer t))
    (let ((item (car (contextls-test--items))))
      (should (equal (plist-get item :kind) "code"))
      (should (eq (plist-get item :pinned) t))
      (should (equal (contextls-test--meta item :language) "emacs-lisp")))))

(ert-deftest contextls-test-defun-is-a-symbol ()
  (contextls-test--with-workspace
      '(("m.el" . ";;; m.el  -*- lexical-binding: t -*-\n(defun m-one ()\n  1)\n\n(defun m-two ()\n  \"Two.\"\n  2)\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "m.el"))
      (goto-char (point-min))
      (search-forward "\"Two")
      (contextls-add-defun))
    (let ((item (car (contextls-test--items))))
      (should (equal (contextls-test--meta item :symbol) "m-two"))
      (should (equal (contextls-test--meta item :startLine) 5))
      (should (equal (contextls-test--meta item :endLine) 7))
      (should (string-prefix-p "(defun m-two" (plist-get item :content))))))

(defun contextls-test--flymake-backend (report &rest _)
  "A Flymake backend that reports one error on line 2, through REPORT."
  (save-excursion
    (goto-char (point-min)) (forward-line 1)
    (funcall report (list (flymake-make-diagnostic
                           (current-buffer) (line-beginning-position) (line-end-position)
                           :error "name 'undefined' is not defined")))))

(ert-deftest contextls-test-errors-from-flymake-and-compilation ()
  (contextls-test--with-workspace '(("bad.py" . "x = 1\ny = undefined\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "bad.py"))
      (add-hook 'flymake-diagnostic-functions #'contextls-test--flymake-backend nil t)
      (flymake-mode 1)
      (flymake-start)
      (contextls-test--wait (lambda () (flymake-diagnostics)))
      (goto-char (point-min)) (forward-line 1)
      (contextls-add-error))
    (with-current-buffer (get-buffer-create "*compilation-test*")
      (setq default-directory (file-name-as-directory root))
      (insert "bad.py:2:5: E0602 undefined name\n")
      (compilation-mode)
      (goto-char (point-min))
      (contextls-add-error)
      (kill-buffer))
    (let ((items (contextls-test--items)))
      (should (equal (mapcar (lambda (i) (plist-get i :kind)) items) '("error" "error")))
      (should (equal (plist-get (car items) :content)
                     "bad.py:2: error: name 'undefined' is not defined"))
      (should (equal (plist-get (cadr items) :content) "bad.py:2:5: E0602 undefined name")))))

(ert-deftest contextls-test-repl-history-region-and-last-inputs ()
  (contextls-test--with-workspace nil
    (with-current-buffer (get-buffer-create "*repl-test*")
      (setq default-directory (file-name-as-directory root))
      (comint-mode)
      (setq-local comint-use-prompt-regexp t)
      (setq-local comint-prompt-regexp "^>>> ")
      (let ((inhibit-read-only t))
        (insert ">>> 1 + 1\n2\n>>> print('a')\na\n>>> 6 * 7\n42\n"))
      (let ((contextls-repl-inputs 2))
        (contextls-add-repl-history))
      (goto-char (point-min))
      (push-mark (point) t t)
      (forward-line 2)
      (contextls-add-repl-history)
      (kill-buffer))
    (let ((items (contextls-test--items)))
      (should (equal (plist-get (car items) :kind) "repl-history"))
      (should (equal (plist-get (car items) :content) ">>> print('a')\na\n>>> 6 * 7\n42"))
      (should (equal (plist-get (cadr items) :content) ">>> 1 + 1\n2")))))

(ert-deftest contextls-test-text-and-its-report ()
  (contextls-test--with-workspace nil
    (let ((inhibit-message nil) (messages nil))
      (cl-letf (((symbol-function 'message)
                 (lambda (fmt &rest args) (push (apply #'format fmt args) messages))))
        (contextls-add-text "a note for the model"))
      (should (string-match-p "added ctx-1 (text: a note for the model, [0-9]+ tokens)"
                              (car messages))))
    (should (equal (plist-get (car (contextls-test--items)) :content) "a note for the model"))
    (should-error (contextls-add-text "   ") :type 'user-error)))

;;; Mode line, highlights, evictions

(ert-deftest contextls-test-mode-line-overlays-and-eviction ()
  (contextls-test--with-workspace
      '(("a.py" . "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n"))
    (let ((contextls-settings '(:maxItems 2))
          (root (directory-file-name root))
          (inhibit-message nil)
          (messages nil))
      (contextls-mode 1)
      (unwind-protect
          (with-current-buffer (find-file-noselect (expand-file-name "a.py"))
            (contextls-test--select-line 1)
            (contextls-add-region (region-beginning) (region-end))
            (contextls-test--wait (lambda () (gethash "ctx-1" contextls--overlays)))
            (should (string-match-p "^ ctx [0-9]+/8k·1/2$" (contextls--mode-line-string root)))
            (let ((overlay (car (gethash "ctx-1" contextls--overlays))))
              (should (eq (overlay-get overlay 'face) 'contextls-region))
              (should (= (overlay-start overlay) (point-min))))
            (should (member 'contextls--mode-line mode-line-misc-info))
            (contextls-test--select-line 3)
            (contextls-add-region (region-beginning) (region-end))
            (cl-letf (((symbol-function 'message)
                       (lambda (fmt &rest args) (push (apply #'format fmt args) messages))))
              (contextls-add-text "third pushes the first out"))
            (should (seq-find (lambda (m) (string-match-p
                                           "evicted ctx-1 (a.py:1, [0-9]+ tokens) to the archive; M-x contextls-restore brings it back"
                                           m))
                              messages))
            (contextls-test--wait (lambda () (null (gethash "ctx-1" contextls--overlays))))
            (should (gethash "ctx-2" contextls--overlays))
            (let ((text (contextls--mode-line-string root)))
              (should (string-match-p "·2/2$" text))
              (should (eq (get-text-property 1 'face text) 'error))
              (should (string-match-p "Last evicted: ctx-1"
                                      (get-text-property 1 'help-echo text)))
              (should (string-match-p "Next to be evicted: ctx-2"
                                      (get-text-property 1 'help-echo text)))))
        (contextls-mode -1)))))

(ert-deftest contextls-test-warning-face-near-the-budget ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxTokens 10)))
      (contextls-add-text "one two three four five six seven eight nine")
      (let ((text (contextls--mode-line-string (directory-file-name root))))
        (should (eq (get-text-property 1 'face text) 'warning))))))

(ert-deftest contextls-test-stale-region-after-an-edit ()
  (contextls-test--with-workspace '(("s.py" . "keep = 1\nchange = 2\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "s.py"))
      (contextls-test--select-line 2)
      (contextls-add-region (region-beginning) (region-end))
      (goto-char (point-max)) (forward-line -1)
      (delete-region (line-beginning-position) (line-end-position))
      (insert "changed = 3")
      (contextls--send-change (current-buffer))
      (contextls-test--wait (lambda () (eq (plist-get (car (contextls-test--items)) :stale) t)))
      (contextls-test--wait
       (lambda () (eq (overlay-get (car (gethash "ctx-1" contextls--overlays)) 'face)
                      'contextls-stale-region))))))

(ert-deftest contextls-test-a-file-changed-on-disk-is-stale-until-read-again ()
  (contextls-test--with-workspace '(("d.py" . "a = 1\nb = 2\nc = 3\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "d.py"))
      (contextls-test--select-line 2)
      (contextls-add-region (region-beginning) (region-end))
      ;; While Emacs has the file, its buffer is the truth: close it first.
      (kill-buffer))
    ;; Changed behind Emacs's back: the server looks at the file on its own.
    (with-temp-file (expand-file-name "d.py") (insert "a = 1\nb = 9\nc = 3\n"))
    (contextls-test--wait
     (lambda () (let ((status (gethash (directory-file-name root) contextls--statuses)))
                  (and (listp status) (eql (plist-get status :staleCount) 1)))))
    (should (string-match-p "1 stale" (contextls--mode-line-string (directory-file-name root))))
    (let ((result (contextls-reread)))
      (should (string-prefix-p "b = 9"
                               (plist-get (aref (plist-get result :refreshed) 0) :content))))
    (should (eq (plist-get (car (contextls-test--items)) :stale) :json-false))))

(ert-deftest contextls-test-forget-asks-and-removes-for-good ()
  (contextls-test--with-workspace nil
    (contextls-add-text "a note with hunter2 in it")
    (contextls-add-text "another note")
    (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_prompt) nil)))
      (should-not (contextls-forget "ctx-1")))
    (should (= (length (contextls-test--items)) 2))
    (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_prompt) t)))
      (contextls-forget nil "hunter2"))
    (should (equal (mapcar (lambda (item) (plist-get item :id)) (contextls-test--items))
                   '("ctx-2")))
    (should (equal (append (plist-get (contextls--request
                                       :contextls/search
                                       (list :workspace (contextls--uri default-directory)
                                             :query "hunter2"))
                                      :hits)
                           nil)
                   nil))))

(ert-deftest contextls-test-the-shared-daemon-pushes-what-the-cli-changes ()
  (contextls-test--with-workspace '(("x.py" . "x = 1\n"))
    (let* ((runtime (make-temp-file "cls-" t))
           (process-environment (append (list (concat "CONTEXTLS_RUNTIME_DIR=" runtime)
                                              (concat "CONTEXTLS_STATE_DIR=" runtime))
                                        process-environment))
           (contextls-server-command nil)
           (contextls-use-daemon t)
           (exec-path (cons (file-name-directory contextls-test--server) exec-path)))
      (unwind-protect
          (progn
            (should (equal (contextls--server-command) '("contextls" "connect")))
            (let ((contextls-settings '(:storage "/tmp/other.sqlite3")))
              (should (equal (contextls--server-command)
                             '("contextls" "connect" "--storage" "/tmp/other.sqlite3"))))
            (contextls-add-text "from Emacs")
            ;; The CLI reaches the same daemon; Emacs hears of its change unasked.
            (should (zerop (call-process contextls-test--server nil nil nil
                                         "add-text" "from the command line")))
            (contextls-test--wait
             (lambda () (let ((status (gethash (directory-file-name root) contextls--statuses)))
                          (and (listp status) (eql (plist-get status :itemCount) 2)))))
            (should (equal (mapcar (lambda (item) (plist-get item :content))
                                   (contextls-test--items))
                           '("from Emacs" "from the command line"))))
        (ignore-errors (contextls-shutdown (directory-file-name root)))
        (call-process contextls-test--server nil nil nil "daemon" "stop")
        (delete-directory runtime t)))))

(ert-deftest contextls-test-overlays-follow-merges-and-restores ()
  (contextls-test--with-workspace
      '(("m.py" . "one = 1\ntwo = 2\nthree = 3\nfour = 4\nfive = 5\n"))
    (let ((contextls-settings '(:maxItems 2)))
      (with-current-buffer (find-file-noselect (expand-file-name "m.py"))
        (contextls-test--select-line 1)
        (contextls-add-region (region-beginning) (region-end))
        (contextls-test--select-line 2)
        ;; Lines 1 and 2 touch: the server merges them into one item.
        (let ((merged (contextls-add-region (region-beginning) (region-end))))
          (contextls-test--wait
           (lambda () (and (null (gethash "ctx-1" contextls--overlays))
                           (gethash (plist-get merged :id) contextls--overlays))))
          (let ((overlay (car (gethash (plist-get merged :id) contextls--overlays))))
            (should (= (overlay-start overlay) (point-min)))
            (should (= (line-number-at-pos (overlay-end overlay)) 3))))
        (contextls-add-text "first")
        (contextls-add-text "second")  ; the merged region is evicted...
        (contextls-test--wait (lambda () (zerop (hash-table-count contextls--overlays))))
        (contextls-restore "ctx-2")    ; ...and comes back, highlighted again
        (contextls-test--wait (lambda () (gethash "ctx-2" contextls--overlays)))))))

;;; The inspector

(ert-deftest contextls-test-inspector-pin-remove-and-visit ()
  (contextls-test--with-workspace '(("i.py" . "first = 1\nsecond = 2\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "i.py"))
      (contextls-test--select-line 1)
      (contextls-add-region (region-beginning) (region-end)))
    (contextls-add-text "a note")
    (with-current-buffer (contextls-list)
      (should (string-match-p "\\[[█░]+\\] .*tokens · 2/50 items" (format "%s" header-line-format)))
      (goto-char (point-min))
      (should (equal (tabulated-list-get-id) "ctx-2"))  ; newest first
      (contextls-list-toggle-pin)
      (should (eq (plist-get (cadr (contextls-test--items)) :pinned) t))
      (goto-char (point-min))
      (should (string-match-p "P" (aref (tabulated-list-get-entry) 4)))
      (forward-line 1)
      (should (equal (tabulated-list-get-id) "ctx-1"))
      (contextls-list-visit)
      (should (equal (file-name-nondirectory (buffer-file-name)) "i.py"))
      (should (= (line-number-at-pos) 1)))
    (with-current-buffer "*contextls*"
      (goto-char (point-min)) (forward-line 1)
      (contextls-list-mark-delete)
      (contextls-list-execute)
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items)) '("ctx-2")))
      (goto-char (point-min))
      (should (equal (tabulated-list-get-id) "ctx-2"))
      (kill-buffer))))

;;; Using the context

(ert-deftest contextls-test-show-copy-search-restore-clear ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1)))
      (contextls-add-text "the zebracorn grazes")
      (contextls-add-text "something else")
      (should (string-match-p "something else" (with-current-buffer (contextls-show)
                                                 (buffer-string))))
      (should (string-prefix-p "## Context" (contextls-copy)))
      (should (equal (current-kill 0) (contextls-copy)))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt candidates &rest _) (caar candidates))))
        (contextls-search "zebracorn"))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items)) '("ctx-1")))
      (contextls-pin "ctx-1")
      (should (eq (plist-get (car (contextls-test--items)) :pinned) t))
      (contextls-pin "ctx-1" t)
      (contextls-remove "ctx-1")
      (should (null (contextls-test--items)))
      (contextls-restore "ctx-1")
      ;; Restoring what is already in the window changes nothing, and says so.
      (let (said)
        (cl-letf (((symbol-function 'message)
                   (lambda (format &rest args) (push (apply #'format format args) said))))
          (should (equal (append (plist-get (contextls-restore "ctx-1") :alreadyInWindow) nil)
                         '("ctx-1"))))
        (should (member "contextls: ctx-1 is already in the window" said)))
      (cl-letf (((symbol-function 'yes-or-no-p) #'ignore))
        (contextls-clear))
      (should (contextls-test--items))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t)))
        (contextls-clear))
      (should (null (contextls-test--items))))))

(ert-deftest contextls-test-search-by-meaning-says-how-each-hit-was-found ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1))
          offered)
      (contextls-add-text (concat "def _backoff_put(url, body):\n"
                                  "    for attempt in range(5):\n"
                                  "        if put(url, body).ok:\n            return\n"
                                  "        sleep(2 ** attempt)\n"))
      (contextls-add-text "Meeting notes: we agreed to drop Python 3.9 support.")
      ;; By words, the paraphrase finds nothing; by meaning, the function.
      (should-error (contextls-search "where do we retry failed uploads?" 'keyword)
                    :type 'user-error)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt candidates &rest _)
                   (setq offered (mapcar #'car candidates))
                   (caar candidates))))
        (contextls-search "where do we retry failed uploads?" 'semantic))
      (should (string-match-p "\\`ctx-1 .*\\[meaning\\]" (car offered)))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items)) '("ctx-1")))
      ;; The default mode (hybrid here) finds an exact word by both.
      (contextls-add-text "another note")
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt candidates &rest _)
                   (setq offered (mapcar #'car candidates))
                   (caar candidates))))
        (contextls-search "_backoff_put"))
      (should (string-match-p "\\[meaning\\+words\\]\\|\\[words\\+meaning\\]" (car offered))))))

;;; Errors and the server's life

(ert-deftest contextls-test-server-refusal-is-a-user-error-without-overlay ()
  (contextls-test--with-workspace '(("blob.py" . "text\0with a nul\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "blob.py"))
      (let ((err (should-error (contextls-add-buffer) :type 'user-error)))
        (should (string-match-p "binary" (cadr err)))))
    (should (null (contextls-test--items)))
    (should (zerop (hash-table-count contextls--overlays)))
    (let ((contextls-settings '(:maxTokens 5)))
      (contextls-restart)
      (let ((err (should-error (contextls-add-text (make-string 200 ?x)) :type 'user-error)))
        (should (string-match-p "budget" (cadr err)))))))

(ert-deftest contextls-test-killed-server-shows-and-restarts ()
  (contextls-test--with-workspace nil
    (let ((root (directory-file-name root)))
      (contextls-add-text "before the crash")
      (delete-process (jsonrpc--process (gethash root contextls--connections)))
      (contextls-test--wait (lambda () (eq (gethash root contextls--statuses) 'crashed)))
      (should (string-match-p "ctx ✗" (contextls--mode-line-string root)))
      (contextls-add-text "after the crash")
      (should (equal (mapcar (lambda (i) (plist-get i :content)) (contextls-test--items))
                     '("before the crash" "after the crash"))))))

(ert-deftest contextls-test-missing-server-says-how-to-install ()
  (contextls-test--with-workspace nil
    (let ((contextls-server-command '("/nonexistent/contextls" "serve")))
      (let ((err (should-error (contextls-add-text "x") :type 'user-error)))
        (should (string-match-p "pip install" (cadr err)))))))

(provide 'contextls-test)
;;; contextls-test.el ends here
