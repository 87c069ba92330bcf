;;; contextls.el --- Keep the LLM context of your project with contextls  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers

;; Author: the contextls developers
;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; contextls keeps a bounded window of context for an LLM: regions, files,
;; definitions, errors and REPL transcripts you mark, counted in exact
;; tokens.  What no longer fits is archived, never lost: it can be searched
;; and restored.  This package is a thin client of the `contextls' server:
;; it owns no state the server has.
;;
;; Mark with `contextls-add-region', `contextls-add-buffer',
;; `contextls-add-defun', `contextls-add-error',
;; `contextls-add-repl-history', `contextls-add-files' and
;; `contextls-add-text' (a prefix argument pins what is added).  Turn on
;; `contextls-mode' to see the budget in the mode line, and open
;; `contextls-list' to inspect the window.  Use it with `contextls-show',
;; `contextls-copy', `contextls-send-to-gptel', or `contextls-gptel-mode',
;; which puts it into every gptel request.
;;
;; One server runs per project root (`project-current', else
;; `default-directory'), started on the first command.

;;; Code:

(require 'contextls-client)
(require 'contextls-sync)
(require 'contextls-highlight)
(require 'contextls-mode-line)
(require 'contextls-list)

(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-text "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function comint-previous-prompt "comint" (n))
(declare-function eshell-previous-prompt "em-prompt" (n))
(declare-function which-function "which-func" ())
(declare-function dired-get-marked-files "dired" (&optional localp arg filter distinguish-one-marked error))
(declare-function compilation--ensure-parse "compile" (limit))
(declare-function gptel "ext:gptel" (name &optional api-key initial interactivep))
(defvar gptel-mode)

(autoload 'contextls-gptel-mode "contextls-gptel"
  "Attach the contextls window to every gptel request." t)

;;; Customization

(defcustom contextls-repl-inputs 3
  "How many of the last REPL inputs `contextls-add-repl-history' adds.
Each comes with its output."
  :type 'natnum
  :group 'contextls)

(defcustom contextls-search-mode nil
  "How `contextls-search' finds archived items.
Nil lets the server choose: by meaning and by words together (hybrid) when
its semantic search is installed, else by words.  `keyword' matches words
only, `semantic' meaning only.  \\[universal-argument] \\[contextls-search] asks each time."
  :type '(choice (const :tag "The server's default" nil)
                 (const :tag "Words and meaning" hybrid)
                 (const :tag "Meaning" semantic)
                 (const :tag "Words" keyword))
  :group 'contextls)

(defface contextls-match
  '((t :inherit match))
  "Face of what a search hit matched, in its snippet."
  :group 'contextls)

(defconst contextls--methods
  '(contextls/addRegion contextls/addFile contextls/addSymbol contextls/addText
    contextls/addFiles contextls/remove contextls/pin contextls/clear contextls/list
    contextls/render contextls/status contextls/search contextls/restore
    contextls/refresh contextls/forget contextls/configure contextls/symbolAt
    contextls/addSymbolByName contextls/setView contextls/addMap contextls/serverInfo)
  "The server requests this client sends (checked against the schema).")

(defconst contextls--error-codes '((needs-force . -31013))
  "The server's error codes this client acts on (checked against the schema).")

(defconst contextls--window-settings
  '(("maxItems" . integer) ("maxTokens" . integer) ("model" . string)
    ("encoding" "o200k_base" "cl100k_base" "claude-v3" "claude-v4.7" "claude-v4.8"
     "gemma3-estimate" "llama3" "qwen2" "qwen3.5" "tekken")
    ("evictionPolicy" "fifo" "relevance")
    ("maxFileBytes" . integer) ("archiveMaxItems" . integer) ("archiveMaxBytes" . integer)
    ("archiveMaxAgeDays" . number) ("budgetPolicy" "fixed" "adaptive")
    ("task" "general" "coding" "debugging" "research" "complex_analysis")
    ("budgetCeiling" . integer) ("compaction" "off" "outline") ("mapTokens" . integer)
    ("renderOrder" "stable" "chronological"))
  "The window's settings: name, then its type or the values it takes.")

;;; Reporting

(defun contextls--report (result)
  "Say what an add RESULT added and evicted, on one line; return its item."
  (let ((item (plist-get result :item))
        (evicted (contextls--list (plist-get result :evicted)))
        (merged (mapcar #'car (contextls--merged (plist-get result :merged)))))
    (message "contextls: %s%s%s"
             (if (and (eq (plist-get result :deduplicated) t) (null merged))
                 (format "%s was already in the window; it is the newest now"
                         (contextls--describe item))
               (format "added %s" (contextls--describe item)))
             (if merged (format "; it holds %s now" (string-join merged ", ")) "")
             (if evicted (concat "; " (contextls--evictions-message evicted)) ""))
    item))

;;; Adding

(defun contextls--add (method params &optional root)
  "Send the add METHOD with PARAMS to ROOT's server, report it, return the item."
  (contextls--report (contextls--request method params root)))

;;;###autoload
(defun contextls-add-region (beg end &optional pin)
  "Add the region from BEG to END to the context; a prefix argument PINs it.
The buffer's text is what is added, unsaved edits included."
  (interactive (if (use-region-p)
                   (list (region-beginning) (region-end) current-prefix-arg)
                 (user-error "Mark a region first")))
  (unless buffer-file-name
    (user-error "This buffer visits no file; use `contextls-add-buffer' or `contextls-add-text'"))
  (when (string-blank-p (buffer-substring-no-properties beg end))
    (user-error "The region holds only white space; nothing to add"))
  (let ((root (contextls--root)))
    (prog1 (contextls--add-from-buffer
            root (lambda ()
                   (contextls--add :contextls/addRegion
                                   (contextls--workspace-params
                                    root
                                    :uri (contextls--uri buffer-file-name)
                                    :range (contextls--range beg end)
                                    :text (buffer-substring-no-properties beg end)
                                    :language (contextls--language)
                                    :pin (if pin t :json-false))
                                   root)))
      (deactivate-mark))))

;;;###autoload
(defun contextls-add-buffer (&optional pin)
  "Add the current buffer to the context; with a prefix argument, PIN it.
A file buffer is added as its file (as the buffer has it, unsaved edits
included); another buffer as code in its language."
  (interactive "P")
  (let ((root (contextls--root)))
    (if buffer-file-name
        (contextls--add-from-buffer
         root (lambda ()
                (contextls--add :contextls/addFile
                                (contextls--workspace-params
                                 root :uri (contextls--uri buffer-file-name)
                                 :language (contextls--language) :pin (if pin t :json-false))
                                root)))
      (contextls--add :contextls/addText
                      (contextls--workspace-params
                       root :kind "code" :content (contextls--buffer-text)
                       :language (contextls--language)
                       :metadata (list :title (buffer-name))
                       :pin (if pin t :json-false))
                      root))))

;;; Definitions, outlines and the map

(defconst contextls--container-kinds
  '("class" "struct" "interface" "enum" "trait" "impl" "module" "namespace" "union")
  "The kinds of definition that hold others.
As an outline, they show their members' signatures.")

(defun contextls--symbol-at-point (root)
  "Ask the server of ROOT for the definition around point; return its answer.
Its `:symbol' (name, kind, lines), or nil with the `:reason'; `:language' is
nil when the server does not parse this file's language.  The buffer must be
open on the server (see `contextls--add-from-buffer'), so its unsaved text
is what is parsed."
  (contextls--request :contextls/symbolAt
                      (contextls--workspace-params
                       root :uri (contextls--uri buffer-file-name)
                       :position (contextls--lsp-position (point)))
                      root))

(defun contextls--add-symbol-by-name (root symbol pin &optional outline)
  "Add the definition SYMBOL (from `contextls/symbolAt') of ROOT by its name.
PIN it if asked; OUTLINE shows it as its members' signatures."
  (contextls--add :contextls/addSymbolByName
                  (contextls--workspace-params
                   root :uri (plist-get symbol :uri) :name (plist-get symbol :name)
                   :language (contextls--language) :pin (if pin t :json-false)
                   :outline (if outline t :json-false))
                  root))

(defun contextls--defun-name ()
  "The name of the definition at point, from `which-function' (imenu)."
  (require 'which-func)
  (let ((name (or (ignore-errors (which-function)) (ignore-errors (add-log-current-defun)))))
    (if (consp name) (car name) name)))

(defun contextls--add-defun-here (root pin)
  "Add the definition at point as Emacs sees it, as a region of ROOT.
For a language the server does not parse; PIN it if asked.  The item is a
region that follows its lines."
  (let* ((name (or (contextls--defun-name)
                   (user-error "No definition at point (Emacs finds none here, and contextls does not parse %s)"
                               (file-name-nondirectory buffer-file-name))))
         (bounds (save-excursion
                   (end-of-line)
                   (beginning-of-defun)
                   (let ((beg (point)))
                     (end-of-defun)
                     (skip-chars-backward " \t\n")
                     (cons beg (point))))))
    (contextls--add :contextls/addSymbol
                    (contextls--workspace-params
                     root
                     :uri (contextls--uri buffer-file-name)
                     :name name
                     :symbolKind "Function"
                     :range (contextls--range (car bounds) (cdr bounds))
                     :text (buffer-substring-no-properties (car bounds) (cdr bounds))
                     :language (contextls--language)
                     :pin (if pin t :json-false))
                    root)))

;;;###autoload
(defun contextls-add-defun (&optional pin)
  "Add the definition at point, by its name; with a prefix argument, PIN it.
The server finds the innermost definition holding point (a method, a
function, a class) and keeps it by its qualified name: moved within its
file, the item moves with it; deleted or renamed, it says so.  In a language
the server does not parse, the definition Emacs finds (imenu) is added as
a region of lines."
  (interactive "P")
  (unless buffer-file-name (user-error "This buffer visits no file"))
  (let ((root (contextls--root)))
    (contextls--add-from-buffer
     root (lambda ()
            (let* ((found (contextls--symbol-at-point root))
                   (symbol (plist-get found :symbol)))
              (cond (symbol (contextls--add-symbol-by-name root symbol pin))
                    ((plist-get found :language)
                     (user-error "Contextls: %s" (plist-get found :reason)))
                    (t (contextls--add-defun-here root pin))))))))

;;;###autoload
(defun contextls-add-outline (&optional pin)
  "Add the class at point as its outline, else this file; prefix argument PINs.
An outline keeps signatures, the first line of each docstring and the
lines between definitions, each body one `…' line: a file or class for a
fraction of its tokens.  \\[contextls-expand] shows it whole again."
  (interactive "P")
  (unless buffer-file-name (user-error "This buffer visits no file"))
  (let ((root (contextls--root)))
    (contextls--add-from-buffer
     root (lambda ()
            (let* ((found (contextls--symbol-at-point root))
                   (symbol (plist-get found :symbol)))
              (if (and symbol (member (plist-get symbol :kind) contextls--container-kinds))
                  (contextls--add-symbol-by-name root symbol pin t)
                (contextls--add :contextls/addFile
                                (contextls--workspace-params
                                 root :uri (contextls--uri buffer-file-name)
                                 :language (contextls--language)
                                 :pin (if pin t :json-false) :outline t)
                                root)))))))

(defun contextls--read-item-of-view (prompt root views)
  "Read with PROMPT an item of ROOT shown as one of VIEWS (or any id typed).
The item highlighted at point, if there is one, is taken without asking."
  (let ((here (contextls--item-at)))
    (if here
        (list (cdr here) (car here))
      (let ((items (seq-filter (lambda (item) (member (contextls--view item) views))
                               (contextls--read-items root))))
        (list (contextls--read-item prompt items) root)))))

;;;###autoload
(defun contextls-set-view (id view &optional root)
  "Show the item ID of ROOT as VIEW: \"whole\" or \"outline\".
A whole item may need room: what it evicts is said, with the way back."
  (let* ((root (or root (contextls--root)))
         (result (contextls--request :contextls/setView
                                     (contextls--workspace-params root :ids (vector id)
                                                                  :view view)
                                     root))
         (items (contextls--list (plist-get result :items)))
         (evicted (contextls--list (plist-get result :evicted))))
    (message "contextls: %s%s"
             (if items
                 (format "%s shown %s" (mapconcat #'contextls--describe items ", ")
                         (if (equal view "whole") "whole" "as its outline"))
               (format "%s was already shown %s" id
                       (if (equal view "whole") "whole" "as its outline")))
             (if evicted (concat "; " (contextls--evictions-message evicted)) ""))
    result))

;;;###autoload
(defun contextls-expand (id &optional root)
  "Show the outlined item ID of ROOT whole again.
On a highlighted region, the item there; else one you choose."
  (interactive (let ((root (contextls--root)))
                 (contextls--read-item-of-view "Show whole: " root '("outline"))))
  (contextls-set-view id "whole" root))

;;;###autoload
(defun contextls-outline (id &optional root)
  "Show the item ID of ROOT (a file, or a class added by name) as its outline.
On a highlighted region, the item there; else one you choose."
  (interactive (let ((root (contextls--root)))
                 (contextls--read-item-of-view "Show as outline: " root
                                               '("whole" "definition"))))
  (contextls-set-view id "outline" root))

;;;###autoload
(defun contextls-add-map (query &optional pin)
  "Add a map of the project's definitions, ranked for QUERY; prefix argument PINs.
The definitions the window's code uses come first, and those QUERY names;
each is the line that names it, without its body, fitted to the window's
mapTokens.  It is ranked again as the window and the files change."
  (interactive (list (string-trim (read-string "Map of the project, for (empty: the window's code): "))
                     current-prefix-arg))
  (let ((root (contextls--root)))
    (contextls--add :contextls/addMap
                    (apply #'contextls--workspace-params root :pin (if pin t :json-false)
                           (and query (not (string-empty-p query)) (list :query query)))
                    root)))

(defun contextls--flymake-text (beg end)
  "The Flymake diagnostics between BEG and END.
One line each: `file:line: type: message'."
  (when (and (bound-and-true-p flymake-mode) (fboundp 'flymake-diagnostics))
    (let ((file (if buffer-file-name (file-relative-name buffer-file-name (contextls--root))
                  (buffer-name))))
      (mapconcat (lambda (diag)
                   (format "%s:%d: %s: %s" file
                           (line-number-at-pos (flymake-diagnostic-beg diag) t)
                           (string-remove-prefix ":" (format "%s" (flymake-diagnostic-type diag)))
                           (flymake-diagnostic-text diag)))
                 (flymake-diagnostics beg end) "\n"))))

;;;###autoload
(defun contextls-add-error (&optional pin)
  "Add the errors at point (or in the region); a prefix argument PINs them.
Flymake's diagnostics, or in a compilation buffer the message at point with
the lines that belong to it (the code it quotes, a traceback), its file
names relative to the project."
  (interactive "P")
  (let* ((root (contextls--root))
         (compilation (derived-mode-p 'compilation-mode))
         (bounds (cond ((use-region-p) (cons (region-beginning) (region-end)))
                       (compilation (contextls--compilation-message-bounds))
                       (t (cons (line-beginning-position) (line-end-position)))))
         (text (if compilation
                   (contextls--relative-paths
                    (string-trim (buffer-substring-no-properties (car bounds) (cdr bounds)))
                    root)
                 (contextls--flymake-text (car bounds) (cdr bounds)))))
    (when (or (null text) (string-empty-p text))
      (user-error "No error here: no Flymake diagnostic at point, and not a compilation buffer"))
    (prog1 (contextls--add :contextls/addText
                           (contextls--workspace-params
                            root :kind "error" :content text
                            :pin (if pin t :json-false))
                           root)
      (deactivate-mark))))

(defconst contextls--error-lines 40
  "The most lines of a compilation buffer one error takes.")

(defun contextls--compilation-message-p (&optional pos)
  "Return non-nil if a compilation message is on the line at POS (point)."
  (save-excursion
    (when pos (goto-char pos))
    (text-property-not-all (line-beginning-position) (line-end-position)
                           'compilation-message nil)))

(defun contextls--compilation-message-bounds ()
  "The message at point of a compilation buffer: (BEG . END).
From its line (or the message line above point) to the next message, the
end of the output, or `contextls--error-lines' lines."
  (when (fboundp 'compilation--ensure-parse)
    (compilation--ensure-parse (point-max)))
  (save-excursion
    (beginning-of-line)
    (let ((start (point)))
      (while (and (not (contextls--compilation-message-p)) (not (bobp))
                  (< (count-lines (point) start) contextls--error-lines))
        (forward-line -1))
      (unless (contextls--compilation-message-p) (goto-char start))
      (let ((beg (point)) (lines 1))
        (forward-line 1)
        (while (and (not (eobp)) (< lines contextls--error-lines)
                    (not (contextls--compilation-message-p))
                    (not (looking-at-p "^Compilation \\(?:finished\\|exited\\|interrupted\\)")))
          (forward-line 1)
          (setq lines (1+ lines)))
        (cons beg (point))))))

(defun contextls--relative-paths (text root)
  "TEXT with the file names under ROOT written relative to it."
  (replace-regexp-in-string (regexp-quote (file-name-as-directory root)) "" text t t))

(defun contextls--repl-start ()
  "Where the last `contextls-repl-inputs' inputs of this REPL buffer begin."
  (save-excursion
    (goto-char (point-max))
    (cond ((derived-mode-p 'eshell-mode)
           (eshell-previous-prompt contextls-repl-inputs))
          (t (comint-previous-prompt contextls-repl-inputs)))
    (line-beginning-position)))

;;;###autoload
(defun contextls-add-repl-history (&optional pin)
  "Add the region, or the last REPL inputs and outputs; prefix argument PINs.
Works in comint buffers (shells, inferior languages) and eshell; how many
inputs is `contextls-repl-inputs'."
  (interactive "P")
  (unless (derived-mode-p 'comint-mode 'eshell-mode)
    (user-error "Not a REPL buffer (comint or eshell)"))
  (let* ((beg (if (use-region-p) (region-beginning) (contextls--repl-start)))
         (end (if (use-region-p) (region-end) (point-max)))
         (text (string-trim-right (buffer-substring-no-properties beg end))))
    (when (string-empty-p (string-trim text)) (user-error "Nothing to add"))
    (prog1 (contextls--add :contextls/addText
                           (contextls--workspace-params
                            (contextls--root) :kind "repl-history" :content text
                            :metadata (list :source (buffer-name))
                            :pin (if pin t :json-false)))
      (deactivate-mark))))

;;;###autoload
(defun contextls-add-text (text &optional pin)
  "Add TEXT, read from the minibuffer; with a prefix argument, PIN it."
  (interactive (list (read-string "Text for the context: ") current-prefix-arg))
  (when (string-empty-p (string-trim text)) (user-error "Nothing to add"))
  (contextls--add :contextls/addText
                  (contextls--workspace-params
                   (contextls--root) :kind "text" :content text :pin (if pin t :json-false))))

;;; Adding many files at once

(defun contextls--file-target (name)
  "The addFiles target for NAME: a file or folder, or a glob when it has wildcards."
  (if (and (string-match-p "[*?[]" name) (not (file-exists-p name)))
      (list :glob (if (file-name-absolute-p name) (expand-file-name name) name))
    (list :uri (contextls--uri (directory-file-name (expand-file-name name))))))

(defun contextls--read-file-targets ()
  "The files and folders to add: Dired's marked ones, or one read.
A glob may be typed."
  (if (derived-mode-p 'dired-mode)
      (dired-get-marked-files)
    ;; RET on the directory offered means that directory, not this buffer's file.
    (list (read-file-name "Add file, folder or glob: " nil default-directory nil))))

(defun contextls--files-report (result)
  "Say what an addFiles RESULT added, evicted, skipped and refused, on one line."
  (let ((items (contextls--list (plist-get result :items)))
        (evicted (contextls--list (plist-get result :evicted)))
        (skipped (contextls--list (plist-get result :skipped)))
        (refused (contextls--list (plist-get result :refused))))
    (message "contextls: %s"
             (string-join
              (delq nil
                    (list (format "added %s (%s)%s" (contextls--plural (length items) "item")
                                  (contextls--plural (plist-get result :tokens) "token")
                                  (if (<= 1 (length items) 4)
                                      (concat ": " (mapconcat (lambda (item) (plist-get item :label))
                                                              items ", "))
                                    ""))
                          (let ((merged (contextls--merged (plist-get result :merged))))
                            (and merged
                                 (mapconcat (lambda (merge)
                                              (format "%s merged into %s" (car merge) (cdr merge)))
                                            merged ", ")))
                          (and evicted (contextls--evictions-message evicted))
                          (and skipped
                               (format "skipped %s" (mapconcat
                                                     (lambda (s) (format "%s (%s)"
                                                                         (plist-get s :path)
                                                                         (plist-get s :reason)))
                                                     skipped ", ")))
                          (and refused
                               (format "refused %s" (mapconcat
                                                     (lambda (r) (format "%s: %s"
                                                                         (plist-get r :target)
                                                                         (plist-get r :message)))
                                                     refused ", ")))))
              "; "))
    result))

;;;###autoload
(defun contextls-add-files (names &optional pin)
  "Add the files, folders or globs NAMES as one set; a prefix argument PINs them.
In Dired, the marked files and folders (or the one at point); elsewhere one
read from the minibuffer.  The server expands folders (git's files, without
hidden files, binaries or credentials).  When making room would evict more
than half of the window, it asks first, showing what would go.  One file is
added as `contextls-add-buffer' adds it (its buffer's text, if it has one):
an add of one thing slides the window without asking."
  (interactive (list (contextls--read-file-targets) current-prefix-arg))
  (if (and (= (length names) 1) (file-regular-p (car names)))
      (contextls--add-one-file (expand-file-name (car names)) pin)
    (contextls--add-set names pin)))

(defun contextls--add-one-file (file pin)
  "Add FILE, from its buffer when it is visited; PIN it if asked."
  (let ((buffer (find-buffer-visiting file)))
    (if buffer
        (with-current-buffer buffer (contextls-add-buffer pin))
      (let ((root (let ((default-directory (file-name-directory file))) (contextls--root))))
        (contextls--add :contextls/addFile
                        (contextls--workspace-params root :uri (contextls--uri file)
                                                     :pin (if pin t :json-false))
                        root)))))

(defun contextls--add-set (names pin)
  "Add the files, folders or globs NAMES as one set; PIN them if asked.
See `contextls-add-files'."
  (let* ((root (contextls--root))
         (params (contextls--workspace-params
                  root :targets (vconcat (mapcar #'contextls--file-target names))
                  :pin (if pin t :json-false))))
    (condition-case err
        (contextls--files-report (contextls--send :contextls/addFiles params root))
      (jsonrpc-error
       (let ((code (contextls--error-code err))
             (data (contextls--error-data err)))
         (cond
          ((eql code (alist-get 'needs-force contextls--error-codes))
           (if (yes-or-no-p
                (format "Adding %s (%s) evicts %s; add them? "
                        (contextls--plural (length (plist-get data :items)) "item")
                        (contextls--plural (plist-get data :tokens) "token")
                        (mapconcat #'contextls--describe (plist-get data :evicted) ", ")))
               (contextls--files-report
                (contextls--request :contextls/addFiles (append params '(:force t)) root))
             (message "contextls: nothing was added")
             nil))
          (t (user-error "Contextls: %s" (contextls--error-message err)))))))))

;;; The rendered context

(defun contextls--render (&optional root max-tokens)
  "The render result (markdown) of the window of ROOT, within MAX-TOKENS if given."
  (let ((root (or root (contextls--root))))
    (contextls--request :contextls/render
                        (apply #'contextls--workspace-params root :format "markdown"
                               (and max-tokens (list :maxTokens max-tokens)))
                        root)))

(defvar contextls-context-mode-font-lock-keywords
  '(("^##+ .*$" . 'font-lock-function-name-face)
    ("^```.*$" . 'font-lock-comment-face))
  "What `contextls-context-mode' highlights: headings and fences.")

(defvar-local contextls--context-root nil
  "The root whose window this buffer shows.")

(define-derived-mode contextls-context-mode special-mode "contextls-context"
  "The rendered context window of a project, as a model is given it.
It follows the window as it changes; \\<contextls-context-mode-map>\\[quit-window] quits."
  (setq font-lock-defaults '(contextls-context-mode-font-lock-keywords t))
  (setq-local revert-buffer-function
              (lambda (&rest _) (contextls--show-text (plist-get (contextls--render
                                                                  contextls--context-root)
                                                                 :text)))))

(defun contextls--show-text (text)
  "Put TEXT in the current context buffer, keeping point's line."
  (let ((inhibit-read-only t) (line (line-number-at-pos)))
    (erase-buffer)
    (insert text)
    (goto-char (point-min))
    (forward-line (1- line))))

(defun contextls--update-context-buffer (root)
  "Render ROOT's window again into its context buffer, asynchronously."
  (let* ((buffer (get-buffer "*contextls-context*"))
         (window (contextls--window-of root))
         (conn (and window (contextls--window-connection window))))
    (when (and (buffer-live-p buffer) conn (eq (contextls--state conn) 'ready)
               (jsonrpc-running-p conn)
               (equal (buffer-local-value 'contextls--context-root buffer) root))
      (jsonrpc-async-request
       conn :contextls/render (contextls--workspace-params root :format "markdown")
       :success-fn (lambda (result)
                     (when (buffer-live-p buffer)
                       (with-current-buffer buffer
                         (contextls--show-text (plist-get result :text)))))
       :error-fn #'ignore :timeout-fn #'ignore))))

(add-hook 'contextls-window-change-functions #'contextls--update-context-buffer)

;;;###autoload
(defun contextls-show ()
  "Show the rendered context in a buffer that follows the window."
  (interactive)
  (let* ((root (contextls--root))
         (text (plist-get (contextls--render root) :text))
         (buffer (get-buffer-create "*contextls-context*")))
    (with-current-buffer buffer
      (contextls-context-mode)
      (setq contextls--context-root root)
      (setq default-directory (file-name-as-directory root))
      (contextls--show-text text)
      (goto-char (point-min)))
    (display-buffer buffer)
    buffer))

;;;###autoload
(defun contextls-copy ()
  "Put the rendered context on the kill ring."
  (interactive)
  (let ((text (plist-get (contextls--render) :text)))
    (kill-new text)
    (message "contextls: copied the context (%s)" (contextls--plural (length text) "character"))
    text))

;;;###autoload
(defun contextls-send-to-gptel ()
  "Insert the rendered context into a gptel chat buffer (gptel is optional).
To put it into every request instead, see `contextls-gptel-mode'."
  (interactive)
  (unless (require 'gptel nil t)
    (user-error "The gptel package is not installed; use `contextls-copy' instead"))
  (let ((text (plist-get (contextls--render) :text))
        (buffer (or (seq-find (lambda (b) (buffer-local-value 'gptel-mode b)) (buffer-list))
                    (gptel "*contextls-chat*"))))
    (with-current-buffer buffer
      (goto-char (point-max))
      (insert text "\n"))
    (pop-to-buffer buffer)))

;;; Items by id

(defun contextls--ordered-table (candidates)
  "A completion table of CANDIDATES, in their own order."
  (lambda (string predicate action)
    (if (eq action 'metadata)
        '(metadata (display-sort-function . identity) (cycle-sort-function . identity))
      (complete-with-action action candidates string predicate))))

(defun contextls--item-candidates (items)
  "Completion candidates `ctx-3  label' for ITEMS, mapped to their ids."
  (mapcar (lambda (item) (cons (format "%s  %s" (plist-get item :id) (plist-get item :label))
                               (plist-get item :id)))
          items))

(defun contextls--read-item (prompt items)
  "Read an item id with PROMPT, completing over ITEMS (any id may be typed)."
  (let* ((candidates (contextls--item-candidates items))
         (choice (completing-read prompt (contextls--ordered-table candidates) nil nil)))
    (or (cdr (assoc choice candidates))
        (car (split-string choice))
        (user-error "No item chosen"))))

(defun contextls--read-items (&optional root)
  "The items in the window of ROOT, read now."
  (let ((root (or root (contextls--root))))
    (contextls--list (plist-get (contextls--request :contextls/list
                                                    (contextls--workspace-params root) root)
                                :items))))

(defun contextls--item-here-or-read (prompt)
  "The item highlighted at point as (ID ROOT), or an id read with PROMPT."
  (let ((here (contextls--item-at)))
    (if here
        (list (cdr here) (car here))
      (list (contextls--read-item prompt (contextls--read-items)) (contextls--root)))))

;;; Search and restore

(defun contextls--found-by (modes)
  "Return how a hit was found, from MODES (the server's names for its ways)."
  (mapconcat (lambda (mode) (pcase mode ("semantic" "meaning") ("keyword" "words") (_ mode)))
             modes "+"))

(defun contextls--search-candidate (hit)
  "A completion candidate for the search HIT: id, label, how it was found, snippet.
What the hit matched is in the face `contextls-match'."
  (let* ((item (plist-get hit :item))
         (head (format "%s  %s  [%s]  " (plist-get item :id) (plist-get item :label)
                       (contextls--found-by (contextls--list (plist-get hit :modes)))))
         (snippet (replace-regexp-in-string "\n" " " (plist-get hit :snippet) t t))
         (text (concat head snippet)))
    (seq-doseq (span (plist-get hit :highlights))
      (let ((start (+ (length head) (elt span 0)))
            (end (+ (length head) (elt span 1))))
        (when (and (<= 0 start end (length text)))
          (add-face-text-property start end 'contextls-match nil text))))
    (cons text (plist-get item :id))))

;;;###autoload
(defun contextls-search (query &optional mode)
  "Search the archive for QUERY and restore the hit you choose.
Hits come in the server's order, best first.  MODE is how to search (see
`contextls-search-mode', the default); with a prefix argument, you are asked."
  (interactive
   (list (let ((query (string-trim (read-string "Search the archive: "))))
           (if (string-empty-p query) (user-error "Nothing to search for") query))
         (if current-prefix-arg
             (intern (completing-read "Search by: " '("hybrid" "semantic" "keyword") nil t))
           contextls-search-mode)))
  (let* ((root (contextls--root))
         (result (contextls--request
                  :contextls/search
                  (apply #'contextls--workspace-params root :query query
                         (and mode (list :mode (symbol-name mode))))
                  root))
         (hits (contextls--list (plist-get result :hits))))
    (when (plist-get result :warning)
      (message "contextls: %s" (plist-get result :warning)))
    (unless hits (user-error "Nothing in the contextls archive matches %s" query))
    (let* ((candidates (mapcar #'contextls--search-candidate hits))
           (choice (completing-read "Restore: " (contextls--ordered-table candidates) nil t)))
      (contextls-restore (cdr (assoc choice candidates)) root))))

;;;###autoload
(defun contextls-restore (id &optional root)
  "Bring the archived item ID back into the window of ROOT.
Like an add of one thing, it slides the window: what it evicts goes to the
archive, and the message names it, with the way back."
  (interactive
   (let ((status (contextls--status (contextls--root))))
     (list (contextls--read-item "Restore item: "
                                 (and (consp status)
                                      (contextls--list (plist-get status :lastEvicted)))))))
  (let* ((root (or root (contextls--root)))
         (result (contextls--request :contextls/restore
                                     (contextls--workspace-params root :ids (vector id))
                                     root)))
    (message "contextls: %s" (contextls--restore-message id result))
    result))

(defun contextls--restore-message (id result)
  "What the restore RESULT of ID did: restored, merged, already there, evicted."
  (let* ((merged (contextls--merged (plist-get result :merged)))
         (already (contextls--list (plist-get result :alreadyInWindow)))
         (restored (seq-remove (lambda (item) (member (plist-get item :id) already))
                               (contextls--list (plist-get result :items))))
         (evicted (contextls--list (plist-get result :evicted))))
    (string-join
     (delq nil
           (list (and restored
                      (concat "restored "
                              (mapconcat
                               (lambda (item)
                                 (let ((from (car (rassoc (plist-get item :id) merged))))
                                   (if from
                                       (format "%s into %s" from (contextls--describe item))
                                     (contextls--describe item))))
                               restored ", ")))
                 (and (or already (not restored))
                      (format "%s is already in the window%s" id
                              (let ((holder (cdr (assoc id merged))))
                                (if holder (format " (in %s)" holder) ""))))
                 (and evicted (contextls--evictions-message evicted))))
     "; ")))

;;; Items: remove, pin, read again, forget

;;;###autoload
(defun contextls-remove (id &optional root)
  "Remove the item ID from the window of ROOT, to the archive.
On a highlighted region, the item there; else one you choose."
  (interactive (contextls--item-here-or-read "Remove item: "))
  (let* ((root (or root (contextls--root)))
         (result (contextls--request :contextls/remove
                                     (contextls--workspace-params root :ids (vector id))
                                     root)))
    (message "contextls: removed %s to the archive"
             (string-join (contextls--list (plist-get result :removed)) ", "))
    result))

;;;###autoload
(defun contextls-pin (id &optional unpin root)
  "Pin the item ID of ROOT so it is never evicted; a prefix argument UNPINs it.
On a highlighted region, the item there; else one you choose."
  (interactive (let ((item (contextls--item-here-or-read
                            (if current-prefix-arg "Unpin item: " "Pin item: "))))
                 (list (car item) current-prefix-arg (cadr item))))
  (let ((root (or root (contextls--root))))
    (prog1 (contextls--request :contextls/pin
                               (contextls--workspace-params root :id id
                                                            :pin (if unpin :json-false t))
                               root)
      (message "contextls: %s %s" (if unpin "unpinned" "pinned") id))))

;;;###autoload
(defun contextls-reread (&optional ids root)
  "Read stale items again from their files: IDS of ROOT, or every stale item.
On a highlighted region, the item there.  An item is stale when the text
it was made of changed in its file (or the file went); it keeps the old
text until it is read again, and a region goes on following its place, so
it reads the lines it covers now.  When the lines around it changed too
much for the server to tell where it is, you are asked instead: to read the
lines it is highlighted on, if a buffer shows it."
  (interactive (let ((here (contextls--item-at)))
                 (and here (list (list (cdr here)) (car here)))))
  (let* ((root (or root (contextls--root)))
         (wanted (seq-filter (lambda (item)
                               (if ids (member (plist-get item :id) ids)
                                 (eq (plist-get item :stale) t)))
                             (contextls--read-items root)))
         (lost (seq-filter #'contextls--lost-p wanted))
         (placed (seq-remove #'contextls--lost-p wanted))
         (result nil))
    (when (or placed (null lost))
      (setq result (contextls--request
                    :contextls/refresh
                    (apply #'contextls--workspace-params root
                           (and (or ids lost)
                                (list :ids (vconcat (mapcar (lambda (item) (plist-get item :id))
                                                            placed)))))
                    root))
      (let ((items (contextls--list (plist-get result :refreshed))))
        (message "contextls: %s" (if items
                                     (format "read %s again"
                                             (mapconcat #'contextls--describe items ", "))
                                   "no stale item"))))
    (dolist (item lost) (contextls--reread-lost item root))
    result))

(defun contextls--lost-p (item)
  "Return non-nil if the stale ITEM lost its place: its lines are not known."
  (and (eq (plist-get item :stale) t)
       (equal (plist-get (plist-get item :metadata) :staleReason) "lost")))

(defun contextls--highlighted-lines (root id)
  "Return where item ID of ROOT is highlighted: (BUFFER START-LINE . END-LINE).
Nil when no buffer shows it."
  (when-let ((overlay (car (contextls--overlays-of root id))))
    (with-current-buffer (overlay-buffer overlay)
      (save-excursion
        (save-restriction
          (widen)
          (let ((start (overlay-start overlay))
                (end (max (overlay-start overlay) (1- (overlay-end overlay)))))
            ;; A highlight that begins at the end of a line (text was typed
            ;; before it) shows from the next line on: so do its lines.
            (goto-char start)
            (when (and (eolp) (not (bolp)) (< start end))
              (setq start (1+ start)))
            (cons (current-buffer)
                  (cons (line-number-at-pos start t) (line-number-at-pos end t)))))))))

(defun contextls--reread-lost (item root)
  "Ask what to read for ITEM of ROOT, whose place the server cannot tell."
  (let ((where (contextls--highlighted-lines root (plist-get item :id))))
    (if (and where
             (y-or-n-p (format "%s: the lines around it changed too, so the server cannot tell where it is now; read lines %d-%d, where it is highlighted? "
                               (contextls--describe item) (cadr where) (cddr where))))
        (contextls--reread-at item root (car where) (cadr where) (cddr where))
      (message "contextls: %s was not read again: the lines around it changed too, so the server cannot tell where it is now; mark its lines again (%s), or remove it (%s)"
               (contextls--describe item)
               (substitute-command-keys "\\[contextls-add-region]")
               (substitute-command-keys "\\[contextls-remove]")))))

(defun contextls--reread-at (item root buffer start end)
  "Read lines START to END of BUFFER (ROOT) in place of ITEM, which lost its place.
The item goes to the archive; the lines come in as a new item, pinned if it was."
  (let ((id (plist-get item :id)))
    (contextls--request :contextls/remove (contextls--workspace-params root :ids (vector id)) root)
    (with-current-buffer buffer
      (save-excursion
        (save-restriction
          (widen)
          (goto-char (point-min))
          (forward-line (1- start))
          (let ((beg (point)))
            (forward-line (1+ (- end start)))
            (let ((added (plist-get
                          (contextls--add-from-buffer
                           root (lambda ()
                                  (contextls--request
                                   :contextls/addRegion
                                   (contextls--workspace-params
                                    root :uri (contextls--uri buffer-file-name)
                                    :range (contextls--range beg (point))
                                    :text (buffer-substring-no-properties beg (point))
                                    :language (contextls--language)
                                    :pin (if (eq (plist-get item :pinned) t) t :json-false))
                                   root)))
                          :item)))
              (message "contextls: read %s again as %s; %s, which lost its place, is in the archive"
                       (plist-get added :label) (contextls--describe added) id)
              added)))))))

;;;###autoload
(defun contextls-forget (id &optional query root)
  "Remove the item ID of ROOT for good: from the window, the archive and the file.
With a prefix argument, forget every item whose text holds all the words of
QUERY instead.  It asks first: this cannot be undone."
  (interactive
   (if current-prefix-arg
       (list nil (read-string "Forget every item holding: "))
     (list (contextls--read-item "Forget item: " (contextls--read-items)))))
  (let* ((root (or root (contextls--root)))
         (what (if query (list :query query) (list :ids (vector id))))
         (planned (contextls--list
                   (plist-get (contextls--request
                               :contextls/forget
                               (apply #'contextls--workspace-params root :dryRun t what)
                               root)
                              :forgotten))))
    (cond
     ((null planned) (message "contextls: nothing matches; nothing was forgotten") nil)
     ((yes-or-no-p (format "Forget %s for good? " (mapconcat #'contextls--describe planned ", ")))
      (let ((result (contextls--request :contextls/forget
                                        (apply #'contextls--workspace-params root what)
                                        root)))
        (message "contextls: forgot %s" (contextls--plural (length planned) "item"))
        result)))))

;;;###autoload
(defun contextls-clear (&optional keep-pinned)
  "Clear the window into the archive, after asking.
With a prefix argument, KEEP-PINNED items."
  (interactive "P")
  (when (yes-or-no-p (if keep-pinned "Clear the context window, keeping pinned items? "
                       "Clear the whole context window? "))
    (let ((result (contextls--request :contextls/clear
                                      (contextls--workspace-params
                                       (contextls--root)
                                       :keepPinned (if keep-pinned t :json-false)))))
      (message "contextls: cleared %s to the archive"
               (contextls--plural (plist-get result :cleared) "item"))
      result)))

;;; The window's settings

(defun contextls--read-setting-value (name)
  "Read a value for the window setting NAME, as its type wants."
  (let ((kind (cdr (assoc name contextls--window-settings))))
    (pcase kind
      ('integer (read-number (format "%s: " name)))
      ('number (read-number (format "%s: " name)))
      ('string (if (equal name "model") (contextls--read-model (contextls--root))
                 (read-string (format "%s: " name))))
      (_ (completing-read (format "%s: " name) kind nil t)))))

(defun contextls--configure-message (result)
  "Say what the configure RESULT changed, and the budget after it."
  (let* ((status (plist-get result :status))
         (changed (contextls--list (plist-get result :changed)))
         (evicted (contextls--list (plist-get result :evicted)))
         (reason (contextls--budget-reason status)))
    (message "contextls: %s; budget %s tokens of %s%s%s"
             (if changed
                 (mapconcat (lambda (name)
                              (format "%s is %s" name
                                      (plist-get (plist-get result :settings)
                                                 (intern (concat ":" name)))))
                            changed ", ")
               "nothing changed")
             (contextls--kilo (contextls--budget status))
             (contextls--model-words status)
             (if reason (format " (%s)" reason) "")
             (if evicted (concat "; " (contextls--evictions-message evicted)) ""))))

;;;###autoload
(defun contextls-configure (name value &optional reset)
  "Set the window setting NAME to VALUE; with a prefix argument, RESET it.
The window keeps its settings; every client and the command line see them."
  (interactive
   (let ((name (completing-read (if current-prefix-arg "Reset setting: " "Setting: ")
                                (mapcar #'car contextls--window-settings) nil t)))
     (list name (unless current-prefix-arg (contextls--read-setting-value name))
           current-prefix-arg)))
  (let* ((root (contextls--root))
         (params (contextls--workspace-params
                  root
                  :settings (if reset (make-hash-table)
                              (list (intern (concat ":" name)) value))
                  :reset (if reset (vector name) [])))
         (result
          (condition-case err
              (contextls--send :contextls/configure params root)
            (jsonrpc-error
             (if (eql (contextls--error-code err)
                      (alist-get 'needs-force contextls--error-codes))
                 (contextls--configure-if-agreed name params root
                                                 (contextls--error-data err))
               (user-error "Contextls: %s" (contextls--error-message err)))))))
    (when result
      (contextls--configure-message result))
    result))

(defun contextls--configure-if-agreed (name params root planned)
  "Ask before setting NAME evicts more than half of ROOT's window.
PLANNED is the server's plan of the change (PARAMS); on yes the change
is sent again with force, and its result returned; on no, nil."
  (let* ((evicted (contextls--list (plist-get planned :evicted)))
         (held (plist-get (plist-get planned :status) :itemCount)))
    (if (yes-or-no-p
         (format "Setting %s evicts %s of the window's %s (%s); set it? "
                 name (length evicted) (contextls--plural held "item")
                 (mapconcat #'contextls--describe evicted ", ")))
        (contextls--request :contextls/configure (append params '(:force t)) root)
      (message "contextls: nothing was changed")
      nil)))

;;;###autoload
(defun contextls-set-task (task)
  "Tell the window the TASK at hand; an adaptive budget grows or shrinks with it."
  (interactive (list (completing-read "Task: " (cdr (assoc "task" contextls--window-settings))
                                      nil t)))
  (contextls-configure "task" task))

;;;###autoload
(defun contextls-set-budget-policy (policy)
  "Set the budget POLICY: `fixed' (maxTokens) or `adaptive'.
An adaptive budget follows the task (`contextls-set-task') and how complex
the window's content is, up to budgetCeiling."
  (interactive (list (completing-read "Budget policy: "
                                      (cdr (assoc "budgetPolicy" contextls--window-settings))
                                      nil t)))
  (contextls-configure "budgetPolicy" policy))

(defun contextls--read-model (root)
  "Read a model's name, completing over the models ROOT's server can count for.
Each says whether its counts are exact; any name the server reads may be typed."
  (let* ((choices (contextls--list
                   (plist-get (contextls--request :contextls/serverInfo
                                                  (contextls--workspace-params root) root)
                              :models)))
         (current (contextls--model (contextls--status root)))
         (annotate (lambda (name)
                     (when-let ((choice (seq-find (lambda (c) (equal (plist-get c :name) name))
                                                  choices)))
                       (let ((missing (plist-get choice :unavailable)))
                         (format "  %s, %s%s" (plist-get choice :encoding)
                                 (plist-get choice :label)
                                 (if (and (stringp missing) (not (string-empty-p missing)))
                                     (format " (not here: %s)" missing) ""))))))
         (completion-extra-properties (list :annotation-function annotate))
         (name (completing-read (format "Count in the tokens of (now %s): " current)
                                (contextls--ordered-table
                                 (mapcar (lambda (c) (plist-get c :name)) choices))
                                nil nil nil nil current)))
    (if (string-empty-p (string-trim name)) (user-error "No model chosen") (string-trim name))))

;;;###autoload
(defun contextls-set-model (model &optional root)
  "Count the window of ROOT in the tokens of MODEL, from the server's list.
The budget, every item's count and the render are then in its tokens; the
mode line names it, with `~' when its counts are an estimate."
  (interactive (list (contextls--read-model (contextls--root))))
  (let ((default-directory (if root (file-name-as-directory root) default-directory)))
    (contextls-configure "model" model)))

;;;###autoload
(defun contextls-set-compaction (value)
  "Set outline compaction to VALUE: \"outline\" or \"off\".
With \"outline\", an add that needs room first shows the oldest unpinned
files (and classes added by name) as their outlines, and evicts only if
that is not enough."
  (interactive (list (completing-read "Compaction before eviction: "
                                      (cdr (assoc "compaction" contextls--window-settings))
                                      nil t)))
  (contextls-configure "compaction" value))

;;; Keys

;;;###autoload
(defvar contextls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "r" #'contextls-add-region)
    (define-key map "b" #'contextls-add-buffer)
    (define-key map "f" #'contextls-add-defun)
    (define-key map "e" #'contextls-add-error)
    (define-key map "h" #'contextls-add-repl-history)
    (define-key map "t" #'contextls-add-text)
    (define-key map "d" #'contextls-add-files)
    (define-key map "l" #'contextls-list)
    (define-key map "s" #'contextls-show)
    (define-key map "w" #'contextls-copy)
    (define-key map "/" #'contextls-search)
    (define-key map "R" #'contextls-restore)
    (define-key map "k" #'contextls-remove)
    (define-key map "p" #'contextls-pin)
    (define-key map "C" #'contextls-clear)
    (define-key map "u" #'contextls-reread)
    (define-key map "F" #'contextls-forget)
    (define-key map "c" #'contextls-configure)
    (define-key map "T" #'contextls-set-task)
    (define-key map "g" #'contextls-gptel-mode)
    (define-key map "o" #'contextls-add-outline)
    (define-key map "v" #'contextls-expand)
    (define-key map "V" #'contextls-outline)
    (define-key map "m" #'contextls-add-map)
    (define-key map "M" #'contextls-set-model)
    (define-key map "O" #'contextls-set-compaction)
    map)
  "Keys for the contextls commands; bind it to a prefix key.
For example: (global-set-key (kbd \"C-c x\") \\='contextls-command-map).")
;;;###autoload
(fset 'contextls-command-map contextls-command-map)

;;; The mode

;;;###autoload
(define-minor-mode contextls-mode
  "Show the contextls budget of the current project in the mode line.
With `contextls-connect-on-visit', visiting a file of a project connects to
its window, so its budget shows at once, and its regions are highlighted."
  :global t
  :group 'contextls
  (if contextls-mode
      (progn
        (unless (member contextls--mode-line-entry mode-line-misc-info)
          (push contextls--mode-line-entry mode-line-misc-info))
        (add-hook 'find-file-hook #'contextls--connect-visited-file)
        (dolist (buffer (buffer-list))
          (with-current-buffer buffer (contextls--connect-visited-file))))
    (setq mode-line-misc-info (delete contextls--mode-line-entry mode-line-misc-info))
    (remove-hook 'find-file-hook #'contextls--connect-visited-file))
  (force-mode-line-update t))

(provide 'contextls)
;;; contextls.el ends here
