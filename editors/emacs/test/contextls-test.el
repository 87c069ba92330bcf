;;; contextls-test.el --- ERT tests of contextls against the real server  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by scripts/test-emacs.sh in `emacs --batch'.  What needs a real
;; terminal frame (the mode line as drawn, redisplay cost, the screen while
;; the command line changes the window) is in contextls-terminal-test.el.

;;; Code:

(require 'json)
(require 'comint)
(require 'flymake)
(require 'compile)
(require 'dired)
(require 'contextls-test-helpers)

(defconst contextls-test--schema
  (expand-file-name "../../../clients/protocol/contextls.schema.json" contextls-test--dir))

;;; The protocol

(defun contextls-test--schema ()
  "The generated JSON Schema of the protocol, as hash tables."
  (json-parse-string (with-temp-buffer
                       (insert-file-contents contextls-test--schema)
                       (buffer-string))
                     :object-type 'hash-table))

(ert-deftest contextls-test-methods-and-fields-match-the-schema ()
  (let* ((schema (contextls-test--schema))
         (methods (gethash "x-methods" schema))
         (defs (gethash "$defs" schema)))
    (dolist (method contextls--methods)
      (should (gethash (symbol-name method) methods)))
    (dolist (notification '("contextls/didChangeStatus" "contextls/didEvict"))
      (should (gethash notification (gethash "x-notifications" schema))))
    (dolist (code contextls--error-codes)
      (should (equal (gethash (upcase (replace-regexp-in-string "-" "_" (symbol-name (car code))))
                              (gethash "x-errorCodes" schema))
                     (cdr code))))
    (let ((fields '(("AddRegionParams" "uri" "range" "text" "language" "pin" "workspace")
                    ("AddFileParams" "uri" "language" "pin")
                    ("AddSymbolParams" "uri" "name" "symbolKind" "range" "text")
                    ("AddTextParams" "kind" "content" "metadata" "pin")
                    ("AddFilesParams" "targets" "pin" "force")
                    ("FileTarget" "uri" "glob")
                    ("AddFilesResult" "items" "evicted" "tokens" "skipped" "refused")
                    ("RemoveParams" "ids") ("RemoveResult" "removed")
                    ("PinParams" "id" "pin")
                    ("ClearParams" "keepPinned") ("ClearResult" "cleared" "clearedIds")
                    ("SearchParams" "query" "mode")
                    ("SearchHit" "item" "snippet" "modes" "highlights")
                    ("RestoreParams" "ids" "dryRun") ("RestoreResult" "items" "evicted" "dryRun")
                    ("RenderParams" "format" "maxTokens")
                    ("RenderResult" "text" "tokens" "itemIds" "omittedIds")
                    ("Status" "revision" "tokens" "maxTokens" "itemCount" "maxItems" "percent"
                     "nextEviction" "lastEvicted" "staleCount" "budget" "budgetPolicy" "task"
                     "complexity")
                    ("RefreshParams" "ids") ("RefreshResult" "refreshed")
                    ("ForgetParams" "ids" "query" "dryRun") ("ForgetResult" "forgotten")
                    ("ConfigureParams" "settings" "reset")
                    ("ConfigureResult" "settings" "changed" "evicted" "status")
                    ("ContextItem" "id" "kind" "label" "tokens" "pinned" "stale" "metadata")
                    ("DidEvictParams" "items" "reason")
                    ("AddFileParams" "outline")
                    ("SymbolAtParams" "uri" "position") ("SymbolAtResult" "symbol" "language" "reason")
                    ("SymbolInfo" "name" "kind" "uri")
                    ("AddNamedSymbolParams" "name" "uri" "outline" "pin" "language")
                    ("SetViewParams" "ids" "view") ("SetViewResult" "items" "evicted" "status")
                    ("AddMapParams" "query" "pin")
                    ("ServerInfo" "models") ("ModelChoice" "name" "encoding" "label" "unavailable")
                    ("Status" "model" "countExact" "countLabel" "outlinedCount" "mapCount")
                    ("ContextItem" "view"))))
      (dolist (entry fields)
        (let ((properties (gethash "properties" (gethash (car entry) defs))))
          (dolist (field (cdr entry))
            (should (gethash field properties))))))
    ;; The settings this client offers are the window's, with the same values.
    (let ((properties (gethash "properties" (gethash "WindowSettingsChange" defs))))
      (should (equal (sort (mapcar #'car contextls--window-settings) #'string<)
                     (sort (hash-table-keys properties) #'string<)))
      (dolist (setting contextls--window-settings)
        (when (consp (cdr setting))
          (let ((enum (gethash "enum" (aref (gethash "anyOf" (gethash (car setting) properties))
                                            0))))
            (should (equal (sort (copy-sequence (cdr setting)) #'string<)
                           (sort (append enum nil) #'string<)))))))))

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
      ;; The add leaves the region, as a kill does.
      (should-not (region-active-p))
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

;;; Definitions by name, outlines, the map, the model

(defconst contextls-test--parser-py
  "import os\n\n\nclass Parser:\n    \"\"\"Reads words.\"\"\"\n\n    def parse(self, text):\n        words = text.split()\n        return words\n\n    def other(self):\n        return os.sep\n"
  "A Python file with a class of two methods: parse is lines 7-9.")

(defun contextls-test--item (id)
  "The server's item ID of the current directory's window, or nil."
  (seq-find (lambda (item) (equal (plist-get item :id) id)) (contextls-test--items)))

(ert-deftest contextls-test-a-definition-added-by-name-follows-its-name ()
  (contextls-test--with-workspace (list (cons "p.py" contextls-test--parser-py))
    (with-current-buffer (find-file-noselect (expand-file-name "p.py"))
      (goto-char (point-min))
      (search-forward "words = ")
      (let ((said (contextls-test--messages #'contextls-add-defun)))
        (should (seq-find (lambda (line)
                            (string-match-p "\\`contextls: added ctx-1 (p.py:7-9 (Parser.parse), [0-9]+ tokens)\\'"
                                            line))
                          said)))
      (let ((item (contextls-test--item "ctx-1")))
        (should (equal (contextls-test--meta item :symbol) "Parser.parse"))
        (should (equal (contextls--view item) "definition"))
        (should (string-prefix-p "    def parse(self, text):" (plist-get item :content))))
      ;; Moved below `other' (unsaved): the item goes with it, and is not stale.
      (goto-char (point-min))
      (search-forward "    def parse")
      (beginning-of-line)
      (let ((method (delete-and-extract-region (point) (progn (forward-line 4) (point)))))
        (goto-char (point-max))
        (insert "\n" method))
      (contextls-test--wait
       (lambda () (let ((item (contextls-test--item "ctx-1")))
                    (equal (contextls-test--meta item :startLine) 10))))
      (let ((item (contextls-test--item "ctx-1")))
        (should-not (eq (plist-get item :stale) t))
        (should (equal (contextls-test--meta item :endLine) 12)))
      ;; Deleted: stale, because its definition is missing; its text is kept.
      (goto-char (point-min))
      (search-forward "    def parse")
      (delete-region (line-beginning-position) (point-max))
      (contextls-test--wait
       (lambda () (let ((item (contextls-test--item "ctx-1")))
                    (and (eq (plist-get item :stale) t)
                         (equal (contextls-test--meta item :staleReason) "missing")))))
      (set-buffer-modified-p nil))))

(ert-deftest contextls-test-a-piece-of-a-line-is-labelled-with-its-columns ()
  (contextls-test--with-workspace '(("long.js" . "var total = alpha + beta + gamma;\n\nnext();\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "long.js"))
      (goto-char (point-min))
      (search-forward "alpha")
      (let ((beg (match-beginning 0)))
        (search-forward "beta")
        (let ((said (contextls-test--messages
                     (lambda () (contextls-add-region beg (point))))))
          (should (seq-find (lambda (line)
                              (string-match-p "\\`contextls: added ctx-1 (long.js:1:13-24, [0-9]+ tokens)\\'" line))
                            said))))
      ;; A whole line is named as the line.
      (contextls-test--select-line 3)
      (contextls-add-region (region-beginning) (region-end))
      (should (equal (mapcar (lambda (item) (plist-get item :label)) (contextls-test--items))
                     '("long.js:1:13-24" "long.js:3"))))))

(ert-deftest contextls-test-a-defun-in-a-language-the-server-does-not-parse ()
  (contextls-test--with-workspace '(("x.rb" . "def hello\n  1\nend\n\ndef bye\n  2\nend\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "x.rb"))
      (ruby-mode)
      (goto-char (point-min))
      (search-forward "  2")
      (contextls-add-defun))
    (let ((item (car (contextls-test--items))))
      ;; Named as Emacs's imenu names it (`#bye': an instance method).
      (should (string-suffix-p "bye" (contextls-test--meta item :symbol)))
      (should (equal (contextls-test--meta item :startLine) 5))
      (should (equal (plist-get item :content) "def bye\n  2\nend")))))

(ert-deftest contextls-test-outline-then-whole-then-outline ()
  (contextls-test--with-workspace (list (cons "p.py" contextls-test--parser-py))
    (with-current-buffer (find-file-noselect (expand-file-name "p.py"))
      ;; In a method: the file, as its outline.
      (goto-char (point-min))
      (search-forward "words = ")
      (contextls-add-outline)
      (let ((item (contextls-test--item "ctx-1")))
        (should (equal (plist-get item :kind) "file"))
        (should (equal (contextls--view item) "outline"))
        (should-not (string-match-p "words = text" (plist-get item :content)))
        (should (string-match-p "def parse(self, text):" (plist-get item :content))))
      (let ((said (contextls-test--messages (lambda () (contextls-expand "ctx-1")))))
        (should (seq-find (lambda (line) (string-match-p "\\`contextls: ctx-1 (p.py, [0-9]+ tokens) shown whole\\'" line))
                          said)))
      (let ((item (contextls-test--item "ctx-1")))
        (should (equal (contextls--view item) "whole"))
        (should (string-match-p "words = text.split()" (plist-get item :content))))
      (contextls-outline "ctx-1")
      (should (equal (contextls--view (contextls-test--item "ctx-1")) "outline"))
      (contextls-remove "ctx-1")
      ;; On a class's line: the class, by its name, as its outline.
      (goto-char (point-min))
      (search-forward "class Parser")
      (contextls-add-outline)
      (let ((item (car (last (contextls-test--items)))))
        (should (equal (contextls-test--meta item :symbol) "Parser"))
        (should (equal (plist-get item :view) "outline"))
        (should (string-match-p "(p.py:4-12 (Parser), outline, [0-9]+ tokens)"
                                (contextls--describe item)))))))

(ert-deftest contextls-test-the-map-is-added-and-shown-as-a-map ()
  (contextls-test--with-workspace (list (cons "p.py" contextls-test--parser-py)
                                        (cons "use.py" "from p import Parser\n\n\ndef run(text):\n    return Parser().parse(text)\n"))
    (contextls-test--git-init root)
    (contextls-add-map "parse")
    (let ((item (car (contextls-test--items))))
      (should (equal (plist-get item :view) "map"))
      ;; Its label says it is a map: the view is not said twice.
      (should (string-match-p "\\`ctx-1 (map of the repository, [0-9,]+ tokens)\\'"
                              (contextls--describe item)))
      (should (string-match-p "def parse" (plist-get item :content))))
    (let ((buffer (contextls-list)))
      (with-current-buffer buffer
        (goto-char (point-min))
        (should (string-match-p "\\bmap\\b" (buffer-substring (line-beginning-position)
                                                           (line-end-position))))
        (should (string-match-p "(1 map)" (overlay-get (contextls--budget-overlay)
                                                       'before-string))))
      (kill-buffer buffer))))

(ert-deftest contextls-test-the-model-is-named-wherever-tokens-show ()
  (contextls-test--with-workspace '(("n.py" . "n = 1\n"))
    (contextls-add-text "a note")
    (let ((root (directory-file-name root)))
      (should (string-match-p "\\` ctx [0-9]+/8k gpt-4o·1/50 \\'" (contextls--mode-line-string root)))
      ;; Chosen from the server's list, as a person would.
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt table &rest _)
                   (should (string-match-p "now gpt-4o" prompt))
                   (should (member "claude-opus-4.7" (all-completions "" table)))
                   "claude-opus-4.7")))
        (call-interactively #'contextls-set-model))
      (should (equal (plist-get (contextls--status root) :model) "claude-opus-4.7"))
      (should (string-match-p " ctx [0-9]+/8k claude-opus-4.7·1/50 " (contextls--mode-line-string root)))
      (should (string-match-p "tokens of claude-opus-4.7 (exact)"
                              (get-text-property 1 'help-echo (contextls--mode-line-string root))))
      ;; From the command line, another process: the mode line follows, and
      ;; says an estimate is one.
      (contextls-test--cli "config" "set" "model" "gemini-2.5")
      (contextls-test--wait
       (lambda () (equal (plist-get (contextls--status root) :model) "gemini-2.5")))
      (should (string-match-p " ctx ~[0-9]+/8k gemini-2.5·1/50 " (contextls--mode-line-string root)))
      (should (string-match-p "tokens of gemini-2.5 (estimate (o200k x 1.17"
                              (get-text-property 1 'help-echo (contextls--mode-line-string root))))
      (with-current-buffer (contextls-list)
        (should (string-match-p "tokens of gemini-2.5 (estimate"
                                (overlay-get (contextls--budget-overlay) 'before-string)))
        (kill-buffer)))))

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

(ert-deftest contextls-test-messages-count-in-words ()
  (contextls-test--with-workspace nil
    (let ((inhibit-message nil))
      (should (string-match-p
               "\\`contextls: added ctx-1 (x, [0-9]+ tokens?)\\'"
               (car (contextls-test--messages (lambda () (contextls-add-text "x"))))))
      (should (string-match-p
               "\\`contextls: added ctx-2 (a note for the model, [0-9]+ tokens)\\'"
               (car (contextls-test--messages
                     (lambda () (contextls-add-text "a note for the model"))))))
      (contextls-remove "ctx-2")
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t)))
        (should (equal (contextls-test--messages #'contextls-clear)
                       '("contextls: cleared 1 item to the archive")))))
    (should-error (contextls-add-text "   ") :type 'user-error)))

(ert-deftest contextls-test-add-and-its-evictions-are-one-message ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1))
          (inhibit-message nil))
      (contextls-add-text "first")
      (let ((said (contextls-test--messages
                   (lambda ()
                     (contextls-add-text "second")
                     ;; The push that follows the answer says nothing more.
                     (accept-process-output nil 0.3)
                     (contextls-test--wait
                      (lambda () (eql (plist-get (contextls--status (directory-file-name root))
                                                 :itemCount)
                                      1)))
                     (contextls-add-text "third")
                     (accept-process-output nil 0.3)))))
        (should (equal (length said) 2))
        (should (string-match-p
                 "\\`contextls: added ctx-2 (second, [0-9]+ tokens?); evicted ctx-1 (first, [0-9]+ tokens?) to the archive; M-x contextls-restore brings it back\\'"
                 (car said)))))))

;;; Adding many files

(ert-deftest contextls-test-files-and-folders-from-dired-as-one-set ()
  (contextls-test--with-workspace '(("src/a.py" . "a = 1\n") ("src/b.py" . "b = 2\n")
                                    ("notes.txt" . "some notes\n") ("logo.png" . "\211PNG\r\n\032\n\0\0"))
    (let ((inhibit-message nil))
      (with-current-buffer (dired-noselect root)
        (dired-goto-file (expand-file-name "src" root))
        (dired-mark 1)
        (dired-goto-file (expand-file-name "notes.txt" root))
        (dired-mark 1)
        (let ((said (contextls-test--messages
                     (lambda () (call-interactively #'contextls-add-files)))))
          (should (string-match-p "\\`contextls: added 3 items ([0-9]+ tokens): notes.txt, src/a.py, src/b.py\\'" (car said)))))
      (should (equal (sort (mapcar (lambda (i) (contextls-test--meta i :path))
                                   (contextls-test--items))
                           #'string<)
                     '("notes.txt" "src/a.py" "src/b.py"))))))

(ert-deftest contextls-test-a-bulk-add-that-evicts-most-asks-first ()
  (contextls-test--with-workspace
      (append '(("old.txt" . "one two three four five six seven eight\n"))
              (mapcar (lambda (n) (cons (format "big/f%d.txt" n)
                                        (concat (mapconcat #'number-to-string
                                                           (number-sequence 1 40) " ")
                                                "\n")))
                      (number-sequence 1 3)))
    (let ((contextls-settings '(:maxTokens 300))
          asked)
      (contextls-add-text "keep me out of the way, this is an old note")
      (contextls-add-text "another note that will have to make room")
      (should (= (length (contextls-test--items)) 2))
      ;; No: nothing changes, and the question named what would go.
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (prompt) (setq asked prompt) nil)))
        (should-not (contextls-add-files (list (expand-file-name "big" root)))))
      (should (string-match-p "evicts ctx-1 (keep me" asked))
      (should (= (length (contextls-test--items)) 2))
      ;; Yes: sent again with force.
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t)))
        (contextls-add-files (list (expand-file-name "big" root))))
      (should (equal (sort (delq nil (mapcar (lambda (i) (contextls-test--meta i :path))
                                             (contextls-test--items)))
                           #'string<)
                     '("big/f1.txt" "big/f2.txt" "big/f3.txt")))
      (should-not (member "ctx-1" (mapcar (lambda (i) (plist-get i :id))
                                          (contextls-test--items)))))))

;;; The mode line's text, highlights, evictions

(ert-deftest contextls-test-mode-line-text-overlays-and-eviction ()
  (contextls-test--with-workspace
      '(("a.py" . "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n"))
    (let ((contextls-settings '(:maxItems 2))
          (root (directory-file-name root))
          (inhibit-message nil))
      (with-current-buffer (find-file-noselect (expand-file-name "a.py"))
        (contextls-test--select-line 1)
        (contextls-add-region (region-beginning) (region-end))
        ;; From the answer, at once: no push waited for.
        (should (contextls--overlays-of root "ctx-1"))
        (should (string-match-p "\\` ctx [0-9]+/8k gpt-4o·1/2 \\'" (contextls--mode-line-string root)))
        (let ((overlay (car (contextls--overlays-of root "ctx-1"))))
          (should (eq (overlay-get overlay 'face) 'contextls-region))
          (should (= (overlay-start overlay) (point-min))))
        (contextls-test--select-line 3)
        (contextls-add-region (region-beginning) (region-end))
        (let ((said (contextls-test--messages
                     (lambda () (contextls-add-text "third pushes the first out")))))
          (should (string-match-p
                   "evicted ctx-1 (a.py:1, [0-9]+ tokens) to the archive; M-x contextls-restore brings it back"
                   (car said))))
        (should-not (contextls--overlays-of root "ctx-1"))
        (should (contextls--overlays-of root "ctx-2"))
        (let ((text (contextls--mode-line-string root)))
          (should (string-match-p "·2/2 \\'" text))
          (should (eq (get-text-property 1 'face text) 'error))
          (should (string-match-p "Last evicted: ctx-1" (get-text-property 1 'help-echo text)))
          (should (string-match-p "Next to be evicted: ctx-2"
                                  (get-text-property 1 'help-echo text))))))))

(ert-deftest contextls-test-warning-face-near-the-budget ()
  (contextls-test--with-workspace nil
    (contextls-add-text "one two three four five six seven eight nine")
    ;; A budget the window (as rendered) fills to more than 90 %.
    (let ((tokens (plist-get (contextls--status (directory-file-name root)) :tokens)))
      (contextls-configure "maxTokens" (1+ tokens))
      (let ((text (contextls--mode-line-string (directory-file-name root))))
        (should (eq (get-text-property 1 'face text) 'warning))))))

(ert-deftest contextls-test-a-setting-that-evicts-most-asks-first ()
  ;; The server refuses it unforced (NEEDS_FORCE, its plan as data): asked, and on no
  ;; nothing changes; on yes it is sent again with force.
  (contextls-test--with-workspace nil
    (dolist (n '("one" "two" "three" "four"))
      (contextls-add-text (format "note %s" n)))
    (let (asked)
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (prompt) (setq asked prompt) nil)))
        (should-not (contextls-configure "maxItems" 1)))
      (should (string-match-p
               "Setting maxItems evicts 3 of the window's 4 items (ctx-1 (note one, 15 tokens)" asked))
      (should (= (length (contextls-test--items)) 4))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t)))
        (should (equal (plist-get (plist-get (contextls-configure "maxItems" 1) :settings)
                                  :maxItems)
                       1)))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items))
                     '("ctx-4"))))))

(ert-deftest contextls-test-an-adaptive-budget-is-shown-and-explained ()
  ;; The mode line shows the effective budget, and says why it is not maxTokens.
  (let* ((status (list :revision 3 :tokens 3100 :maxTokens 8000 :budget 14000
                       :budgetPolicy "adaptive" :task "debugging" :complexity 0.72
                       :itemCount 6 :maxItems 50 :percent 22.1 :staleCount 0
                       :model "gpt-4o" :countExact t :countLabel "exact"))
         (text (contextls--make-mode-line status nil)))
    (should (equal (substring-no-properties text) " ctx 3.1k/14k gpt-4o·6/50 "))
    (should (string-match-p "^adaptive: debugging, complexity 0.72 -> 14.0k of base 8k$"
                            (get-text-property 1 'help-echo text)))
    (should (string-match-p "3,100 of 14,000 tokens" (get-text-property 1 'help-echo text)))
    (should (equal (substring-no-properties
                    (contextls--make-mode-line (plist-put (copy-sequence status)
                                                          :budgetPolicy "fixed")
                                               nil))
                   " ctx 3.1k/14k gpt-4o·6/50 "))
    (should-not (string-match-p "adaptive"
                                (get-text-property
                                 1 'help-echo
                                 (contextls--make-mode-line
                                  (plist-put (copy-sequence status) :budgetPolicy "fixed")
                                  nil))))))

(ert-deftest contextls-test-task-and-budget-policy-are-window-settings ()
  (contextls-test--with-workspace nil
    (let ((root (directory-file-name root))
          (inhibit-message nil))
      (contextls-add-text "a note")
      (let ((said (contextls-test--messages
                   (lambda ()
                     (should (equal (plist-get (plist-get (contextls-set-task "debugging")
                                                          :settings)
                                               :task)
                                    "debugging"))))))
        (should (string-match-p "\\`contextls: task is debugging; budget [0-9.]+k? tokens"
                                (car said))))
      (should (equal (plist-get (plist-get (contextls-set-budget-policy "adaptive") :settings)
                                :budgetPolicy)
                     "adaptive"))
      (should (equal (plist-get (plist-get (contextls-configure "budgetPolicy" nil t) :settings)
                                :budgetPolicy)
                     "fixed"))
      ;; The command line sees the same setting.
      (should (string-match-p "\"task\": \"debugging\""
                              (contextls-test--cli "config" "show" "--json")))
      ;; The window keeps it: a new server reads it back.
      (contextls-restart)
      (should (equal (plist-get (plist-get (contextls--request
                                            :contextls/configure
                                            (contextls--workspace-params root))
                                           :settings)
                                :task)
                     "debugging")))))

(ert-deftest contextls-test-stale-region-after-an-edit ()
  (contextls-test--with-workspace '(("s.py" . "keep = 1\nchange = 2\n"))
    (let ((root (directory-file-name root)))
      (with-current-buffer (find-file-noselect (expand-file-name "s.py"))
        (contextls-test--select-line 2)
        (contextls-add-region (region-beginning) (region-end))
        (goto-char (point-max)) (forward-line -1)
        (delete-region (line-beginning-position) (line-end-position))
        (insert "changed = 3")
        (contextls--send-changes (current-buffer))
        (contextls-test--wait (lambda () (eq (plist-get (car (contextls-test--items)) :stale) t)))
        (contextls-test--wait
         (lambda () (eq (overlay-get (car (contextls--overlays-of root "ctx-1")) 'face)
                        'contextls-stale-region)))))))

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
     (lambda () (let ((status (contextls--status (directory-file-name root))))
                  (and (consp status) (eql (plist-get status :staleCount) 1)))))
    (should (string-match-p "1 stale" (contextls--mode-line-string (directory-file-name root))))
    (let ((result (contextls-reread)))
      (should (string-prefix-p "b = 9"
                               (plist-get (aref (plist-get result :refreshed) 0) :content))))
    (should (eq (plist-get (car (contextls-test--items)) :stale) :json-false))
    (should-not (string-match-p "stale" (contextls--mode-line-string (directory-file-name root))))))

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
                                       (list :workspace (contextls--uri root)
                                             :query "hunter2"))
                                      :hits)
                           nil)
                   nil))))

(ert-deftest contextls-test-overlays-follow-merges-and-restores ()
  (contextls-test--with-workspace
      '(("m.py" . "one = 1\ntwo = 2\nthree = 3\nfour = 4\nfive = 5\n"))
    (let ((contextls-settings '(:maxItems 2))
          (root (directory-file-name root)))
      (with-current-buffer (find-file-noselect (expand-file-name "m.py"))
        (contextls-test--select-line 1)
        (contextls-add-region (region-beginning) (region-end))
        (contextls-test--select-line 2)
        ;; Lines 1 and 2 touch: the server merges them into one item.
        (let ((merged (contextls-add-region (region-beginning) (region-end))))
          (contextls-test--wait
           (lambda () (and (null (contextls--overlays-of root "ctx-1"))
                           (contextls--overlays-of root (plist-get merged :id)))))
          (let ((overlay (car (contextls--overlays-of root (plist-get merged :id)))))
            (should (= (overlay-start overlay) (point-min)))
            (should (= (line-number-at-pos (overlay-end overlay)) 3))))
        (contextls-add-text "first")
        (contextls-add-text "second")  ; the merged region is evicted...
        (should (zerop (hash-table-count contextls--overlays)))
        ;; ...and comes back, highlighted again: a restore slides the window
        ;; as an add does, without asking, and says what it evicted.
        (let ((inhibit-message nil))
          (cl-letf (((symbol-function 'yes-or-no-p)
                     (lambda (prompt) (error "Asked: %s" prompt))))
            (should (string-match-p
                     "\\`contextls: restored ctx-2 (m.py:1-2, [0-9]+ tokens); evicted ctx-3 (first, [0-9]+ tokens?) to the archive"
                     (car (last (contextls-test--messages
                                 (lambda () (contextls-restore "ctx-2")))))))))
        (should (contextls--overlays-of root "ctx-2"))))))

;;; Two projects, whose ids clash

(ert-deftest contextls-test-two-projects-keep-their-own-items-and-highlights ()
  (contextls-test--with-workspace '(("a/one.py" . "a1 = 1\na2 = 2\n") ("b/two.py" . "b1 = 1\nb2 = 2\n"))
    (let ((root-a (expand-file-name "a" root))
          (root-b (expand-file-name "b" root)))
      (dolist (dir (list root-a root-b))
        (let ((default-directory (file-name-as-directory dir)))
          (should (zerop (call-process "git" nil nil nil "init" "-q")))))
      (unwind-protect
          (let ((buffer-a (find-file-noselect (expand-file-name "one.py" root-a)))
                (buffer-b (find-file-noselect (expand-file-name "two.py" root-b))))
            (with-current-buffer buffer-a
              (should (equal (contextls--root) root-a))
              (contextls-test--select-line 1)
              (should (equal (plist-get (contextls-add-region (region-beginning) (region-end)) :id)
                             "ctx-1"))
              (contextls-add-text "a second item in a"))
            (with-current-buffer buffer-b
              (should (equal (contextls--root) root-b))
              (contextls-test--select-line 2)
              (should (equal (plist-get (contextls-add-region (region-beginning) (region-end)) :id)
                             "ctx-1")))
            (should (contextls--overlays-of root-a "ctx-1"))
            (should (contextls--overlays-of root-b "ctx-1"))
            (with-current-buffer buffer-a
              (should (string-match-p "·2/50 " (contextls--mode-line-string))))
            (with-current-buffer buffer-b
              (should (string-match-p "·1/50 " (contextls--mode-line-string))))
            ;; Removing a's ctx-1 (on its highlight) leaves b's alone, after every push.
            (with-current-buffer buffer-a
              (goto-char (point-min))
              (call-interactively #'contextls-remove))
            (should-not (contextls--overlays-of root-a "ctx-1"))
            (accept-process-output nil 0.5)
            (contextls-test--wait
             (lambda () (null (contextls--window-refreshing (contextls--window-of root-a)))))
            (should (contextls--overlays-of root-b "ctx-1"))
            (with-current-buffer buffer-b
              (should (eq (overlay-buffer (car (contextls--overlays-of root-b "ctx-1"))) buffer-b))
              (goto-char (point-min)) (forward-line 1)
              (should (equal (contextls--item-at) (cons root-b "ctx-1")))
              (should (string-match-p "·1/50 " (contextls--mode-line-string))))
            (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items root-b))
                           '("ctx-1")))
            ;; One server serves both: restarting it keeps b's window and
            ;; highlight, and opens a's buffer again.
            (should (eq (contextls-test--conn root-a) (contextls-test--conn root-b)))
            (with-current-buffer buffer-a
              (contextls-restart)
              (goto-char (point-max))
              (insert "a3 = 3\n")
              (should (equal (plist-get (contextls-add-buffer) :content)
                             "a1 = 1\na2 = 2\na3 = 3\n")))
            (should (jsonrpc-running-p (contextls-test--conn root-b)))
            (should (contextls--overlays-of root-b "ctx-1"))
            (with-current-buffer buffer-b
              (should (string-match-p "·1/50 " (contextls--mode-line-string)))))
        (contextls-test--cleanup (list root-a root-b))))))

;;; Items at point

(ert-deftest contextls-test-remove-pin-and-read-again-act-on-the-item-at-point ()
  (contextls-test--with-workspace '(("p.py" . "one = 1\ntwo = 2\nthree = 3\nfour = 4\n"))
    (let ((root (directory-file-name root)))
      (with-current-buffer (find-file-noselect (expand-file-name "p.py"))
        (contextls-test--select-line 1)
        (contextls-add-region (region-beginning) (region-end))
        (contextls-test--select-line 3)
        (contextls-add-region (region-beginning) (region-end))
        (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t))
                 ((symbol-function 'completing-read)
                   (lambda (&rest _) (error "Asked for an id on a highlighted item"))))
          (goto-char (point-min))
          (call-interactively #'contextls-pin)
          (should (eq (plist-get (car (contextls-test--items)) :pinned) t))
          (forward-line 2)
          (call-interactively #'contextls-remove)
          (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items))
                         '("ctx-1")))
          (should-not (contextls--overlays-of root "ctx-2"))
          (goto-char (point-min))
          (insert "# moved\n")
          (contextls--send-changes (current-buffer))
          (contextls-test--wait
           (lambda () (eql (contextls-test--meta (car (contextls-test--items)) :startLine) 2)))
          (goto-char (point-min)) (forward-line 1)
          (delete-char 3) (insert "uno")
          (contextls--send-changes (current-buffer))
          (contextls-test--wait (lambda () (eq (plist-get (car (contextls-test--items)) :stale) t)))
          (call-interactively #'contextls-reread)
          (should (equal (plist-get (car (contextls-test--items)) :content) "uno = 1")))))))

;;; The inspector

(ert-deftest contextls-test-inspector-keys-columns-and-budget ()
  (contextls-test--with-workspace '(("i.py" . "first = 1\nsecond = 2\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "i.py"))
      (contextls-test--select-line 1)
      (contextls-add-region (region-beginning) (region-end)))
    (contextls-add-text "a note")
    (contextls-add-text "another note")
    (with-current-buffer (contextls-list)
      ;; The column headers, and the budget above the table.
      (should (string-match-p "Id.*Kind.*View.*Label.*Tokens.*Flags" (format "%s" header-line-format)))
      (should (string-match-p "\\`\\s-*\\[[█░]+\\] .*tokens of gpt-4o (exact) · 3/50 items"
                              (overlay-get (contextls--budget-overlay) 'before-string)))
      (goto-char (point-min))
      (should (equal (tabulated-list-get-id) "ctx-3"))  ; newest first
      ;; n and p move, as in every list; P pins.
      (should (eq (key-binding "n") #'next-line))
      (should (eq (key-binding "p") #'previous-line))
      (should (eq (key-binding "P") #'contextls-list-toggle-pin))
      (execute-kbd-macro "n")
      (should (equal (tabulated-list-get-id) "ctx-2"))
      (execute-kbd-macro "P")
      (should (eq (plist-get (cadr (contextls-test--items)) :pinned) t))
      (should (string-match-p "P" (aref (tabulated-list-get-entry) 5)))
      (execute-kbd-macro "p")
      (should (equal (tabulated-list-get-id) "ctx-3"))
      ;; Two marks: both go, and the message names both.
      (execute-kbd-macro "dd")
      (should (string-match-p "tokens of gpt-4o (exact) · 3/50 items"
                              (overlay-get (contextls--budget-overlay) 'before-string)))
      (let* ((inhibit-message nil)
             (said (contextls-test--messages (lambda () (execute-kbd-macro "x")))))
        (should (member "contextls: removed ctx-3, ctx-2 to the archive" said)))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items)) '("ctx-1")))
      ;; The table shows it at once, from the answer.
      (goto-char (point-min))
      (should (equal (tabulated-list-get-id) "ctx-1"))
      (should (string-match-p "tokens of gpt-4o (exact) · 1/50 items"
                              (overlay-get (contextls--budget-overlay) 'before-string)))
      ;; Opened again: still one budget line.
      (contextls-list)
      (should (= (length (seq-filter (lambda (o) (overlay-get o 'before-string))
                                     (overlays-in (point-min) (point-max))))
                 1))
      (goto-char (point-min))
      (execute-kbd-macro (kbd "RET"))
      (should (equal (file-name-nondirectory (buffer-file-name)) "i.py"))
      (should (= (line-number-at-pos) 1)))
    ;; Inspector commands are the inspector's: M-x elsewhere does not offer them.
    (dolist (command '(contextls-list-visit contextls-list-toggle-pin contextls-list-mark-delete
                       contextls-list-unmark contextls-list-execute contextls-list-refresh
                       contextls-list-reread contextls-list-forget))
      ;; Emacs 28 forgets the modes of a function once it is natively
      ;; compiled (in the background, so whenever that happens).
      (unless (and (fboundp 'subr-native-elisp-p)
                   (subr-native-elisp-p (indirect-function command)))
        (should (equal (cons command (command-modes command))
                       (list command 'contextls-list-mode)))))
    (kill-buffer "*contextls*")))

(ert-deftest contextls-test-inspector-follows-changes-and-keeps-marks ()
  (contextls-test--with-workspace nil
    (contextls-add-text "one")
    (contextls-add-text "two")
    (with-current-buffer (contextls-list)
      (goto-char (point-min))
      (tabulated-list-put-tag "D")
      ;; Another client (the command line) adds: the table follows, marks stay.
      (contextls-test--cli "add-text" "three")
      (contextls-test--wait (lambda () (= (length tabulated-list-entries) 3)) 5)
      (should (equal (contextls--marked-ids) '("ctx-2")))
      (kill-buffer))))

;;; Numbers, prompts, errors, as a person reads them

(ert-deftest contextls-test-numbers-have-thousands-separators ()
  (should (equal (mapcar #'contextls--number '(0 950 1000 3653 1234567 -1200))
                 '("0" "950" "1,000" "3,653" "1,234,567" "-1,200")))
  (should (equal (contextls--plural 3653 "token") "3,653 tokens"))
  (should (equal (contextls--describe '(:id "ctx-3" :label "a.py" :tokens 12000))
                 "ctx-3 (a.py, 12,000 tokens)")))

(ert-deftest contextls-test-the-inspector-sorts-ids-and-tokens-as-numbers ()
  (contextls-test--with-workspace nil
    (dotimes (n 11)
      ;; Token counts of 2 to over 100: as strings, "100" would sort before "9".
      (contextls-add-text (mapconcat #'identity (make-list (1+ (* n n)) "word") " ")))
    (with-current-buffer (contextls-list)
      (let ((column (lambda (index)
                      (save-excursion
                        (goto-char (point-min))
                        (let (values)
                          (while (not (eobp))
                            (when (tabulated-list-get-entry)
                              (push (aref (tabulated-list-get-entry) index) values))
                            (forward-line 1))
                          (nreverse values))))))
        (goto-char (point-min))
        (tabulated-list-sort 0)
        (should (equal (funcall column 0)
                       (mapcar (lambda (n) (format "ctx-%d" n)) (number-sequence 1 11))))
        (tabulated-list-sort 4)
        (let ((tokens (mapcar (lambda (text) (string-to-number (string-replace "," "" text)))
                              (funcall column 4))))
          (should (equal tokens (sort (copy-sequence tokens) #'<)))
          (should (> (car (last tokens)) 100))))
      (kill-buffer))))

(ert-deftest contextls-test-unpinning-asks-which-item-to-unpin ()
  (contextls-test--with-workspace nil
    (contextls-add-text "a note" t)
    (let (prompt)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (asked &rest _) (setq prompt asked) "ctx-1")))
        (let ((current-prefix-arg '(4)))
          (call-interactively #'contextls-pin)))
      (should (equal prompt "Unpin item: "))
      (should (eq (plist-get (car (contextls-test--items)) :pinned) :json-false)))))

(ert-deftest contextls-test-an-error-from-compilation-with-its-lines-and-relative-paths ()
  (contextls-test--with-workspace '(("bad.c" . "int main() {\n  x = 1;\n}\n"))
    (let ((file (expand-file-name "bad.c" root)))
      (with-current-buffer (get-buffer-create "*compilation-multi*")
        (setq default-directory (file-name-as-directory root))
        (insert "gcc -c bad.c\n"
                file ":2:3: error: 'x' undeclared (first use in this function)\n"
                "    2 |   x = 1;\n"
                "      |   ^\n"
                file ":2:3: note: each undeclared identifier is reported only once\n"
                "\nCompilation exited abnormally with code 1\n")
        (compilation-mode)
        (goto-char (point-min))
        (forward-line 1)
        (contextls-add-error)
        (kill-buffer)))
    (should (equal (plist-get (car (contextls-test--items)) :content)
                   (concat "bad.c:2:3: error: 'x' undeclared (first use in this function)\n"
                           "    2 |   x = 1;\n"
                           "      |   ^")))))

;;; Using the context

(ert-deftest contextls-test-show-copy-search-restore-clear ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1)))
      (contextls-add-text "the zebracorn grazes")
      (contextls-add-text "something else")
      (with-current-buffer (contextls-show)
        (should (string-match-p "something else" (buffer-string)))
        (should (eq major-mode 'contextls-context-mode))
        (should buffer-read-only)
        (should (eq (key-binding "q") #'quit-window))
        (should-error (insert "x") :type 'buffer-read-only))
      (should (string-prefix-p "## Context" (contextls-copy)))
      (should (equal (current-kill 0) (contextls-copy)))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t))
                 ((symbol-function 'completing-read)
                 (lambda (_prompt table &rest _) (car (all-completions "" table)))))
        (contextls-search "zebracorn"))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items)) '("ctx-1")))
      ;; The context buffer follows the window.
      (contextls-test--wait
       (lambda () (with-current-buffer "*contextls-context*"
                    (string-match-p "zebracorn" (buffer-string)))))
      (contextls-pin "ctx-1")
      (should (eq (plist-get (car (contextls-test--items)) :pinned) t))
      (contextls-pin "ctx-1" t)
      (contextls-remove "ctx-1")
      (should (null (contextls-test--items)))
      (contextls-restore "ctx-1")
      ;; Restoring what is already in the window changes nothing, and says so.
      (let ((inhibit-message nil))
        (should (member "contextls: ctx-1 is already in the window"
                        (contextls-test--messages (lambda () (contextls-restore "ctx-1"))))))
      (cl-letf (((symbol-function 'yes-or-no-p) #'ignore))
        (contextls-clear))
      (should (contextls-test--items))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t)))
        (contextls-clear))
      (should (null (contextls-test--items)))
      (kill-buffer "*contextls-context*"))))

(ert-deftest contextls-test-a-restore-says-where-a-merged-item-went ()
  ;; An archived region of a file that is in the window whole comes back into it.
  (let ((decoder (list :id "ctx-6" :label "decoder.py" :tokens 3060)))
    (should (equal (contextls--restore-message
                    "ctx-2" (list :items (vector decoder) :evicted [] :merged '(:ctx-2 "ctx-6")))
                   "restored ctx-2 into ctx-6 (decoder.py, 3,060 tokens)"))
    (should (equal (contextls--restore-message
                    "ctx-2" (list :items [] :evicted [] :alreadyInWindow ["ctx-6"]
                                  :merged '(:ctx-2 "ctx-6")))
                   "ctx-2 is already in the window (in ctx-6)"))
    (should (equal (contextls--restore-message
                    "ctx-6" (list :items (vector decoder)
                                  :evicted (vector (list :id "ctx-1" :label "a.py:1" :tokens 1))))
                   (concat "restored ctx-6 (decoder.py, 3,060 tokens); evicted ctx-1 (a.py:1, "
                           "1 token) to the archive; M-x contextls-restore brings it back")))))

(ert-deftest contextls-test-a-restore-slides-the-window-without-asking ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1))
          (inhibit-message nil))
      (contextls-add-text "archived first")
      (contextls-add-text "in the window")
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (prompt) (error "Asked: %s" prompt))))
        (let ((said (contextls-test--messages (lambda () (contextls-restore "ctx-1")))))
          (should (= (length said) 1))
          (should (string-match-p "\\`contextls: restored ctx-1 (archived first, [0-9]+ tokens); evicted ctx-2 (in the window, [0-9]+ tokens) to the archive; M-x contextls-restore brings it back\\'"
                                  (car said)))))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items))
                     '("ctx-1"))))))

(ert-deftest contextls-test-search-keeps-the-servers-order-and-marks-matches ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1))
          table)
      ;; The best hit has the later id (and label): sorting would put it last.
      (contextls-add-text "aaa retry once")
      (contextls-add-text "zzz retry the upload retry the upload retry")
      (contextls-add-text "mmm unrelated text")
      (let* ((server (mapcar (lambda (hit) (plist-get (plist-get hit :item) :id))
                             (append (plist-get (contextls--request
                                                 :contextls/search
                                                 (list :workspace (contextls--uri root)
                                                       :query "retry" :mode "keyword"))
                                                :hits)
                                     nil)))
             (shown (progn
                      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t))
                 ((symbol-function 'completing-read)
                                 (lambda (_prompt collection &rest _)
                                   (setq table collection)
                                   (car (all-completions "" collection)))))
                        (contextls-search "retry" 'keyword))
                      (all-completions "" table))))
        (should (equal (mapcar (lambda (c) (car (split-string c))) shown) server))
        (should (equal server '("ctx-2" "ctx-1")))
        (should (eq (completion-metadata-get (completion-metadata "" table nil)
                                             'display-sort-function)
                    'identity))))))

(ert-deftest contextls-test-a-hit-marks-the-servers-spans-in-code-points ()
  ;; Spans count Unicode code points into the snippet, as Emacs strings do.
  (let* ((hit (list :item (list :id "ctx-9" :label "notes.md")
                    :modes ["keyword"]
                    :snippet "café 😀 retry\nthe upload"
                    :highlights [[7 12] [17 23]]))
         (candidate (car (contextls--search-candidate hit)))
         (start (string-match "retry" candidate)))
    (should (equal (substring-no-properties candidate)
                   "ctx-9  notes.md  [words]  café 😀 retry the upload"))
    (should (eq (get-text-property start 'face candidate) 'contextls-match))
    (should (eq (get-text-property (+ start 4) 'face candidate) 'contextls-match))
    (should-not (get-text-property (+ start 5) 'face candidate))
    (should-not (get-text-property (1- start) 'face candidate))
    (should (eq (get-text-property (string-match "upload" candidate) 'face candidate)
                'contextls-match))
    (should (equal (cdr (contextls--search-candidate hit)) "ctx-9"))))

(ert-deftest contextls-test-search-marks-what-matched-with-a-face ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1))
          shown)
      (contextls-add-text "zzz retry the upload")
      (contextls-add-text "mmm unrelated text")
      ;; A server from before the contract marks matches with ** in the text.
      (skip-unless (seq-some (lambda (hit) (not (seq-empty-p (plist-get hit :highlights))))
                             (plist-get (contextls--request
                                         :contextls/search
                                         (list :workspace (contextls--uri root)
                                               :query "upload" :mode "keyword"))
                                        :hits)))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t))
                 ((symbol-function 'completing-read)
                 (lambda (_prompt table &rest _)
                   (setq shown (all-completions "" table))
                   (car shown))))
        (contextls-search "upload" 'keyword))
      (let* ((candidate (car shown))
             (at (string-match "upload" candidate (string-match "\\]" candidate))))
        (should-not (string-match-p "\\*\\*" candidate))
        (should (memq 'contextls-match (ensure-list (get-text-property at 'face candidate))))
        (should-not (get-text-property (1- at) 'face candidate))))))

(ert-deftest contextls-test-search-by-meaning-says-how-each-hit-was-found ()
  (contextls-test--with-workspace nil
    (let ((contextls-settings '(:maxItems 1))
          offered)
      (contextls-add-text "the retry loop backs off exponentially")
      (contextls-add-text "Meeting notes: we agreed to drop Python 3.9 support.")
      ;; By words, the paraphrase finds nothing; by meaning, the note.
      (should-error (contextls-search "how do failed attempts wait longer" 'keyword)
                    :type 'user-error)
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t))
                 ((symbol-function 'completing-read)
                 (lambda (_prompt table &rest _)
                   (setq offered (all-completions "" table))
                   (car offered))))
        (contextls-search "how do failed attempts wait longer" 'semantic))
      (should (string-match-p "\\`ctx-1 .*\\[meaning\\]" (car offered)))
      (should (equal (mapcar (lambda (i) (plist-get i :id)) (contextls-test--items)) '("ctx-1")))
      ;; The default mode (hybrid here) finds the words and their meaning.
      (contextls-add-text "another note")
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_) t))
                 ((symbol-function 'completing-read)
                 (lambda (_prompt table &rest _)
                   (setq offered (all-completions "" table))
                   (car offered))))
        (contextls-search "the retry loop backs off"))
      (should (string-match-p "\\`ctx-1 .*\\[\\(meaning\\+words\\|words\\+meaning\\)\\]"
                              (car offered))))))

;;; Edits reach the server as incremental changes

(defun contextls-test--record-changes (thunk)
  "Call THUNK; return the `contentChanges' of every didChange sent meanwhile."
  (let (sent)
    (cl-letf* ((notify (symbol-function 'jsonrpc-notify))
               ((symbol-function 'jsonrpc-notify)
                (lambda (conn method params)
                  (when (eq method :textDocument/didChange)
                    (setq sent (append sent (append (plist-get params :contentChanges) nil))))
                  (funcall notify conn method params))))
      (funcall thunk))
    sent))

(ert-deftest contextls-test-edits-are-sent-as-incremental-changes ()
  (contextls-test--with-workspace
      '(("inc.py" . "# café 😀 header\nalpha = 1\nbeta = 2\n\ndef gamma():\n    return 3\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "inc.py"))
      (contextls-add-buffer)
      (let* ((random-state (random "contextls"))
             (pieces '("x" "😀" "é\n" "\tindent" "\n\n" "word word" ""))
             (changes
              (contextls-test--record-changes
               (lambda ()
                 (dotimes (i 300)
                   (let ((a (1+ (random (point-max)))) (b (1+ (random (point-max)))))
                     (pcase (random 5)
                       (0 (goto-char a) (insert (nth (random (length pieces)) pieces)))
                       (1 (delete-region (min a b) (min (max a b) (+ (min a b) 5))))
                       (2 (goto-char (min a b))
                          (ignore-errors (capitalize-word 1)))
                       (3 (goto-char a) (ignore-errors (transpose-lines 1)))
                       (4 (goto-char (min a b))
                          (delete-region (min a b) (min (max a b) (+ (min a b) 3)))
                          (insert "🙂"))))
                   (when (zerop (% i 7)) (contextls--send-changes (current-buffer))))
                 (contextls--send-changes (current-buffer))))))
        (should (> (length changes) 40))  ; one or more at each of the 43 sends
        (should (seq-every-p (lambda (change) (plist-get change :range)) changes))
        ;; The server's copy is the buffer, to the character.
        (should (equal (plist-get (contextls-add-buffer) :content)
                       (buffer-substring-no-properties (point-min) (point-max))))
        ;; A command that announces more than it changes still ends right.
        (let ((fill-column 20))
          (goto-char (point-max))
          (insert "\n" (mapconcat #'identity (make-list 12 "several words") " ") "\n")
          (forward-line -1)
          (fill-paragraph))
        (should (equal (plist-get (contextls-add-buffer) :content)
                       (buffer-substring-no-properties (point-min) (point-max))))))))

(ert-deftest contextls-test-typing-in-a-big-buffer-sends-only-the-edit ()
  (contextls-test--with-workspace
      `(("big.py" . ,(mapconcat (lambda (n) (format "value_%06d = %d  # some padding text" n n))
                                (number-sequence 1 24000) "\n")))
    (with-current-buffer (find-file-noselect (expand-file-name "big.py"))
      (should (> (buffer-size) 900000))
      (contextls-test--select-line 12000)
      (contextls-add-region (region-beginning) (region-end))
      (goto-char (point-max))
      (let ((sent nil))
        (dotimes (_ 21)
          (setq sent (append sent (contextls-test--record-changes
                                   (lambda ()
                                     (insert "x")
                                     (contextls--send-changes (current-buffer)))))))
        ;; One character each time, not 900 KB (the time it takes is in the bench).
        (should (= (length sent) 21))
        (should (seq-every-p (lambda (change) (equal (plist-get change :text) "x")) sent)))
      ;; The server's copy of the last line (a region without its text is
      ;; cut from the server's copy of the buffer).
      (let ((line (contextls--range (line-beginning-position) (point))))
        (should (string-suffix-p
                 "padding textxxxxxxxxxxxxxxxxxxxxx"
                 (plist-get (plist-get (contextls--request
                                        :contextls/addRegion
                                        (contextls--workspace-params
                                         (directory-file-name root)
                                         :uri (contextls--uri buffer-file-name) :range line))
                                       :item)
                            :content)))))))

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
      (delete-process (jsonrpc--process (contextls-test--conn root)))
      (contextls-test--wait (lambda () (eq (contextls--status root) 'crashed)))
      (should (equal (contextls--mode-line-string root) " ctx ✗ "))
      (contextls-add-text "after the crash")
      (should (equal (mapcar (lambda (i) (plist-get i :content)) (contextls-test--items))
                     '("before the crash" "after the crash"))))))

(ert-deftest contextls-test-missing-server-says-how-to-install ()
  (contextls-test--with-workspace nil
    (let ((contextls-server-command '("/nonexistent/contextls" "serve")))
      (let ((err (should-error (contextls-add-text "x") :type 'user-error)))
        ;; contextls is not on PyPI: the advice is its repository.
        (should (string-match-p "install it from its repository" (cadr err)))
        (should-not (string-match-p "pip install contextls'" (cadr err)))))))

(ert-deftest contextls-test-a-server-that-dies-at-start-shows-what-it-said ()
  (contextls-test--with-workspace nil
    (let* ((contextls-server-command (list contextls-test--server "serve" "--no-such-option"))
           (err (should-error (contextls-add-text "x") :type 'user-error)))
      (should (string-match-p "the server stopped" (cadr err)))
      (should (string-match-p "unrecognized arguments: --no-such-option\\|no-such-option"
                              (cadr err)))
      (should-not (string-match-p "jsonrpc\\|Server died" (cadr err))))))

;;; Restarts: the buffers are opened again

(defun contextls-test--edit-above-and-check (root buffer)
  "Insert lines above ctx-1 in BUFFER of ROOT and check the server follows.
Then add a region of the modified buffer: it is the buffer's text."
  (with-current-buffer buffer
    (goto-char (point-min))
    (insert "# one\n# two\n")
    (contextls--send-changes buffer)
    (contextls-test--wait
     (lambda () (eql (contextls-test--meta (car (contextls-test--items root)) :startLine) 4)))
    (should-not (eq (plist-get (car (contextls-test--items root)) :stale) t))
    (contextls-test--select-line 1)
    (contextls-add-region (region-beginning) (region-end))
    (should (equal (plist-get (car (last (contextls-test--items root))) :content) "# one"))
    ;; The whole file, as the buffer has it, not as the disk does.
    (should (buffer-modified-p))
    (should (equal (plist-get (contextls-add-buffer) :content)
                   (buffer-substring-no-properties (point-min) (point-max))))))

(ert-deftest contextls-test-buffers-are-synced-again-after-a-restart ()
  (contextls-test--with-workspace '(("r.py" . "a = 1\nb = 2\nc = 3\n"))
    (let ((root (directory-file-name root))
          (messages nil)
          (inhibit-message nil))
      (with-current-buffer (find-file-noselect (expand-file-name "r.py"))
        (contextls-test--select-line 2)
        (contextls-add-region (region-beginning) (region-end))
        (setq messages (contextls-test--messages
                        (lambda ()
                          (contextls-restart)
                          (contextls-test--edit-above-and-check root (current-buffer))
                          (accept-process-output nil 0.3))))
        (should-not (seq-find (lambda (m) (string-match-p "Error\\|KeyError" m)) messages))))))

(ert-deftest contextls-test-buffers-are-synced-again-after-the-daemon-stops ()
  (contextls-test--with-workspace '(("x.py" . "x = 1\ny = 2\n"))
    (let* ((runtime (make-temp-file "cls-" t))
           (process-environment (append (list (concat "CONTEXTLS_RUNTIME_DIR=" runtime)
                                              (concat "CONTEXTLS_STATE_DIR=" runtime))
                                        process-environment))
           (contextls-server-command nil)
           (contextls-use-daemon t)
           (exec-path (cons (file-name-directory contextls-test--server) exec-path))
           (root (directory-file-name root)))
      (unwind-protect
          (with-current-buffer (find-file-noselect (expand-file-name "x.py"))
            (should (equal (contextls--server-command) '("contextls" "connect")))
            (contextls-test--select-line 2)
            (contextls-add-region (region-beginning) (region-end))
            (should (zerop (call-process contextls-test--server nil nil nil "daemon" "stop")))
            (contextls-test--wait (lambda () (eq (contextls--status root) 'crashed)))
            (should (equal (contextls--mode-line-string root) " ctx ✗ "))
            ;; Typing while it is gone sends nothing and breaks nothing...
            (goto-char (point-max))
            (insert "z = 3\n")
            (contextls--send-changes (current-buffer))
            ;; ...and the next command starts it again, with this buffer open.
            (contextls-test--edit-above-and-check root (current-buffer))
            (should (string-match-p "\\` ctx " (contextls--mode-line-string root))))
        (ignore-errors (contextls-shutdown root))
        (call-process contextls-test--server nil nil nil "daemon" "stop")
        (delete-directory runtime t)))))

(ert-deftest contextls-test-two-editors-with-other-unsaved-text-are-told ()
  (contextls-test--with-workspace (list (cons "p.py" contextls-test--parser-py))
    (let* ((runtime (make-temp-file "cls-" t))
           (process-environment (append (list (concat "CONTEXTLS_RUNTIME_DIR=" runtime)
                                              (concat "CONTEXTLS_STATE_DIR=" runtime))
                                        process-environment))
           (contextls-server-command nil)
           (contextls-use-daemon t)
           (exec-path (cons (file-name-directory contextls-test--server) exec-path))
           (root (directory-file-name root))
           (other nil)
           (said nil))
      (unwind-protect
          (with-current-buffer (find-file-noselect (expand-file-name "p.py"))
            (goto-char (point-min))
            (search-forward "words = ")
            (contextls-add-defun)
            (cl-letf (((symbol-function 'message)
                       (lambda (format &rest args)
                         (when format (push (apply #'format format args) said)))))
              ;; Another editor opens the file and types two lines above, unsaved: the
              ;; window follows its text, and Emacs says so.
              (setq other (let ((default-directory (expand-file-name "../../../" contextls-test--dir)))
                            (make-process
                             :name "other-editor" :buffer (generate-new-buffer " *other*")
                             :command (list (expand-file-name "python" (file-name-directory
                                                                         contextls-test--server))
                                            "-m" "tests.support.other_editor"
                                            root "p.py" "# one\n# two"
                                            contextls-test--server "connect" "--stdio")
                             :connection-type 'pipe :noquery t)))
              (contextls-test--wait
               (lambda () (equal (contextls-test--meta (car (contextls-test--items)) :startLine) 9))
               20)
              (contextls-test--wait
               (lambda () (seq-find (lambda (line)
                                      (string-match-p "\\`contextls: p.py has other unsaved text in other-editor, which changed it last" line))
                                    said)))
              ;; Emacs types one line above in its own text: its text is followed again,
              ;; and the other editor is told.
              (goto-char (point-min))
              (insert "# mine\n")
              (contextls--send-changes (current-buffer))
              (contextls-test--wait
               (lambda () (equal (contextls-test--meta (car (contextls-test--items)) :startLine) 8)))
              (contextls-test--wait
               (lambda () (with-current-buffer (process-buffer other)
                            (string-match-p "p.py has other unsaved text in contextls.el, which changed it last"
                                            (buffer-string))))))
            (set-buffer-modified-p nil))
        (when (process-live-p other)
          (process-send-eof other)
          (accept-process-output other 2))
        (ignore-errors (contextls-shutdown root))
        (call-process contextls-test--server nil nil nil "daemon" "stop")
        (delete-directory runtime t)))))

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
            (let ((contextls-settings '(:storage "/tmp/other.sqlite3")))
              (should (equal (contextls--server-command)
                             '("contextls" "connect" "--storage" "/tmp/other.sqlite3"))))
            (contextls-add-text "from Emacs")
            ;; The CLI reaches the same daemon; Emacs hears of its change unasked.
            (should (zerop (call-process contextls-test--server nil nil nil
                                         "add-text" "from the command line")))
            (contextls-test--wait
             (lambda () (let ((status (contextls--status (directory-file-name root))))
                          (and (consp status) (eql (plist-get status :itemCount) 2)))))
            (contextls-test--wait
             (lambda () (= (length (contextls--items (directory-file-name root))) 2)))
            (should (equal (mapcar (lambda (item) (plist-get item :content))
                                   (contextls-test--items))
                           '("from Emacs" "from the command line"))))
        (ignore-errors (contextls-shutdown (directory-file-name root)))
        (call-process contextls-test--server nil nil nil "daemon" "stop")
        (delete-directory runtime t)))))

(provide 'contextls-test)
;;; contextls-test.el ends here
